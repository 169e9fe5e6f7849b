"""Window queries (RSP-QL): evaluated at the instants their report policy makes due.

``advance(t, elements)`` first fires the evaluations due strictly before t (nothing arrives
there, so only time-driven report policies have any), then inserts the elements stamped t
into the windows that admit them, then fires t itself if the policy says so. ``flush`` ends
a finite input the way semantics.md says: time runs on to the close of the last window
holding the last element (or to ``until``). Without a report policy the query is evaluated
once, at 0 (the reference's choice).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sepia.engine.plan.physical import WindowPlan
from sepia.engine.query.kind import QueryKind
from sepia.engine.s2r.report import Arrivals
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement

if TYPE_CHECKING:
    from sepia.engine.query.continuous import ContinuousQuery


class WindowQuery(QueryKind):
    """A query over windows, stepped by its report policy (``WindowPlan.schedule``)."""

    def __init__(self, host: ContinuousQuery, plan: WindowPlan) -> None:
        super().__init__(host)
        self.schedule = plan.schedule
        self.streams = frozenset(host.readers_of)
        """The streams the query's windows read."""
        self.low: int | None = None
        self.quiet: tuple[int, int | None] = (0, 0)
        """(a, q): the report policy makes nothing due in (a, q) (q None: nothing after a).
        A fact about the schedule alone, so it survives a restore."""

    def advance(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """Only elements of the streams the query's windows read move the query's clock: an
        instant after the last of them may lie past the end-of-input flush, so it waits
        for the next such element (which proves it does not) or for ``flush``."""
        host, streams = self.host, self.streams
        relevant = [e for e in elements if e.stream in streams]
        results = self.once()
        if not relevant:
            return results
        if host.clock is not None and t <= host.clock:
            raise ValueError(f"time went back: {t} after {host.clock}")
        if self.low is None:
            self.low = t
        results += self.between(t)
        arrived = self.insert(t, relevant)
        if self.due_at(t, arrived):
            results += self.evaluate(t)
        host.clock = t
        return results

    def watermark(self, t: int) -> list[Result]:
        host = self.host
        results = self.once()
        if self.low is None or (host.clock is not None and t <= host.clock):
            return results
        results += self.between(t + 1)
        host.clock = t
        return results

    def flush(self, until: int | None) -> list[Result]:
        """Fire everything due through the flush end (or ``until``)."""
        host = self.host
        results = self.once()
        if self.low is None:
            return results
        end = until if until is not None else host.flush_end()
        assert end is not None  # a window admitted an element (``low``)
        results += self.between(end + 1)
        host.clock = max(end, host.clock or end)
        return results

    def settled(self, through: int) -> int:
        """The instant before the next scheduled one after the clock."""
        host, schedule = self.host, self.schedule
        if schedule is None or self.low is None:
            return through
        after = self.low - 1 if host.clock is None else host.clock
        due = next(iter(schedule.between(after, through + 1)), None)
        return through if due is None else due - 1

    def once(self) -> list[Result]:
        """A query without a report policy is evaluated once, at 0 (the reference's choice)."""
        host = self.host
        if self.schedule is not None or host.clock is not None:
            return []
        host.clock = 0
        return host.evaluate(0)

    def between(self, before: int) -> list[Result]:
        """The due instants after the clock and before ``before``, where nothing arrives."""
        schedule, clock = self.schedule, self.host.clock
        if schedule is None or self.low is None:
            return []
        after = self.low - 1 if clock is None else max(clock, self.low - 1)
        quiet_from, quiet_until = self.quiet
        if quiet_from <= after and (quiet_until is None or before <= quiet_until):
            return []  # asked at every arrival: nothing is due until the next window close
        results = []
        while (due := schedule.next_due(after, before)) is not None and due < before:
            out = self.evaluate(due)
            results += out
            after = due
            if not out:  # the same data answers the same: quiet until it changes
                change = self.next_change(due)
                after = before - 1 if change is None or change >= before else max(due, change - 1)
        self.quiet = (after, due)
        return results

    def insert(self, t: int, elements: Sequence[StreamElement]) -> Arrivals:
        """The elements stamped t into the windows."""
        return self.host.insert(t, elements)

    def evaluate(self, t: int) -> list[Result]:
        """The query at a due instant t."""
        return self.host.evaluate(t)

    def next_change(self, t: int) -> int | None:
        """The first instant after t whose evaluation may answer otherwise than t's."""
        return self.host.next_change(t)

    def due_at(self, t: int, arrived: Arrivals) -> bool:
        """Whether the arrival instant t is due (after ``between(t)``: time-driven
        policies are then known quiet up to their next due instant)."""
        schedule = self.schedule
        if schedule is None:
            return False
        quiet_from, quiet_until = self.quiet
        if schedule.time_driven and quiet_from < t and (quiet_until is None or t < quiet_until):
            return False
        return schedule.due_at(t, arrived)
