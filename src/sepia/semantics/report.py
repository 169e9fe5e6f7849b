"""Report policies: the evaluation instants ET of a continuous query over a finite input
(RSP-QL seed 004, Definition 23, and semantics.md).

Window close fires at every close c of a window; content change at every time an element
enters a window; periodic at t0 + k * period. NON EMPTY is a condition, not a trigger: it
holds at t when the window shows something. Several strategies joined by AND must all hold;
``OF <w>`` restricts a strategy to one window, without it any window of the query counts.
A policy made of conditions only is checked at the content-change instants. The input ends
with a flush: time advances to the close of the last window that holds the last element (or
to ``until``), firing every evaluation due on the way.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import pyoxigraph as ox

from sepia.algebra import report as rp
from sepia.rdf.stream import StreamElement
from sepia.semantics.windows import WindowFunction


@dataclass(frozen=True, slots=True)
class WindowInput:
    """One window of a query over its stream's finite input.

    ``closes(low, high)`` lists its closing instants in [low, high] (a range for sliding
    windows: there may be very many); ``flush(t)`` is the
    close of the last window holding t (t itself for windows that move with every element);
    ``t0`` is where periodic reports are aligned.
    """

    name: ox.NamedNode
    elements: Sequence[StreamElement]
    function: WindowFunction
    closes: Callable[[int, int], Sequence[int]]
    flush: Callable[[int], int]
    t0: int = 0

    def content(self, t: int) -> list[StreamElement]:
        return self.function(self.elements, t)

    def arrivals(self) -> set[int]:
        """The times at which an element enters the window (content change)."""
        return {e.time for e in self.elements if e in self.function([e], e.time)}

    def changes(self) -> set[int]:
        """Instants at which the window's content may change: an element arrives, or leaves
        after the last window holding it closes. Between two of them the content is fixed."""
        return {t for e in self.elements for t in (e.time, self.flush(e.time) + 1)}


def _any_content(scope: Sequence[WindowInput], t: int) -> bool:
    """NON EMPTY over ``scope``: some window holds an element at t."""
    return any(w.content(t) for w in scope)


def input_span(windows: Sequence[WindowInput], until: int | None) -> tuple[int, int] | None:
    """[first element time, flush end] of the input, or None when there is no element."""
    times = [e.time for w in windows for e in w.elements]
    if not times:
        return None
    end = max(w.flush(max(e.time for e in w.elements)) for w in windows if w.elements)
    return min(times), end if until is None else until


class Instants:
    """ET of a report policy over the windows' finite input, without listing it: ``first(x)``
    is the earliest trigger instant at or after x, ``holds(t)`` whether the conditions
    hold there. A long gap in time holds many instants (a close every second for years):
    they are found one at a time, so a caller can leap over those it knows answer nothing."""

    def __init__(
        self, policy: rp.Report, windows: Sequence[WindowInput], until: int | None = None
    ) -> None:
        span = input_span(windows, until)
        self.low, self.high = span if span is not None else (1, 0)
        self.triggers: list[Callable[[int], int | None]] = []
        self.conditions: list[Callable[[int], bool]] = []
        for strategy in policy.strategies:
            scope = [w for w in windows if strategy.window in (None, w.name)]
            if not scope:
                raise ValueError(f"report policy names an unknown window {strategy.window}")
            if isinstance(strategy, rp.NonEmpty):
                self.conditions.append(partial(_any_content, scope))
            else:
                self.triggers.append(self._trigger(strategy, scope))
        if not self.triggers:
            self.triggers.append(self._trigger(rp.ContentChange(), list(windows)))

    def _trigger(
        self, strategy: rp.Strategy, scope: list[WindowInput]
    ) -> Callable[[int], int | None]:
        """The earliest instant at or after x at which the strategy fires (None: never)."""
        high = self.high
        match strategy:
            case rp.ContentChange():
                times = sorted(set().union(*(w.arrivals() for w in scope)))
                return lambda x: next(iter(times[bisect.bisect_left(times, x):]), None)
            case rp.WindowClose():
                return lambda x: min((c[0] for w in scope if (c := w.closes(x, high))),
                                     default=None)
            case rp.Periodic(period):
                t0 = scope[0].t0 if strategy.window is not None else 0
                return lambda x: t0 + max(0, -((x - t0) // -period)) * period
        raise ValueError(f"{strategy} is not a trigger")

    def first(self, x: int) -> int | None:
        """The earliest instant of the triggers' intersection at or after x, in the span."""
        x = max(x, self.low)
        while x <= self.high:
            nexts = [trigger(x) for trigger in self.triggers]
            if any(n is None for n in nexts):
                return None
            latest = max(n for n in nexts if n is not None)
            if all(n == latest for n in nexts):
                return latest if latest <= self.high else None
            x = latest
        return None

    def holds(self, t: int) -> bool:
        return all(condition(t) for condition in self.conditions)


def evaluation_instants(
    policy: rp.Report, windows: Sequence[WindowInput], until: int | None = None
) -> list[int]:
    """ET for ``policy`` over the windows' finite input, in increasing order (all listed)."""
    instants = Instants(policy, windows, until)
    found = []
    t = instants.first(instants.low)
    while t is not None:
        if instants.holds(t):
            found.append(t)
        t = instants.first(t + 1)
    return found
