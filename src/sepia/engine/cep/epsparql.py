"""EP-SPARQL over triple occurrences in the engine (seed 003, section 4.2).

An EP-SPARQL query reads the union of its input streams as triple occurrences: a BGP's
solution may join triples from different elements, stamped with the least start and the
greatest end of the occurrences used. ``Occurrences`` keeps every element seen (the state,
as rows) and, per occurrence BGP, its solutions so far, indexed by the values they bind:
on each arrival only the solutions using a new occurrence are computed (they are the ones
that end at that arrival), by a delta join over the BGP's triple patterns. The operators
below are ``sepia.semantics.epsparql``'s on encoded mappings; their filter conditions are
``Keep`` functions over whole batches (one pyoxigraph call per batch).

Without windows every past occurrence can still join a later one, so nothing is forgotten,
unless a top-level ``getDURATION() < d`` says which occurrences no later mapping can hold
(``Horizon``).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

import pyoxigraph as ox

from sepia.engine.cep.intervals import EventMapping, Keep, covering, pairs, values_at
from sepia.engine.cep.ranges import PairTest, RangeIndex
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.numeric import value_of
from sepia.engine.r2r.scan import Constant
from sepia.engine.rows import Row, compatible
from sepia.rdf.time import TimeKind
from sepia.rdf.vocabulary import XSD

EncodedTriple = tuple[int, int, int]
Matcher = Callable[[po.PhysicalPlan, int, tuple[EncodedTriple, ...]], Iterable[Row]]
"""A pattern's plan over one event graph (its time and encoded triples)."""
OccurrenceRow = tuple[int, int, int, int | None, int | None, int | None]
"""(element number, from, to, s, p, o): one triple of one element (s None: no triple)."""


@dataclass(frozen=True, slots=True)
class OccurrenceLeaf:
    """A BGP over triple occurrences: one plan per triple pattern, each matched against one
    element's graph; ``number`` names the leaf's solutions in ``Occurrences``."""

    patterns: tuple[po.PhysicalPlan, ...]
    number: int


Positions = array
"""Positions in a ``Solutions``' mappings, as machine integers (``array("q")``)."""
NO_POSITIONS = array("q")


