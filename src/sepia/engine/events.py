"""RSEP-QL event patterns over windows, pushed as they complete (seed 001, section 4).

The supported fragment is a tree of unrestricted ``SEQ`` over basic event patterns
``EVENT w { P }``: at an arrival instant t, <<E>>^t is computed over the windows' contents at
t, and only the event mappings that end at t are new (they are reported at their end, as
the reference pushes them). So the right spine of the tree is matched against the events
stamped t only, and each left side against the window events that end before its right
partner starts (Eq. 7's W^sqcup[0, t3 - 1]). Each element's matches of a pattern are cached
by its triples: a pattern over one event graph never changes its answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pyoxigraph as ox

from sepia.engine import operators as po
from sepia.engine.rows import Row, compatible, merge
from sepia.engine.windows import WindowState

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
    ``naive`` is SEQ^n (Eq. 9): only the last mapping of each side."""

    left: EventTree
    right: EventTree
    naive: bool = False


EventTree = EventLeaf | EventSeq | Extreme

Matcher = Callable[[po.PhysicalPlan, tuple[tuple[int, int, int], ...]], Iterable[Row]]
"""A pattern's plan over one event graph (given as its encoded triples)."""


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
                for row in match(plan, triples)
                if scope.mu is None or compatible(row, scope.mu)
            }
        case EventSeq(left, right, True):
            lefts = _latest(_mappings(left, windows, match, scope, None))
            rights = _latest(_mappings(right, windows, match, scope, None))
            return {
                (merge(a, b), a_from, b_to)
                for a, a_from, a_to in lefts
                for b, b_from, b_to in rights
                if compatible(a, b) and a_to < b_from and exact in (None, b_to)
            }
        case EventSeq(left, right, False):
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
