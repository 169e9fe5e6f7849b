"""Event patterns of RSEP-QL, CQELS-CEP and EP-SPARQL, pushed as they complete (seed 001
section 4, seed 000 section 4.2, seed 003 section 4.2).

The tree's leaves are basic event patterns ``EVENT w { P }`` (RSEP-QL, and CQELS-CEP's
sequence elements, over a window's event graphs) and EP-SPARQL's BGPs over triple
occurrences (``epsparql.Occurrences``). At an arrival instant t, <<E>>^t is computed over the
windows' contents at t (and the occurrences so far), and only the event mappings that end at
t are new (they are reported at their end, as the reference pushes them). So each operator
passes "ends at t" on to the operands whose end its result's end is (the right of a SEQ, both
sides of an EqJoin or an interval JOIN, ...): the right spine is matched against the events
stamped t only, and each left side of a SEQ against the events that end before its right
partner starts (Eq. 7's W^sqcup[0, t3 - 1]). Negations (CQELS-CEP SEQ_WO, NO_HEAD, NO_TAIL,
EP-SPARQL's optional joins) read their negated operand over the whole scope. Each element's
matches of a pattern are cached by its triples: a pattern over one event graph never
changes its answer.

CHRONOLOGICAL and RECENT (SEQ^c / SEQ^r with consumption) cannot be computed from the events
ending at t alone: the reference re-evaluates the whole pattern over the windows at every
instant, and consumption is a side effect of each evaluation (a right mapping that ended
earlier can take a partner later). ``Consumption`` does the same, step for step, over the
windows' encoded contents and EP-SPARQL's occurrences, with every operator of the tree: the
mappings are then derivations (row, from, to, support), equal mappings of different
supports kept apart, as the reference's ``Derivation``s. It keeps the consumed occurrences
as rows; each element's graph name is kept beside the window's own deque.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial

import pyoxigraph as ox

from sepia.algebra.event import SelectionPolicy
from sepia.engine.cep import cqels_cep, epsparql
from sepia.engine.cep.epsparql import (
    EncodedTriple,
    Horizon,
    Matcher,
    OccurrenceLeaf,
    Occurrences,
    Solutions,
    delta_join,
)
from sepia.engine.cep.intervals import EventMapping, ending, joined, pairs
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.expressions import ExpressionEvaluator
from sepia.engine.rows import FROM, TO, Row, Slots, compatible, merge
from sepia.engine.s2r.windows import WindowState
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind
from sepia.semantics.mappings import Occurrence
from sepia.semantics.sparql import time_literal

Condition = ExpressionEvaluator
"""A FILTER over event mappings, compiled with the interval in the hidden slots."""


@dataclass(frozen=True, slots=True)
class EventLeaf:
    """``EVENT w { P }``: P over each event graph window w shows."""

    window: ox.NamedNode
    plan: po.PhysicalPlan


@dataclass(frozen=True, slots=True)
class Extreme:
    """``FIRST E`` / ``LAST E`` (Eqs. 5-6): the mappings of E no other precedes / follows,
    in the order by end, then start."""

    inner: EventTree
    last: bool


@dataclass(frozen=True, slots=True)
class EventSeq:
    """``E1 SEQ E2``: compatible pairs with end(E1) < start(E2), stamped [from1, to2];
    NAIVE is SEQ^n (Eq. 9): only the last mapping of each side; CHRONOLOGICAL and RECENT
    consume (``Consumption``). CQELS-CEP's SEQ and EP-SPARQL's SeqJoin are the same set."""

    left: EventTree
    right: EventTree
    policy: SelectionPolicy = SelectionPolicy.UNRESTRICTED


@dataclass(frozen=True, slots=True)
class Combined:
    """A binary operator applied to its operands' sets: CQELS-CEP OR and JOIN (interval
    intersection), EP-SPARQL Join (covering interval) and EqJoin (``OPERATORS``)."""

    operator: str
    left: EventTree
    right: EventTree


@dataclass(frozen=True, slots=True)
class Negated:
    """CQELS-CEP SEQ_WO(O1, !O2, O3), NO_HEAD(!O2, O3) and NO_TAIL(O1, !O2): ``left`` or
    ``right`` is None where the sequence has no element."""

    left: EventTree | None
    negated: EventTree
    right: EventTree | None


@dataclass(frozen=True, slots=True)
class EventFilter:
    """EP-SPARQL Filter(F, Psi): F reads each mapping's interval through getDURATION(),
    getSTARTTIME() and getENDTIME()."""

    condition: Condition
    inner: EventTree


@dataclass(frozen=True, slots=True)
class OptionalJoin:
    """EP-SPARQL OPTIONALSEQ (SeqRightJoin: the optional part first, ending before the
    required one starts) or EQUALSOPTIONAL (EqLeftJoin: the optional part over the same
    interval), with the optional part's FILTER as condition."""

    required: EventTree
    optional: EventTree
    condition: Condition | None
    equal: bool