@dataclass(slots=True)
class Solutions:
    """One collection of event mappings in arrival (end) order, with an index by value of
    the slots scope lookups (a right partner's mapping) have asked for, so a lookup touches
    only its bucket. A slot is indexed when first asked for (W8's lookups ask for the
    company, never a price: indexing every slot of every mapping cost more than the
    lookups)."""

    mappings: list[EventMapping] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    by_value: dict[tuple[int, int], Positions] = field(default_factory=dict)
    """Positions by (slot, value): machine integers, which the dictionary's collection
    need not walk (they are no term ids)."""
    indexed: set[int] = field(default_factory=set)
    """The slots ``by_value`` covers (for every mapping)."""
    always: set[int] | None = None
    """Slots every mapping binds (only their buckets hold every compatible mapping)."""
    ever: set[int] = field(default_factory=set)
    """Slots some mapping binds: only these can make a mapping incompatible with a scope."""
    ranges: dict[PairTest, RangeIndex] = field(default_factory=dict)
    """The range indexes a SEQ's FILTER has asked for (``ranges``), kept up to date."""

    def add(self, m: EventMapping) -> None:
        """One more mapping, ending no earlier than the last. A mapping added twice (an
        element repeating a triple) is kept twice: every operator reads them as a set."""
        position = len(self.mappings)
        self.mappings.append(m)
        self.ends.append(m[2])
        row = m[0]
        if self.always is None:
            self.always = {slot for slot, value in enumerate(row) if value is not None}
        elif any(row[slot] is None for slot in self.always):
            self.always = {slot for slot in self.always if row[slot] is not None}
        if len(self.ever) < len(row):
            self.ever.update(slot for slot, value in enumerate(row) if value is not None)
        for slot in self.indexed:
            value = row[slot]
            if value is not None:
                self._position(slot, value).append(position)
        for index in self.ranges.values():
            index.add(position, row)

    def without(self, bound: int) -> Solutions:
        """The mappings starting after ``bound`` (their ``always`` may only be wider: the
        old set, a subset of it, stays correct)."""
        kept = Solutions(indexed=set(self.indexed), always=self.always, ever=set(self.ever))
        kept.mappings = [m for m in self.mappings if m[1] > bound]
        kept.ends = [m[2] for m in kept.mappings]
        for slot in kept.indexed:
            kept._index(slot)
        for test in self.ranges:
            kept.range(test)
        return kept

    def range(self, test: PairTest) -> RangeIndex:
        """The mappings indexed under ``test`` (built when first asked for)."""
        found = self.ranges.get(test)
        if found is None:
            found = self.ranges[test] = RangeIndex(test)
            for position, m in enumerate(self.mappings):
                found.add(position, m[0])
        return found

    def taken(
        self, positions: Iterable[int], before: int, mu: Row | None, since: int | None
    ) -> list[EventMapping]:
        """The mappings at ``positions`` (a range index's) that ``select(before, mu, None,
        since)`` would return (mu None: all of them are known compatible with it)."""
        mappings = self.mappings
        return [
            m for m in map(mappings.__getitem__, positions)
            if m[2] <= before and (since is None or m[1] > since)
            and (mu is None or compatible(m[0], mu))
        ]

    def _index(self, slot: int) -> None:
        """Index every mapping by its value of ``slot``."""
        self.indexed.add(slot)
        for position, m in enumerate(self.mappings):
            value = m[0][slot]
            if value is not None:
                self._position(slot, value).append(position)

    def _position(self, slot: int, value: int) -> Positions:
        """The positions of the mappings with ``value`` in ``slot`` (made when first met)."""
        found = self.by_value.get((slot, value))
        if found is None:
            found = self.by_value[slot, value] = array("q")
        return found

    def select(
        self, before: int, mu: Row | None, exact: int | None, since: int | None = None
    ) -> list[EventMapping]:
        """The mappings ending by ``before`` (at ``exact``, when given), compatible with mu,
        starting after ``since`` when given (a mapping ending by it starts by it too)."""
        ends = self.ends
        if exact is not None:
            if exact > before:
                return []
            low, high = bisect_left(ends, exact), bisect_right(ends, exact)
        else:
            low = 0 if since is None else bisect_right(ends, since)
            high = bisect_right(ends, before)
        keyed, bucket = (None, None) if mu is None or exact is not None else self._bucket(mu)
        found: Iterable[EventMapping]
        if bucket is None:
            found = self.mappings[low:high]
        else:
            chosen = bucket[bisect_left(bucket, low) : bisect_left(bucket, high)]
            found = [self.mappings[i] for i in chosen]
        if since is not None:
            found = [m for m in found if m[1] > since]
        if mu is None or not any(mu[s] is not None for s in self.ever if s != keyed):
            return list(found)  # the bucket's slot is the only one both may bind
        return [m for m in found if compatible(m[0], mu)]

    def _bucket(self, mu: Row) -> tuple[int | None, Positions | None]:
        """The slot every mapping binds that narrows most for mu, and the positions of the
        mappings agreeing with mu there ((None, None): no such slot)."""
        best: tuple[int | None, Positions | None] = (None, None)
        for slot in self.always or ():
            value = mu[slot]
            if value is not None:
                if slot not in self.indexed:
                    self._index(slot)
                bucket = self.by_value.get((slot, value), NO_POSITIONS)
                if best[1] is None or len(bucket) < len(best[1]):
                    best = (slot, bucket)
        return best


