"""Chains of EP-SPARQL SeqJoins under range comparisons, kept per bucket between arrivals
(W8's drop-then-rise: "EP-SPARQL: A Unified Language for Event Processing and Stream
Reasoning", Anicic, Fodor, Rudolph, Stojanovic).

``((A SEQ B) FILTER(?p2 < ?p1 * 0.7)) SEQ C FILTER(?p3 > ?p1 * 1.05)``: each level is a
FILTER over an unrestricted SEQ whose right operand is an occurrence BGP and whose FILTER
has a conjunct comparing a value of the left mapping with one of the right (``PairTest``).
The row engine answers each level through its kept operands (``Solutions``, a range index
per kept operand, one scope per right mapping). Here each level keeps only what the next
arrival reads: its left mappings per value of the shared variables, sorted by the key the
comparison reads; each arrival's right mappings find their partners by bisection, and the
pairs found become the next level's left mappings (the last level's are the answers).

Exact as the row engine's range index (``cep.ranges``): only exact numbers are ordered;
every other left mapping (a key that is no exact number, or a bucket slot unbound) and
every right one whose probe or bucket is not, is paired by compatibility and interval and
tested by the level's FILTER. Under a horizon (``epsparql.Horizon``) a mapping starting by
the bound is skipped, and dropped every half horizon with the occurrences.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from sepia.algebra.event import SelectionPolicy
from sepia.engine.cep.epsparql import OccurrenceLeaf
from sepia.engine.cep.event_trees import Combined, EventFilter, EventSeq, EventTree, grows
from sepia.engine.cep.intervals import EventMapping, values_at
from sepia.engine.cep.ranges import SPANS, PairTest, Row, Sorted, exact
from sepia.engine.rows import compatible

Tested = Callable[[EventFilter, list[EventMapping]], set[EventMapping]]
"""A level's FILTER applied to the pairs its range index cannot decide."""


@dataclass(frozen=True, slots=True)
class SeqChain:
    """The levels of a chain, innermost first: ``levels[0]``'s left operand is ``base``,
    each other level's left operand is the level before it. The base and each level's
    right operand are read at each arrival as the row engine reads them (their mappings
    ending then); only the levels' left mappings are kept."""

    levels: tuple[EventFilter, ...]
    rights: tuple[EventTree, ...]
    """Each level's right operand."""
    base: EventTree
    top: EventFilter
    """The last level, whose mappings are the chain's answer."""

    def transient(self) -> frozenset[int]:
        """The occurrence BGPs of one pattern only the chain reads, each at an arrival (as
        or within its base or a right operand): no other arrival reads them."""
        return frozenset(n for tree in (self.base, *self.rights) for n in _at_arrival(tree))


def _at_arrival(tree: EventTree) -> list[int]:
    """The one-pattern occurrence BGPs a tree read at an arrival reads at that arrival
    only: through FILTERs over no SEQ, EQUALS and UNION (each reads its operands at the
    arrival its own mappings end at); none through any other operator."""
    match tree:
        case OccurrenceLeaf(patterns, number):
            return [number] if len(patterns) == 1 else []
        case EventFilter(inner=inner, pair=None) if not isinstance(inner, EventSeq):
            return _at_arrival(inner)
        case Combined("eq-join" | "or", left, right):
            return _at_arrival(left) + _at_arrival(right)
    return []


def seq_chain(tree: EventTree) -> SeqChain | None:
    """The chain ``tree`` answers, under FILTERs only (they read their operand in the same
    scope); None when it has none, or a level of one (the row engine's range index then
    answers it as cheaply), or when it does not only grow (its levels' mappings ending at
    each arrival are then not all it will ever have)."""
    while isinstance(tree, EventFilter) and _level(tree) is None:
        tree = tree.inner
    levels: list[tuple[EventFilter, EventSeq]] = []
    while isinstance(tree, EventFilter) and (seq := _level(tree)) is not None:
        levels.append((tree, seq))
        tree = seq.left
    if len(levels) < 2 or not grows(levels[0][0]):
        return None
    levels.reverse()
    filters = tuple(f for f, _ in levels)
    return SeqChain(filters, tuple(seq.right for _, seq in levels), tree, filters[-1])