EventTree = (
    EventLeaf | OccurrenceLeaf | EventSeq | Extreme | Combined | Negated | EventFilter
    | OptionalJoin
)

OPERATORS: dict[str, Callable[[list[EventMapping], list[EventMapping]], set[EventMapping]]] = {
    "or": lambda a, b: set(a) | set(b),
    "join": cqels_cep.join,
    "covering-join": epsparql.join,
    "eq-join": epsparql.eq_join,
    "same-time": lambda a, b: {
        (merge(x[0], y[0]), x[1], x[2]) for x, y in pairs(a, b) if x[2] == y[2]
    },  # SPAseq's & outside a sequence (Definition 8): stamped with the left's interval
}


@dataclass(slots=True)
class Inputs:
    """What an event pattern reads at instant t: the windows, each occurrence BGP's
    solutions, a pattern's rows over one event graph, and how to apply a FILTER."""

    t: int
    windows: dict[ox.NamedNode, WindowState]
    match: Matcher
    occurrences: OccurrenceHistory | None = None
    keep: Callable[[Condition, list[EventMapping]], set[EventMapping]] | None = None
    starts: Notes | None = None
    """The start of each element the windows show (interval-stamped elements)."""
    consumption: Consumption | None = None
    """CHRONOLOGICAL / RECENT: mappings are derivations, consuming SEQs serve them."""


def interval_filter(
    slots: Slots, dictionary: Dictionary, kind: TimeKind
) -> Callable[[Condition, list[EventMapping]], set[EventMapping]]:
    """FILTER over event mappings, with sigma applied: each mapping's interval is put in the
    hidden slots as the reference's filters see it (integers, or xsd:dateTime so that
    getDURATION() is a duration)."""
    start, end = slots.index(FROM), slots.index(TO)

    @lru_cache(maxsize=1 << 12)
    def stamp(time: int) -> int:
        return dictionary.encode(time_literal(time, kind))

    def keep(condition: Condition, mappings: list[EventMapping]) -> set[EventMapping]:
        rows = [m[0] for m in mappings]
        if start in condition.positions or end in condition.positions:
            rows = [
                tuple(stamp(m[1]) if i == start else stamp(m[2]) if i == end else v
                      for i, v in enumerate(m[0]))
                for m in mappings
            ]
        return {m for m, ok in zip(mappings, condition.truths(rows), strict=True) if ok}

    return keep


def completed(tree: EventTree, inputs: Inputs) -> set[EventMapping]:
    """The event mappings of ``tree`` at t that end at t."""
    return _mappings(tree, inputs, Scope(inputs.t, None), exact=inputs.t)