class Occurrences:
    """Every element seen, and each occurrence BGP's solutions (``OccurrenceLeaf.number``).
    ``layout``: the query's row width and hidden slots; None matches every pattern through
    its plan (the ``Matcher``: a partitioned query's rows are its partition's only), else
    one-pattern scans equal up to variable names are matched once per element
    (``AlikePatterns``)."""

    def __init__(
        self, leaves: Sequence[OccurrenceLeaf], layout: Layout | None = None
    ) -> None:
        self.leaves = {leaf.number: leaf for leaf in leaves}
        self.layout = layout
        self.alike, self.planned = alike_patterns(leaves, layout)
        self.patterns = [(leaf.number, i) for leaf in leaves for i in range(len(leaf.patterns))]
        """(leaf number, pattern position) of every pattern."""
        self.elements: list[tuple[int, int, tuple[EncodedTriple, ...]]] = []
        self.per_pattern = {
            leaf.number: [Solutions() for _ in leaf.patterns] for leaf in leaves
        }
        self.solutions = {
            n: ps[0] if len(ps) == 1 else Solutions() for n, ps in self.per_pattern.items()
        }
        """A BGP of one triple pattern shares that pattern's occurrences (not a copy)."""
        self.transient: frozenset[int] = frozenset()
        """One-pattern BGPs read only at each arrival, at that arrival (a chain's right
        operands and base, ``seq_chains``): only their last occurrences are kept
        (``fresh``)."""
        self.fresh: dict[int, list[EventMapping]] = {}

    def add(
        self, elements: Sequence[tuple[int, int, tuple[EncodedTriple, ...]]], match: Matcher
    ) -> None:
        """Elements ending now: their occurrences, and the BGP solutions that use them."""
        self.elements += elements
        new = self._matched(elements, match)
        for number, patterns in self.per_pattern.items():
            if number in self.transient:
                self.fresh[number] = new[number, 0]
                continue
            deltas = [new[number, i] for i in range(len(patterns))]
            for delta, known in zip(deltas, patterns, strict=True):
                for m in delta:
                    known.add(m)
            if len(patterns) == 1:
                continue  # its occurrences, just added, are the BGP's solutions
            found = self.solutions[number]
            every = [known.mappings for known in patterns]
            for m in sorted(delta_join(every, deltas), key=lambda m: m[2]):
                found.add(m)

    def _matched(
        self, elements: Sequence[tuple[int, int, tuple[EncodedTriple, ...]]], match: Matcher
    ) -> dict[tuple[int, int], list[EventMapping]]:
        """Each (leaf number, pattern position)'s occurrences in ``elements``, in element
        order."""
        new: dict[tuple[int, int], list[EventMapping]] = {key: [] for key in self.patterns}
        for start, end, triples in elements:
            for group in self.alike:  # a repeated triple's mappings: one kept (``add``)
                group.add_rows(triples, start, end, new)
            for number, i in self.planned:
                plan = self.leaves[number].patterns[i]
                new[number, i].extend((row, start, end) for row in match(plan, end, triples))
        return new

    def select(
        self, leaf: OccurrenceLeaf, before: int, mu: Row | None, exact: int | None,
        since: int | None = None,
    ) -> list[EventMapping]:
        if leaf.number in self.transient:  # read at the last arrival only, whole
            assert exact is not None and mu is None
            return [] if exact > before else self.ending(leaf.number, exact, since)
        return self.solutions[leaf.number].select(before, mu, exact, since)

    def ending(self, number: int, t: int, since: int | None) -> list[EventMapping]:
        """A transient BGP's mappings ending at t (of its last arrival's occurrences),
        starting after ``since``."""
        fresh = self.fresh.get(number, ())
        if since is None:
            return [m for m in fresh if m[2] == t]
        return [m for m in fresh if m[2] == t and m[1] > since]

    def rows(self) -> list[OccurrenceRow]:
        """State rows: one per triple of each element (an empty element: one row of Nones)."""
        return [
            (number, start, end, *triple)
            for number, (start, end, triples) in enumerate(self.elements)
            for triple in (triples or ((None, None, None),))
        ]

    def clear(self) -> None:
        transient = self.transient
        self.__init__(list(self.leaves.values()), self.layout)  # type: ignore[misc]
        self.transient = transient

    def forget(self, bound: int) -> None:
        """Drop the elements starting by ``bound`` and every solution built on one."""
        self.elements = [e for e in self.elements if e[0] > bound]
        self.per_pattern = {n: [p.without(bound) for p in ps] for n, ps in self.per_pattern.items()}
        self.solutions = {
            n: self.per_pattern[n][0] if len(self.per_pattern[n]) == 1 else found.without(bound)
            for n, found in self.solutions.items()
        }


Binds = tuple[tuple[int, int], ...]
"""(slot, position): where a matched triple's terms go in a row."""


@dataclass(frozen=True, slots=True)
class AlikePatterns:
    """Occurrence triple patterns equal up to variable names (W8's ``?company
    :hasStockPrice ?price1`` ... ``?price3``, one per SEQ operand), matched once per
    element: each of its triples holding the constants (and repeating what the pattern
    repeats, as ``?x :p ?x``) is a row of every member, its terms in that member's slots.
    These are each member's plan's rows over the element's graph: one pattern, no hidden
    slot, so distinct triples give distinct rows (a repeated one, a repeated mapping,
    read as one: ``Solutions.add``)."""

    constants: tuple[tuple[int, int], ...]
    """(position, id) every matching triple holds."""
    repeats: tuple[tuple[int, int], ...]
    """(position, earlier position) holding the same term."""
    members: tuple[tuple[int, int, Binds], ...]
    """(leaf number, pattern position, binds) of each pattern of this shape."""
    rows: tuple[Callable[[tuple], Row], ...]
    """Each member's row of a matched triple (``UNBOUND`` after its terms), in one call."""

    def add_rows(
        self, triples: Sequence[EncodedTriple], start: int, end: int,
        into: dict[tuple[int, int], list[EventMapping]],
    ) -> None:
        """Each member's mappings over one element's ``triples``."""
        constants, repeats = self.constants, self.repeats
        if len(constants) == 1 and not repeats:  # a predicate, most often: compared directly
            ((i, v),) = constants
            hits = [t for t in triples if t[i] == v]
        elif len(constants) == 2 and not repeats:  # a predicate and a class (rdf:type)
            (i, v), (j, w) = constants
            hits = [t for t in triples if t[i] == v and t[j] == w]
        else:
            hits = [
                t for t in triples
                if all(t[i] == v for i, v in constants) and all(t[i] == t[j] for i, j in repeats)
            ]
        if not hits:
            return
        for (number, i, _), row_of in zip(self.members, self.rows, strict=True):
            found = into[number, i]
            for t in hits:
                found.append((row_of(t + UNBOUND), start, end))