def _level(tree: EventFilter) -> EventSeq | None:
    """The SEQ of Filter(F, left SEQ right) with a range conjunct (``PairTest``)."""
    seq = tree.inner
    if tree.pair is not None and isinstance(seq, EventSeq) and (
        seq.policy is SelectionPolicy.UNRESTRICTED
    ):
        return seq
    return None


@dataclass(slots=True)
class Merges:
    """Pairs merged by one ``itemgetter`` call over the left row followed by the right one
    (the right's bound slots taken from it, the others from the left), one getter per set
    of slots the right rows bind: a pair is then a tuple concatenation and a C call, not a
    loop over slots in Python (W8's rise level merges 152,626 pairs)."""

    getters: dict[tuple[int, ...], Callable[[Row], tuple]] = field(default_factory=dict)

    def joined(
        self, lefts: Iterable[EventMapping], b: EventMapping, floor: int, checked: bool
    ) -> list[EventMapping]:
        """b with each left mapping ending before it starts and starting after ``floor``
        (compatible with it, when ``checked``: else only the bucket's slots are shared),
        merged by writing b's bound slots over the left row (equal where both bind)."""
        row, start, end = b[0], b[1], b[2]
        bound = tuple([s for s, v in enumerate(row) if v is not None])
        pick = self.getters.get(bound)
        if pick is None:
            width = len(row)
            into = set(bound)
            pick = self.getters[bound] = values_at(
                [width + s if s in into else s for s in range(width)]
            )
        if checked:
            return [
                (pick(a[0] + row), a[1], end) for a in lefts
                if a[2] < start and a[1] > floor and compatible(a[0], row)
            ]
        return [(pick(a[0] + row), a[1], end) for a in lefts if a[2] < start and a[1] > floor]


