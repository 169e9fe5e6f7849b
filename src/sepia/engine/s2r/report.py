"""Report policies driven by arrivals and by time (RSP-QL seed 004, Definition 23).

The reference lists every evaluation instant of a finite input up front; a stream has no
end, so here the policy answers two questions as time goes by: which instants in an open
interval without arrivals are due (only policies made of time-driven strategies, window
close of time-based windows and periodic, have any), and whether the instant of an
arrival is due given what arrived. Neither looks at window contents: NON EMPTY is a
condition the engine checks on the windows it keeps, at each due instant.

The rules are semantics.md's: window close fires at a close c of a window in scope (landmark,
NOW and count-based windows close at every arrival they admit); content change whenever an
element enters a window in scope; periodic at t0 + k * period (t0 of the window named by
``OF``, else 0); strategies joined by AND must all fire; a policy of conditions only fires
at content changes of any window.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property

import pyoxigraph as ox

from sepia.algebra import report as rp
from sepia.engine.s2r.windows import WindowOperator


@dataclass(frozen=True, slots=True)
class Arrivals:
    """What arrived at one instant: the windows that admitted an element."""

    windows: frozenset[ox.NamedNode] = frozenset()


@dataclass(frozen=True)
class Schedule:
    """A report policy bound to the query's windows (name -> (stream IRI, operator))."""

    policy: rp.Report
    windows: Mapping[ox.NamedNode, tuple[str, WindowOperator]]

    def __post_init__(self) -> None:
        for strategy in self.policy.strategies:
            if strategy.window is not None and strategy.window not in self.windows:
                raise ValueError(f"report policy names an unknown window {strategy.window}")

    @cached_property
    def triggers(self) -> tuple[rp.Strategy, ...]:
        """The strategies that make instants (NON EMPTY only filters them)."""
        found = tuple(s for s in self.policy.strategies if not isinstance(s, rp.NonEmpty))
        return found or (rp.ContentChange(),)

    @cached_property
    def conditions(self) -> tuple[rp.NonEmpty, ...]:
        return tuple(s for s in self.policy.strategies if isinstance(s, rp.NonEmpty))

    def scope(self, strategy: rp.Strategy) -> tuple[ox.NamedNode, ...]:
        """The windows a strategy reads: the one ``OF`` names, else all of the query's
        (memoised: asked at every arrival)."""
        found = self._scopes.get(strategy)
        if found is None:
            found = tuple(self.windows) if strategy.window is None else (strategy.window,)
            self._scopes[strategy] = found
        return found

    @cached_property
    def _scopes(self) -> dict[rp.Strategy, tuple[ox.NamedNode, ...]]:
        return {}

    def fires(self, strategy: rp.Strategy, t: int, arrived: Arrivals) -> bool:
        """Whether one triggering strategy fires at t."""
        match strategy:
            case rp.ContentChange():
                return any(w in arrived.windows for w in self.scope(strategy))
            case rp.WindowClose():
                return any(self._closes(w, t, arrived) for w in self.scope(strategy))
            case rp.Periodic(period):
                t0 = self._periodic_t0(strategy)
                return t >= t0 and (t - t0) % period == 0
            case rp.NonEmpty():
                raise ValueError("NON EMPTY is a condition, not a trigger")

    def _closes(self, window: ox.NamedNode, t: int, arrived: Arrivals) -> bool:
        operator = self.windows[window][1]
        if operator.closes_on_arrival():
            return window in arrived.windows
        return operator.closes_at(t)

    def _periodic_t0(self, strategy: rp.Periodic) -> int:
        return 0 if strategy.window is None else self.windows[strategy.window][1].t0

    def next_firing(self, strategy: rp.Strategy, t: int) -> int | None:
        """The earliest instant after t at which ``strategy`` fires with nothing arriving."""
        match strategy:
            case rp.WindowClose():
                closes = [self.windows[w][1].first_close_after(t) for w in self.scope(strategy)]
                return min((c for c in closes if c is not None), default=None)
            case rp.Periodic(period):
                t0 = self._periodic_t0(strategy)
                return t0 + max(0, (t - t0) // period + 1) * period
            case _:
                return None

    def between(self, after: int, before: int) -> Iterator[int]:
        """The due instants in the open interval (after, before), where nothing arrives."""
        t = after
        while (due := self.next_due(t, before)) is not None and due < before:
            yield due
            t = due

    def next_due(self, after: int, bound: int) -> int | None:
        """An instant q after ``after`` with nothing due in (after, q): the first due instant
        when it lies before ``bound``, else the first that may be due at or past ``bound``;
        None when a trigger never fires again. A leapfrog intersection of the triggers'
        next firings: below the latest of them, some trigger does not fire."""
        t = after
        while True:
            nexts = [self.next_firing(s, t) for s in self.triggers]
            if any(n is None for n in nexts):
                return None
            candidate = max(n for n in nexts if n is not None)
            if candidate >= bound or all(n == candidate for n in nexts):
                return candidate
            t = candidate - 1

    @cached_property
    def time_driven(self) -> bool:
        """Whether only time makes an instant due (window close of time-based windows,
        periodic): then an arrival's instant is due exactly when ``between`` would list it."""
        return all(
            isinstance(s, rp.Periodic)
            or (
                isinstance(s, rp.WindowClose)
                and not any(self.windows[w][1].closes_on_arrival() for w in self.scope(s))
            )
            for s in self.triggers
        )

    def due_at(self, t: int, arrived: Arrivals) -> bool:
        """Whether the instant of an arrival is due."""
        return all(self.fires(s, t, arrived) for s in self.triggers)