@dataclass(frozen=True, slots=True)
class Layout:
    """A query's rows: their width, and the hidden slots an event mapping leaves unbound."""

    width: int
    hidden: frozenset[int]


def alike_patterns(
    leaves: Sequence[OccurrenceLeaf], layout: Layout | None
) -> tuple[list[AlikePatterns], list[tuple[int, int]]]:
    """The leaves' one-pattern scans of the event graph grouped by shape (the pattern with
    its variables numbered in order of appearance), and the (leaf number, position) of
    every other pattern (matched through its plan). None ``layout``: every pattern is."""
    shapes: dict[tuple, list[tuple[int, int, Binds]]] = {}
    planned: list[tuple[int, int]] = []
    for leaf in leaves:
        for i, plan in enumerate(leaf.patterns):
            found = None if layout is None else _shape(plan, layout.hidden)
            if found is None:
                planned.append((leaf.number, i))
                continue
            shape, binds = found
            shapes.setdefault(shape, []).append((leaf.number, i, binds))
    width = 0 if layout is None else layout.width
    groups = [
        AlikePatterns(
            constants, repeats, tuple(members),
            tuple(_row_of(binds, width) for _, _, binds in members),
        )
        for (constants, repeats, _), members in shapes.items()
    ]
    return groups, planned


UNBOUND = (None,)
"""Put after a triple's terms: the value a row takes in the slots the pattern binds not."""


def _row_of(binds: Binds, width: int) -> Callable[[tuple], Row]:
    """A member's row of a matched triple (``UNBOUND`` after its terms): its terms in their
    slots, None in the others."""
    at = [3] * width  # UNBOUND's None, after the triple's s, p, o
    for slot, position in binds:
        at[slot] = position
    return values_at(at)


def _shape(plan: po.PhysicalPlan, hidden: frozenset[int]) -> tuple[tuple, Binds] | None:
    """A one-pattern scan of the event graph as (constants, repeats, variables' positions)
    with its binds; None for any other plan, or one binding a hidden slot (its rows leave
    it unbound)."""
    if not (
        isinstance(plan, po.Scan) and plan.graphs == (po.EventGraph(),) and len(plan.patterns) == 1
    ):
        return None
    constants: list[tuple[int, int]] = []
    repeats: list[tuple[int, int]] = []
    binds: dict[int, int] = {}
    for position, term in enumerate(plan.patterns[0]):
        if isinstance(term, Constant):
            constants.append((position, term.id))
        elif term.index in hidden:
            return None
        elif term.index in binds:
            repeats.append((position, binds[term.index]))
        else:
            binds[term.index] = position
    shape = (tuple(constants), tuple(repeats), tuple(binds.values()))
    return shape, tuple(binds.items())


@dataclass(frozen=True, slots=True)
class Horizon:
    """A top-level ``FILTER(getDURATION() < d)`` (or <=) over a pattern that only grows: a
    mapping reported from t on ends at t or later, so it holds no occurrence starting d (or
    more than d) before t, and such occurrences can be forgotten (exact)."""

    amount: int
    """d: abstract units, or milliseconds for an xsd:duration literal (dateTime times)."""
    duration: bool
    strict: bool
    exact: bool = True
    """d is the literal's length (not rounded to milliseconds): the mappings within the
    horizon are then exactly those the duration test keeps (``implies``)."""

    def bound(self, t: int, kind: TimeKind) -> int | None:
        """Occurrences starting at or before this time are of no use from t on (None: the
        literal does not compare with this kind of time, the filter is never true)."""
        if self.duration != (kind is TimeKind.DATETIME):
            return None
        return t - self.amount if self.strict else t - self.amount - 1

    def implies(self, t: int, kind: TimeKind) -> bool:
        """Whether every mapping ending by t and starting after ``bound(t, kind)`` passes
        the duration test this horizon is made of (its FILTER need not run on them)."""
        return self.exact and self.bound(t, kind) is not None

    def text(self) -> str:
        """The bound as the query put it, for ``sepia explain``."""
        amount = timedelta(milliseconds=self.amount) if self.duration else self.amount
        return f"{'<' if self.strict else '<='} {amount}"

    @classmethod
    def of(cls, literal: object, strict: bool) -> Horizon | None:
        """From the literal getDURATION() is compared with: an integer, or an
        xsd:dayTimeDuration / xsd:duration without years and months."""
        if not isinstance(literal, ox.Literal):
            return None
        if literal.datatype.value == XSD + "integer" and literal.value.lstrip("+").isdigit():
            return cls(int(literal.value), False, strict)
        length = value_of(literal)  # a timedelta for a duration without years and months
        if not isinstance(length, timedelta) or length < timedelta(0):
            return None
        millisecond = timedelta(milliseconds=1)
        return cls(round(length / millisecond), True, strict, length % millisecond == timedelta(0))


