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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyoxigraph as ox

from sepia.algebra import report as rp
from sepia.rdf.stream import StreamElement
from sepia.semantics.windows import WindowFunction


@dataclass(frozen=True, slots=True)
class WindowInput:
    """One window of a query over its stream's finite input.

    ``closes(low, high)`` lists its closing instants in [low, high]; ``flush(t)`` is the
    close of the last window holding t (t itself for windows that move with every element);
    ``t0`` is where periodic reports are aligned.
    """

    name: ox.NamedNode
    elements: Sequence[StreamElement]
    function: WindowFunction
    closes: Callable[[int, int], list[int]]
    flush: Callable[[int], int]
    t0: int = 0

    def content(self, t: int) -> list[StreamElement]:
        return self.function(self.elements, t)

    def arrivals(self) -> set[int]:
        """The times at which an element enters the window (content change)."""
        return {e.time for e in self.elements if e in self.function([e], e.time)}


def input_span(windows: Sequence[WindowInput], until: int | None) -> tuple[int, int] | None:
    """[first element time, flush end] of the input, or None when there is no element."""
    times = [e.time for w in windows for e in w.elements]
    if not times:
        return None
    end = max(w.flush(max(e.time for e in w.elements)) for w in windows if w.elements)
    return min(times), end if until is None else until


def evaluation_instants(
    policy: rp.Report, windows: Sequence[WindowInput], until: int | None = None
) -> list[int]:
    """ET for ``policy`` over the windows' finite input, in increasing order."""
    span = input_span(windows, until)
    if span is None:
        return []
    low, high = span
    triggers: list[set[int]] = []
    conditions: list[Callable[[int], bool]] = []
    for strategy in policy.strategies:
        scope = [w for w in windows if strategy.window in (None, w.name)]
        if not scope:
            raise ValueError(f"report policy names an unknown window {strategy.window}")
        match strategy:
            case rp.ContentChange():
                triggers.append(set().union(*(w.arrivals() for w in scope)))
            case rp.WindowClose():
                triggers.append(set().union(*(w.closes(low, high) for w in scope)))
            case rp.Periodic(period):
                t0 = scope[0].t0 if strategy.window is not None else 0
                first = t0 + max(0, -((low - t0) // -period)) * period
                triggers.append(set(range(first, high + 1, period)))
            case rp.NonEmpty():
                conditions.append(lambda t, scope=scope: any(w.content(t) for w in scope))
    if not triggers:
        triggers.append(set().union(*(w.arrivals() for w in windows)))
    instants = set.intersection(*triggers)
    return sorted(t for t in instants if low <= t <= high and all(c(t) for c in conditions))