@dataclass(slots=True)
class LevelIndex:
    """One level's left mappings: by bucket and key, or ``unsure`` (tested by F)."""

    test: PairTest
    buckets: dict[tuple, Sorted[EventMapping]] = field(default_factory=dict)
    unsure: list[EventMapping] = field(default_factory=list)
    ever: set[int] = field(default_factory=set)
    """Slots some left mapping binds."""
    outside: tuple[int, ...] = ()
    """Those outside the bucket's slots: only these can make a partner incompatible."""
    unseen: Callable[[Row], tuple] | None = None
    """A row's values in the slots no left mapping binds yet (None: no mapping yet)."""
    unbound: tuple = ()
    """What ``unseen`` gives for a row binding none of them."""
    merges: Merges = field(default_factory=Merges)
    """How the pairs found are merged (shared with the index ``without`` makes)."""
    bucket_of: Callable[[Row], tuple] = field(init=False)
    """A row's values in the bucket's slots."""

    def __post_init__(self) -> None:
        self.bucket_of = values_at(self.test.slots)

    def add(self, ms: Collection[EventMapping]) -> None:
        """One arrival's left mappings: by bucket and key, or unsure."""
        bucket_of, key, buckets, unsure = self.bucket_of, self.test.key, self.buckets, self.unsure
        unseen, unbound = self.unseen, self.unbound
        for m in ms:
            row = m[0]
            if unseen is None or unseen(row) != unbound:
                self._bind(row)
                unseen, unbound = self.unseen, self.unbound
            bucket = bucket_of(row)
            if None in bucket:
                unsure.append(m)
                continue
            value = key(row)
            if type(value) is not Decimal:  # most keys are (W8's prices): no call
                value = exact(value)
                if value is None:
                    unsure.append(m)
                    continue
            found = buckets.get(bucket)
            if found is None:
                found = buckets[bucket] = Sorted()
            found.insert(value, m)

    def _bind(self, row: Row) -> None:
        """A mapping binding slots no earlier one did."""
        self.ever.update(s for s, v in enumerate(row) if v is not None)
        self.outside = tuple(s for s in sorted(self.ever) if s not in self.test.slots)
        rest = [s for s in range(len(row)) if s not in self.ever]
        self.unseen = values_at(rest)
        self.unbound = (None,) * len(rest)

    def without(self, bound: int) -> LevelIndex:
        """The left mappings starting after ``bound``."""
        kept = LevelIndex(
            self.test, ever=set(self.ever), outside=self.outside, unseen=self.unseen,
            unbound=self.unbound, merges=self.merges,
        )
        for bucket, found in self.buckets.items():
            chosen = [i for i, m in enumerate(found.items) if m[1] > bound]
            if chosen:
                kept.buckets[bucket] = Sorted(
                    [found.keys[i] for i in chosen], [found.items[i] for i in chosen]
                )
        kept.unsure = [m for m in self.unsure if m[1] > bound]
        return kept

    def pairs(
        self, rights: Iterable[EventMapping], since: int | None
    ) -> tuple[set[EventMapping], list[EventMapping]]:
        """The merged pairs (left ending before right starts, starting after ``since``)
        the comparison surely keeps, and those F must test."""
        sure: set[EventMapping] = set()
        tested: list[EventMapping] = []
        test, bucket_of, outside, unsure = self.test, self.bucket_of, self.outside, self.unsure
        span, probe_of, whole, buckets = SPANS[test.operator], test.probe, test.whole, self.buckets
        floor = -(1 << 62) if since is None else since
        joined = self.merges.joined
        for b in rights:
            row = b[0]
            bucket = bucket_of(row)
            found = buckets.get(bucket)
            if found is None and not unsure and None not in bucket:
                continue  # no left mapping to pair (W8 with RDFS: a company never typed)
            probe = None if None in bucket else probe_of(row)
            if type(probe) is not Decimal:
                probe = exact(probe)
            if probe is None:  # no exact probe (or no bucket): every left mapping is F's
                others = self.every() if None in bucket else self._bucket(bucket)
                tested += joined(others + unsure, b, floor, True)
                continue
            if found is not None:
                low, high = span(found.keys, probe)
                if low < high:
                    checked = False
                    for s in outside:
                        if row[s] is not None:
                            checked = True
                            break
                    pairs = joined(found.items[low:high], b, floor, checked)
                    if whole:
                        sure.update(pairs)
                    else:
                        tested += pairs
            if unsure:
                tested += joined(unsure, b, floor, True)
        return sure, tested

    def every(self) -> list[EventMapping]:
        return [m for found in self.buckets.values() for m in found.items]

    def _bucket(self, bucket: tuple) -> list[EventMapping]:
        found = self.buckets.get(bucket)
        return [] if found is None else list(found.items)


class ChainState:
    """A chain's levels between arrivals, and its answers at the last one."""

    def __init__(self, chain: SeqChain) -> None:
        self.chain = chain
        self.levels = [LevelIndex(level.pair) for level in chain.levels]  # type: ignore[arg-type]
        self.found: tuple[int, set[EventMapping]] | None = None
        """(t, the top level's mappings ending at t)."""

    def advance(
        self, t: int, base: Iterable[EventMapping], rights: list[Iterable[EventMapping]],
        since: int | None, tested: Tested,
    ) -> None:
        """The base's mappings ending at t, then each level's: its rights ending at t
        (``rights[i]``) paired with the left mappings kept so far."""
        new: Collection[EventMapping] = list(base)
        for level, index, right in zip(self.chain.levels, self.levels, rights, strict=True):
            if new:  # an upper level gains left mappings at few arrivals (W8's rise: 18%)
                index.add(new)
            sure, unsure = index.pairs(right, since)
            new = sure | tested(level, unsure) if unsure else sure
        self.found = (t, new)  # type: ignore[assignment]

    def answer(self, t: int) -> set[EventMapping] | None:
        """The top level's mappings ending at t, when computed at t."""
        if self.found is None or self.found[0] != t:
            return None
        return self.found[1]

    def forget(self, bound: int) -> None:
        self.levels = [index.without(bound) for index in self.levels]

    def forget_ids(self, dropped: set[int]) -> None:
        """Nothing to drop: every id the chain holds is a term of an element the
        occurrences still hold (a mapping is forgotten with, or before, the elements it
        was built of: it starts no later than any of them). So the dictionary's
        collection need not walk the chain (it watches it, as a cache)."""

    def clear(self) -> None:
        self.__init__(self.chain)  # type: ignore[misc]