def batches(rows: Iterable[Sequence]) -> list[list[tuple[int, int, tuple[EncodedTriple, ...]]]]:
    """``Occurrences.rows()`` back into the batches of elements that ended together."""
    grouped: dict[int, tuple[int, int, list[EncodedTriple]]] = {}
    for number, start, end, *triple in rows:
        entry = grouped.setdefault(number, (start, end, []))
        if triple[0] is not None:
            entry[2].append(tuple(triple))
    found: list[list[tuple[int, int, tuple[EncodedTriple, ...]]]] = []
    for _, (start, end, triples) in sorted(grouped.items()):
        if not found or found[-1][-1][1] != end:
            found.append([])
        found[-1].append((start, end, tuple(triples)))
    return found


def delta_join(
    patterns: Sequence[Sequence[EventMapping]], deltas: Sequence[Sequence[EventMapping]]
) -> set[EventMapping]:
    """The BGP solutions using at least one new occurrence: for each i, the old occurrences
    of the patterns before i, the new ones of i, every one of the patterns after i. Each of
    ``patterns`` lists a triple pattern's occurrences so far, its ``deltas`` last."""
    found: set[EventMapping] = set()
    for i, delta in enumerate(deltas):
        if not delta:
            continue
        partial: Collection[EventMapping] = delta
        for j, every in enumerate(patterns):
            if j == i or not partial:
                continue
            side = every[: len(every) - len(deltas[j])] if j < i else every
            partial = {covering(a, b) for a, b in pairs(partial, side)}
        found |= set(partial)
    return found


def join(left: Collection[EventMapping], right: Collection[EventMapping]) -> set[EventMapping]:
    """Join(Psi, Psi'): every compatible pair, stamped with the covering interval."""
    return {covering(a, b) for a, b in pairs(left, right)}


FEW_PAIRS = 16
"""Up to this many candidate pairs, a join tries each: hashing them (``pairs``) cost more
(W8's RDFS variant joins one price and one typing of one element at each arrival)."""


def eq_join(left: Collection[EventMapping], right: Collection[EventMapping]) -> set[EventMapping]:
    """EqJoin(Psi, Psi'): compatible pairs with equal intervals."""
    if len(left) * len(right) <= FEW_PAIRS:
        return {
            covering(a, b) for a in left for b in right
            if a[1] == b[1] and a[2] == b[2] and compatible(a[0], b[0])
        }
    return {covering(a, b) for a, b in pairs(left, right) if a[1:3] == b[1:3]}


def seq_right_join(
    optional: Collection[EventMapping], required: Collection[EventMapping], keep: Keep | None
) -> set[EventMapping]:
    """SeqRightJoin(Psi', Psi, F) (OPTIONALSEQ): the joins with an earlier optional solution
    that satisfy F, and each required solution with no such join."""
    joined = [(covering(o, m), m) for m, o in pairs(required, optional) if o[2] < m[1]]
    return _with_or_alone(joined, required, keep)


def eq_left_join(
    left: Collection[EventMapping], right: Collection[EventMapping], keep: Keep | None
) -> set[EventMapping]:
    """EqLeftJoin(Psi, Psi', F) (EQUALSOPTIONAL): the joins over the same interval that
    satisfy F, and each left solution with no such join."""
    joined = [(covering(a, b), a) for a, b in pairs(left, right) if a[1:3] == b[1:3]]
    return _with_or_alone(joined, left, keep)


def _with_or_alone(
    joined: list[tuple[EventMapping, EventMapping]],
    kept: Collection[EventMapping],
    keep: Keep | None,
) -> set[EventMapping]:
    """The joins F keeps, plus each mapping of ``kept`` none of whose joins F keeps."""
    passing = {j for j, _ in joined} if keep is None else keep([j for j, _ in joined])
    taken = {m for j, m in joined if j in passing}
    return passing | {m for m in kept if m not in taken}
