"""RSEP-QL event patterns over windows, pushed as they complete (seed 001, section 4).

The supported fragment is a tree of unrestricted ``SEQ`` over basic event patterns
``EVENT w { P }``: at an arrival instant t, <<E>>^t is computed over the windows' contents at
t, and only the event mappings that end at t are new (they are reported at their end, as
the reference pushes them). So the right spine of the tree is matched against the events
stamped t only, and each left side against the window events that end before its right
partner starts (Eq. 7's W^sqcup[0, t3 - 1]). Each element's matches of a pattern are cached
by its triples: a pattern over one event graph never changes its answer.

CHRONOLOGICAL and RECENT (SEQ^c / SEQ^r with consumption) cannot be computed from the events
ending at t alone: the reference re-evaluates the whole pattern over the windows at every
instant, and consumption is a side effect of each evaluation (a right mapping that ended
earlier can take a partner later). ``Consumption`` does the same, step for step, over the
windows' encoded contents, and keeps the consumed occurrences (window, element graph name)
as rows; each element's graph name is kept beside the window's own deque.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import pyoxigraph as ox

from sepia.algebra.event import SelectionPolicy
from sepia.engine import operators as po
from sepia.engine.rows import Row, compatible, merge
from sepia.engine.windows import WindowState
from sepia.rdf.stream import StreamElement

EventMapping = tuple[Row, int, int]
"""(mapping, from, to) of one event mapping."""


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
    consume (``Consumption``)."""

    left: EventTree
    right: EventTree
    policy: SelectionPolicy = SelectionPolicy.UNRESTRICTED


EventTree = EventLeaf | EventSeq | Extreme

Matcher = Callable[[po.PhysicalPlan, int, tuple[tuple[int, int, int], ...]], Iterable[Row]]
"""A pattern's plan over one event graph (given as its time and encoded triples)."""


def completed(
    tree: EventTree, t: int, windows: dict[ox.NamedNode, WindowState], match: Matcher
) -> set[EventMapping]:
    """The event mappings of ``tree`` at t that end at t."""
    return _mappings(tree, windows, match, Scope(t, None), exact=t)


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a sub-pattern is evaluated: events ending by ``before``, compatible with the
    right partners' mapping ``mu`` (RSEP-QL Eq. 7's mu2(E1) under W^sqcup[0, t3 - 1])."""

    before: int
    mu: Row | None


def _mappings(
    tree: EventTree,
    windows: dict[ox.NamedNode, WindowState],
    match: Matcher,
    scope: Scope,
    exact: int | None,
) -> set[EventMapping]:
    """Event mappings within ``scope`` (ending at ``exact``, when given)."""
    match tree:
        case EventLeaf(window, plan):
            return {
                (row, time, time)
                for time, triples in windows[window].elements
                if time <= scope.before and (exact is None or time == exact)
                for row in match(plan, time, triples)
                if scope.mu is None or compatible(row, scope.mu)
            }
        case EventSeq(left, right, SelectionPolicy.NAIVE):
            lefts = _latest(_mappings(left, windows, match, scope, None))
            rights = _latest(_mappings(right, windows, match, scope, None))
            return {
                (merge(a, b), a_from, b_to)
                for a, a_from, a_to in lefts
                for b, b_from, b_to in rights
                if compatible(a, b) and a_to < b_from and exact in (None, b_to)
            }
        case EventSeq(left, right, _):
            found = set()
            for b, b_from, b_to in _mappings(right, windows, match, scope, exact):
                mu = b if scope.mu is None else merge(scope.mu, b)
                inner = Scope(min(b_from - 1, scope.before), mu)
                for a, a_from, _ in _mappings(left, windows, match, inner, None):
                    if compatible(a, b):
                        found.add((merge(a, b), a_from, b_to))
            return found
        case Extreme(inner, last):
            every = _mappings(inner, windows, match, scope, None)
            chosen = _latest(every) if last else _earliest(every)
            return {m for m in chosen if exact in (None, m[2])}


def _order(m: EventMapping) -> tuple[int, int]:
    """The order FIRST, LAST and the policies use: by end, then start."""
    return (m[2], m[1])


def _earliest(mappings: set[EventMapping]) -> set[EventMapping]:
    least = min(map(_order, mappings), default=None)
    return {m for m in mappings if _order(m) == least}


def _latest(mappings: set[EventMapping]) -> set[EventMapping]:
    greatest = max(map(_order, mappings), default=None)
    return {m for m in mappings if _order(m) == greatest}


Occurrence = tuple[str, str]
"""(window, element graph name): what consumption uses up (RSEP-QL Definition 10)."""
Supported = dict[EventMapping, frozenset[Occurrence]]
"""Event mappings with the occurrences behind them; equal mappings keep the first support
found, as the reference's sets of ``EventMapping`` do."""
ServeKey = Callable[[EventMapping], tuple]
"""The reference's ``rsepql.serve_key`` on encoded mappings (the caller decodes terms)."""