def current(tree: EventTree, inputs: Inputs) -> set[EventMapping]:
    """Every event mapping of ``tree`` at t, ending then or earlier (several MATCHes: a
    new match of one joins the earlier ones of the others)."""
    return _mappings(tree, inputs, Scope(inputs.t, None), exact=None)


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a sub-pattern is evaluated: events ending by ``before``, compatible with the
    right partners' mapping ``mu`` (RSEP-QL Eq. 7's mu2(E1) under W^sqcup[0, t3 - 1]). As in
    the reference, the scope restricts the leaves; the operators combine what is left."""

    before: int
    mu: Row | None


def _mappings(
    tree: EventTree, inputs: Inputs, scope: Scope, exact: int | None
) -> set[EventMapping]:
    """Event mappings within ``scope`` (ending at ``exact``, when given: every operator
    passes it on to the operands whose end its result's end is)."""
    history = inputs.occurrences
    kept = None if history is None else history.materialized.get(id(tree))
    if kept is not None:
        return set(kept.select(scope.before, scope.mu, exact))
    return _evaluate(tree, inputs, scope, exact)


def _evaluate(
    tree: EventTree, inputs: Inputs, scope: Scope, exact: int | None
) -> set[EventMapping]:
    sub = lambda x, at=None: _mappings(x, inputs, scope, at)  # noqa: E731
    match tree:
        case EventLeaf(window, plan):
            starts = None if inputs.starts is None else inputs.starts.get(window)
            shown = _shown(inputs.windows[window], starts, scope.before, exact)
            if inputs.consumption is not None:
                return inputs.consumption.events(window, plan, shown, inputs.match, scope)
            return {
                (row, start, time)
                for _, start, time, triples in shown
                for row in inputs.match(plan, time, triples)
                if scope.mu is None or compatible(row, scope.mu)
            }
        case OccurrenceLeaf() if inputs.consumption is not None:
            return inputs.consumption.occurrences.select(tree, scope)
        case OccurrenceLeaf():
            assert inputs.occurrences is not None
            return set(inputs.occurrences.seen.select(tree, scope.before, scope.mu, exact))
        case EventSeq(left, right, SelectionPolicy.NAIVE):
            lefts = _latest(sub(left))
            rights = _latest(sub(right))
            return {
                joined(a, b, a[1], b[2])
                for a in lefts
                for b in rights
                if compatible(a[0], b[0]) and a[2] < b[1] and exact in (None, b[2])
            }
        case EventSeq(policy=SelectionPolicy.CHRONOLOGICAL | SelectionPolicy.RECENT):
            assert inputs.consumption is not None
            return inputs.consumption.seq(tree, inputs, scope)
        case EventSeq(left, right, _):
            found = set()
            for b in sub(right, exact):
                mu = b[0] if scope.mu is None else merge(scope.mu, b[0])
                inner = Scope(min(b[1] - 1, scope.before), mu)
                for a in _mappings(left, inputs, inner, None):
                    if compatible(a[0], b[0]):
                        found.add(joined(a, b, a[1], b[2]))
            return found
        case Extreme(inner, last):
            every = sub(inner)
            chosen = _latest(every) if last else _earliest(every)
            return {m for m in chosen if exact in (None, m[2])}
        case Combined("covering-join", left, right) if exact is not None:
            lefts, rights = sub(left), sub(right)  # one of the two ends at t
            return epsparql.join(ending(lefts, exact), rights) | epsparql.join(
                lefts, ending(rights, exact)
            )
        case Combined(operator, left, right):
            # OR, JOIN (intersection) and EqJoin end where both operands (or either) end
            return OPERATORS[operator](list(sub(left, exact)), list(sub(right, exact)))
        case Negated(None, negated, right):
            return cqels_cep.no_head(sub(negated), sub(right, exact))  # type: ignore[arg-type]
        case Negated(left, _, None) if exact == inputs.t:
            return sub(left, exact)  # nothing lies in (t, t]: NO_TAIL keeps all that ends at t
        case Negated(left, negated, None):
            return cqels_cep.no_tail(sub(left, exact), sub(negated), inputs.t)  # type: ignore[arg-type]
        case Negated(left, negated, right):
            return cqels_cep.seq_wo(sub(left), sub(negated), sub(right, exact))  # type: ignore[arg-type]
        case EventFilter(condition, inner):
            assert inputs.keep is not None
            return inputs.keep(condition, list(sub(inner, exact)))
        case OptionalJoin(required, optional, condition, equal):
            keep = None if condition is None else partial(inputs.keep, condition)  # type: ignore[arg-type]
            if equal:
                return epsparql.eq_left_join(sub(required, exact), sub(optional, exact), keep)
            return epsparql.seq_right_join(sub(optional), sub(required, exact), keep)


class OccurrenceHistory:
    """EP-SPARQL's state: every occurrence so far (``epsparql.Occurrences``) and the
    solutions so far of each SEQ's left operand over them, indexed like a leaf's. Over
    occurrences, SEQ, the joins, UNION and FILTER only ever add mappings, each ending at the
    arrival that made it, and a scope (end by a time, compatible with a mapping) selects the
    same mappings from their result as from their leaves: so a left operand, read once per
    right mapping, is kept as its result and grows by what ends at each arrival."""

    def __init__(
        self, tree: EventTree, leaves: Sequence[OccurrenceLeaf], horizon: Horizon | None = None
    ) -> None:
        self.seen = Occurrences(leaves)
        self.kind: TimeKind | None = None
        self.lefts = _kept_lefts(tree)
        self.materialized: dict[int, Solutions] = {id(n): Solutions() for n in self.lefts}
        self.horizon = horizon if horizon is not None and grows(tree) else None
        self.forgotten: int | None = None
        """The last bound occurrences were forgotten by (``Horizon``)."""

    def add(self, batch: Sequence[tuple[int, int, tuple[EncodedTriple, ...]]], kind: TimeKind,
            inputs: Inputs) -> None:
        """The elements ending at ``inputs.t``; then each kept operand's mappings ending
        then (inner operands first: an outer one reads them)."""
        self.kind = kind
        self._forget(inputs.t, kind)
        self.seen.add(batch, inputs.match)
        for node in self.lefts:
            found = _evaluate(node, inputs, Scope(inputs.t, None), inputs.t)
            solutions = self.materialized[id(node)]
            for m in found:  # all end at t: the index stays in end order
                solutions.add(m)

    def _forget(self, t: int, kind: TimeKind) -> None:
        """Past the horizon's bound, drop what no mapping still to come can hold (every half
        horizon, so the rebuilding costs little per arrival)."""
        bound = None if self.horizon is None else self.horizon.bound(t, kind)
        if bound is None or (
            self.forgotten is not None and bound - self.forgotten < self.horizon.amount // 2  # type: ignore[union-attr]
        ):
            return
        self.forgotten = bound
        self.seen.forget(bound)
        self.materialized = {key: found.without(bound) for key, found in self.materialized.items()}

    def expiry(self) -> int | None:
        """The first time from which every occurrence held is of no use (the horizon's
        bound passes the latest start): None without a horizon or occurrences."""
        if self.horizon is None or self.kind is None or not self.seen.elements:
            return None
        latest = max(start for start, _, _ in self.seen.elements)
        t = latest + self.horizon.amount + (0 if self.horizon.strict else 1)
        return None if self.horizon.bound(t, self.kind) is None else t

    def rows(self) -> list[tuple]:
        """State rows: ``Occurrences.rows()`` with the time kind; the kept operands are
        derived, rebuilt on restore by replaying the batches."""
        kind = None if self.kind is None else self.kind.value
        return [(*row, kind) for row in self.seen.rows()]

    def clear(self) -> None:
        self.seen.clear()
        self.materialized = {id(n): Solutions() for n in self.lefts}
        self.forgotten = None


def _kept_lefts(tree: EventTree) -> list[EventTree]:
    """The left operands of SEQ worth keeping (not a leaf: those are kept already) whose
    result only grows, innermost first."""
    found = []
    match tree:
        case EventSeq(left, right, SelectionPolicy.UNRESTRICTED):
            found = _kept_lefts(left) + _kept_lefts(right)
            if grows(left) and not isinstance(left, OccurrenceLeaf):
                found.append(left)
        case _:
            for child in _children(tree):
                found += _kept_lefts(child)
    return found


def grows(tree: EventTree) -> bool:
    """Over occurrences only, and every operator monotone and end-preserving."""
    match tree:
        case OccurrenceLeaf():
            return True
        case EventSeq(left, right, SelectionPolicy.UNRESTRICTED) | Combined(
            "or" | "covering-join" | "eq-join", left, right
        ):
            return grows(left) and grows(right)
        case EventFilter(_, inner):
            return grows(inner)
        case _:
            return False


def _children(tree: EventTree) -> list[EventTree]:
    match tree:
        case EventSeq(left, right) | Combined(_, left, right):
            return [left, right]
        case Extreme(inner) | EventFilter(_, inner):
            return [inner]
        case Negated(left, negated, right):
            return [x for x in (left, negated, right) if x is not None]
        case OptionalJoin(required, optional):
            return [required, optional]
        case _:
            return []


Shown = Iterator[tuple[int, int, int, tuple[EncodedTriple, ...]]]
"""(position in the window, start, end, triples) of the elements a window shows."""


def _shown(window: WindowState, starts: deque | None, before: int, exact: int | None) -> Shown:
    """The window's elements ending by ``before`` (at ``exact``, when given), read from the
    newest back: an arrival's own elements are at the end of the window. Without ``starts``
    every element is a point."""
    for i in range(len(window.elements) - 1, -1, -1):
        time, triples = window.elements[i]
        if exact is not None and time < exact:
            return
        if time <= before and (exact is None or time == exact):
            yield i, (time if starts is None else starts[i]), time, triples


def _order(m: EventMapping) -> tuple[int, int]:
    """The order FIRST, LAST and the policies use: by end, then start."""
    return (m[2], m[1])


def _earliest(mappings: set[EventMapping]) -> set[EventMapping]:
    least = min(map(_order, mappings), default=None)
    return {m for m in mappings if _order(m) == least}


def _latest(mappings: set[EventMapping]) -> set[EventMapping]:
    greatest = max(map(_order, mappings), default=None)
    return {m for m in mappings if _order(m) == greatest}


ServeKey = Callable[[EventMapping], tuple]
"""The reference's ``rsepql.serve_key`` on encoded derivations (the caller decodes terms)."""
Named = tuple[int, int, str, str, tuple[EncodedTriple, ...]]
"""(start, end, stream, graph name, triples) of one element."""


def consumes(tree: EventTree) -> bool:
    """Whether a pattern has a SEQ with a consumption policy."""
    if isinstance(tree, EventSeq) and tree.policy in (
        SelectionPolicy.CHRONOLOGICAL, SelectionPolicy.RECENT
    ):
        return True
    return any(map(consumes, _children(tree)))


class Notes:
    """One value per element each window shows (its graph name, its start), aligned with
    the window's own deque of elements: appended as a window admits an element (call after
    inserting), dropped from the front as the window evicts. State rows: (window, value) in
    window order."""

    def __init__(self, of: Callable[[StreamElement], object]) -> None:
        self.of = of
        self.by_window: dict[ox.NamedNode, deque] = {}

    def admit(
        self, windows: dict[ox.NamedNode, WindowState], streams: dict[ox.NamedNode, str],
        elements: Sequence[StreamElement],
    ) -> None:
        for e in elements:
            for name, window in windows.items():
                if streams[name] == e.stream and window.operator.admits(e.time):
                    self.by_window.setdefault(name, deque()).append(self.of(e))
        for name, window in windows.items():
            notes = self.by_window.setdefault(name, deque())
            while len(notes) > len(window.elements):
                notes.popleft()

    def get(self, window: ox.NamedNode) -> deque:
        return self.by_window.get(window, deque())

    def rows(self) -> list[tuple]:
        return [(w.value, v) for w, values in self.by_window.items() for v in values]

    def restore(self, rows: Iterable[Sequence]) -> None:
        self.by_window = {}
        for window, value in rows:
            self.by_window.setdefault(ox.NamedNode(window), deque()).append(value)


class Derivations:
    """EP-SPARQL under consumption: every element so far with its name, and each occurrence
    BGP's derivations so far (one per combination of occurrences its triple patterns take),
    grown on each arrival by a delta join over the triple patterns."""

    def __init__(self, leaves: Sequence[OccurrenceLeaf]) -> None:
        self.leaves = {leaf.number: leaf for leaf in leaves}
        self.elements: list[Named] = []
        self.per_pattern: dict[int, list[list[EventMapping]]] = {
            leaf.number: [[] for _ in leaf.patterns] for leaf in leaves
        }
        self.solutions: dict[int, list[EventMapping]] = {leaf.number: [] for leaf in leaves}

    def add(self, elements: Sequence[Named], match: Matcher) -> None:
        """Elements ending now: each triple pattern's derivations on them, and the BGPs'
        derivations that use one of them."""
        self.elements += elements
        for number, leaf in self.leaves.items():
            patterns = self.per_pattern[number]
            deltas = [_occurring(plan, elements, match) for plan in leaf.patterns]
            for known, new in zip(patterns, deltas, strict=True):
                known += new
            self.solutions[number] += delta_join(patterns, deltas)

    def select(self, leaf: OccurrenceLeaf, scope: Scope) -> set[EventMapping]:
        """The BGP's derivations in ``scope``."""
        return {
            m for m in self.solutions[leaf.number]
            if m[2] <= scope.before and (scope.mu is None or compatible(m[0], scope.mu))
        }

    def rows(self) -> list[tuple]:
        """State rows: one per triple of each element (an empty element: one of Nones)."""
        return [
            (number, start, end, stream, graph, *triple)
            for number, (start, end, stream, graph, triples) in enumerate(self.elements)
            for triple in (triples or ((None, None, None),))
        ]

    def restore(self, rows: Iterable[Sequence], match: Matcher) -> None:
        self.__init__(list(self.leaves.values()))  # type: ignore[misc]
        grouped: dict[int, tuple[int, int, str, str, list[EncodedTriple]]] = {}
        for number, start, end, stream, graph, *triple in rows:
            entry = grouped.setdefault(number, (start, end, stream, graph, []))
            if triple[0] is not None:
                entry[4].append(tuple(triple))  # type: ignore[arg-type]
        elements = [(*e[:4], tuple(e[4])) for _, e in sorted(grouped.items())]
        self.add(elements, match)  # type: ignore[arg-type]


def _occurring(plan: po.PhysicalPlan, elements: Sequence[Named], match: Matcher) -> list:
    """A triple pattern's derivations over ``elements``: one per element and row."""
    return [
        (row, start, end, frozenset({(end, start, "*", stream, graph)}))
        for start, end, stream, graph, triples in elements
        for row in match(plan, end, triples)
    ]


class Consumption:
    """RSEP-QL SEQ^c / SEQ^r over any event pattern: the pattern re-evaluated at every
    instant, as the reference does (``sepia.semantics.events.EventEvaluator.seq_consuming``),
    on derivations (each mapping with its support, as ``Derivation``), with the consumed
    occurrences carried from one instant to the next."""

    def __init__(self, key: ServeKey, leaves: Sequence[OccurrenceLeaf] = ()) -> None:
        self.key = key
        self.consumed: frozenset[Occurrence] = frozenset()
        self.labels = Notes(lambda e: e.graph)
        """Each window's element graph names."""
        self.streams: dict[ox.NamedNode, str] = {}
        self.occurrences = Derivations(leaves)
        self._nesting = 0

    def admit(
        self, windows: dict[ox.NamedNode, WindowState], streams: dict[ox.NamedNode, str],
        elements: Sequence[StreamElement], named: Sequence[Named], match: Matcher,
    ) -> None:
        """Name the elements the windows just admitted (call after inserting them), take
        EP-SPARQL's occurrences (``named``), and forget the names, and consumed occurrences,
        of the elements that left the windows."""
        self.streams = streams
        self.labels.admit(windows, streams, elements)
        if self.occurrences.leaves and named:
            self.occurrences.add(named, match)
        shown = {(name.value, label) for name, labels in self.labels.by_window.items()
                 for label in labels}
        self.consumed = frozenset(  # graph names are unique in a stream: gone for good
            o for o in self.consumed if o[2] == "*" or (o[2], o[4]) in shown
        )

    def completed(self, tree: EventTree, inputs: Inputs) -> set[EventMapping]:
        """The pattern's mappings at t that end at t; consumption done at t is kept."""
        every = _mappings(tree, inputs, Scope(inputs.t, None), None)
        return {m[:3] for m in every if m[2] == inputs.t}  # type: ignore[misc]

    def events(
        self, window: ox.NamedNode, plan: po.PhysicalPlan, shown: Shown, match: Matcher,
        scope: Scope,
    ) -> set[EventMapping]:
        """``EVENT w { P }``'s derivations: one per element and mapping, supported by the
        element seen through w."""
        labels, stream = self.labels.get(window), self.streams[window]
        found: set[EventMapping] = set()
        for i, start, time, triples in shown:
            support = frozenset({(time, start, window.value, stream, labels[i])})
            for row in match(plan, time, triples):
                if scope.mu is None or compatible(row, scope.mu):
                    found.add((row, start, time, support))
        return found

    def seq(self, tree: EventSeq, inputs: Inputs, scope: Scope) -> set[EventMapping]:
        """Right derivations in serve order each take the earliest (CHRONOLOGICAL) or latest
        (RECENT) compatible, earlier, unconsumed left derivation; both are consumed. A
        nested consuming SEQ consumes on a trial copy; only the outermost commits."""
        committed = self.consumed
        self._nesting += 1
        rights = _mappings(tree.right, inputs, scope, None)
        consumed, found = committed, set()
        for b in sorted(rights, key=self.key):
            self.consumed = consumed  # what nested SEQs inside the left side start from
            if b[3] & consumed:  # type: ignore[misc]
                continue
            mu = b[0] if scope.mu is None else merge(scope.mu, b[0])
            inner = Scope(min(b[1] - 1, scope.before), mu)
            partners = sorted(
                (a for a in _mappings(tree.left, inputs, inner, None)
                 if compatible(a[0], b[0]) and a[2] < b[1] and not a[3] & consumed),  # type: ignore[misc]
                key=self.key,
            )
            if partners:
                a = partners[-1] if tree.policy is SelectionPolicy.RECENT else partners[0]
                found.add(joined(a, b, a[1], b[2]))
                consumed = consumed | a[3] | b[3]  # type: ignore[misc]
        self._nesting -= 1
        self.consumed = consumed if self._nesting == 0 else committed
        return found

    def rows(self) -> list[tuple]:
        """State rows: ("label", window, graph name) in window order, ("consumed", end,
        start, source, stream, graph name), ("occurrence", ...) (``Derivations.rows``)."""
        labels = [("label", *row) for row in self.labels.rows()]
        consumed = [("consumed", *o) for o in sorted(self.consumed)]
        return labels + consumed + [("occurrence", *row) for row in self.occurrences.rows()]

    def restore(self, rows: Iterable[Sequence], match: Matcher) -> None:
        rows = list(rows)
        self.labels.restore(row[1:] for row in rows if row[0] == "label")
        self.consumed = frozenset(tuple(row[1:]) for row in rows if row[0] == "consumed")  # type: ignore[misc]
        self.occurrences.restore((row[1:] for row in rows if row[0] == "occurrence"), match)