def consumes(tree: EventTree) -> bool:
    """Whether a pattern has a SEQ with a consumption policy."""
    match tree:
        case EventLeaf():
            return False
        case EventSeq(left, right, policy):
            consuming = policy in (SelectionPolicy.CHRONOLOGICAL, SelectionPolicy.RECENT)
            return consuming or consumes(left) or consumes(right)
        case Extreme(inner):
            return consumes(inner)


class Consumption:
    """RSEP-QL SEQ^c / SEQ^r: the pattern re-evaluated over the windows at every instant,
    as the reference does (``sepia.semantics.events.EventEvaluator.seq_consuming``), with the
    consumed occurrences carried from one instant to the next."""

    def __init__(self, key: ServeKey) -> None:
        self.key = key
        self.consumed: frozenset[Occurrence] = frozenset()
        self.labels: dict[ox.NamedNode, deque[str]] = {}
        """Each window's element graph names, aligned with its deque of elements."""
        self._nesting = 0

    def admit(
        self, windows: dict[ox.NamedNode, WindowState], streams: dict[ox.NamedNode, str],
        elements: Sequence[StreamElement],
    ) -> None:
        """Name the elements the windows just admitted (call after inserting them), and
        forget the names, and consumed occurrences, of the elements that left."""
        for e in elements:
            for name, window in windows.items():
                if streams[name] == e.stream and window.operator.admits(e.time):
                    self.labels.setdefault(name, deque()).append(e.graph)
        shown = set()
        for name, window in windows.items():
            labels = self.labels.setdefault(name, deque())
            while len(labels) > len(window.elements):
                labels.popleft()
            shown |= {(name.value, label) for label in labels}
        self.consumed &= shown  # graph names are unique in a stream: gone for good

    def completed(
        self, tree: EventTree, t: int, windows: dict[ox.NamedNode, WindowState], match: Matcher
    ) -> list[EventMapping]:
        """The pattern's mappings at t that end at t; consumption done at t is kept."""
        every = self._evaluate(tree, windows, match, Scope(t, None))
        return [m for m in every if m[2] == t]

    def _evaluate(
        self, tree: EventTree, windows: dict[ox.NamedNode, WindowState], match: Matcher,
        scope: Scope,
    ) -> Supported:
        sub = lambda x: self._evaluate(x, windows, match, scope)  # noqa: E731
        match tree:
            case EventLeaf(window, plan):
                found: Supported = {}
                for (time, triples), label in zip(
                    windows[window].elements, self.labels.get(window, ()), strict=True
                ):
                    if time > scope.before:
                        continue
                    for row in match(plan, time, triples):
                        if scope.mu is None or compatible(row, scope.mu):
                            found.setdefault((row, time, time), frozenset({(window.value, label)}))
                return found
            case EventSeq(policy=SelectionPolicy.CHRONOLOGICAL | SelectionPolicy.RECENT):
                return self._seq_consuming(tree, windows, match, scope)
            case EventSeq():
                raise ValueError("a pattern mixing consuming and other SEQ policies")
            case Extreme(inner, last):
                every = sub(inner)
                chosen = set(_latest(set(every)) if last else _earliest(set(every)))
                return {m: s for m, s in every.items() if m in chosen}

    def _seq_consuming(
        self, tree: EventSeq, windows: dict[ox.NamedNode, WindowState], match: Matcher,
        scope: Scope,
    ) -> Supported:
        """Right mappings in serve order each take the earliest (CHRONOLOGICAL) or latest
        (RECENT) compatible, earlier, unconsumed left mapping; both are consumed. A nested
        consuming SEQ consumes on a trial copy; only the outermost commits."""
        committed = self.consumed
        self._nesting += 1
        rights = self._evaluate(tree.right, windows, match, scope)
        consumed, found = committed, {}
        for b in sorted(rights, key=self.key):
            self.consumed = consumed
            if rights[b] & consumed:
                continue
            row, b_from, b_to = b
            mu = row if scope.mu is None else merge(scope.mu, row)
            inner = Scope(min(b_from - 1, scope.before), mu)
            lefts = self._evaluate(tree.left, windows, match, inner)
            partners = sorted(
                (a for a in lefts if compatible(a[0], row) and a[2] < b_from
                 and not lefts[a] & consumed),
                key=self.key,
            )
            if partners:
                a = partners[-1] if tree.policy is SelectionPolicy.RECENT else partners[0]
                found.setdefault((merge(a[0], row), a[1], b_to), lefts[a] | rights[b])
                consumed = consumed | lefts[a] | rights[b]
        self._nesting -= 1
        self.consumed = consumed if self._nesting == 0 else committed
        return found

    def rows(self) -> list[tuple]:
        """State rows: ("label", window, graph name) in window order, ("consumed", window,
        graph name)."""
        labels = [("label", w.value, g) for w, names in self.labels.items() for g in names]
        return labels + [("consumed", w, g) for w, g in sorted(self.consumed)]

    def restore(self, rows: Iterable[Sequence]) -> None:
        self.labels, consumed = {}, set()
        for kind, window, graph in rows:
            if kind == "label":
                self.labels.setdefault(ox.NamedNode(window), deque()).append(graph)
            else:
                consumed.add((window, graph))
        self.consumed = frozenset(consumed)
