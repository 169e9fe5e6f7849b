"""Event queries under a REPORT clause: evaluated at the report policy's instants.

Without a REPORT clause an event query is push-based: each match is reported once, when it
completes (language.md section 3). With one, the answer at each instant the policy makes due
is every match over the windows then, as for any other pattern (RSP-QL seed 004, Definition
24): the streaming operator compares those answers, so RStream repeats a match while its
events stay in the window, and DStream retracts it when they leave or a later event negates
it (a CQELS-CEP NO_TAIL is re-checked over the window at every instant). The instants come
from the schedule exactly as for a window query (``WindowQuery``); at each, the event
patterns' matches (``TreeQuery.every``) become the MATCHes' rows before the evaluation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sepia.engine.plan.physical import WindowPlan
from sepia.engine.query.events import TreeQuery, combined
from sepia.engine.query.windowed import WindowQuery
from sepia.engine.rows import Row
from sepia.engine.s2r.report import Arrivals, Schedule
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind

if TYPE_CHECKING:
    from sepia.engine.query.continuous import ContinuousQuery, Snapshot


class ReportedEvents(WindowQuery):
    """The MATCHes of ``events`` (its windows, starts and consumption) evaluated at the
    instants ``schedule`` makes due."""

    def __init__(self, host: ContinuousQuery, schedule: Schedule, events: TreeQuery) -> None:
        super().__init__(host, WindowPlan(schedule))
        self.events = events
        self.time_kind = TimeKind.ABSTRACT
        """The kind of time of the elements (what FILTERs over intervals see)."""

    def advance(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        if elements:
            self.time_kind = elements[0].kind
        return super().advance(t, elements)

    def insert(self, t: int, elements: Sequence[StreamElement]) -> Arrivals:
        return self.events.admit(t, elements)

    def evaluate(self, t: int) -> list[Result]:
        """The query at t over every match each MATCH has then."""
        host, events = self.host, self.events
        every = events.every(t, self.time_kind)
        host.completed = [events.stamped(found, k) for k, found in enumerate(every)]
        results = host.evaluate(t)
        host.completed = [[]]
        return results

    def next_change(self, t: int) -> int | None:
        """Consuming, an evaluation changes what the next one sees: none is leapt over."""
        return t + 1 if self.events.consumption is not None else super().next_change(t)

    def solutions(self, rows: list[Row], t: int) -> list[Row]:
        """Every solution at t (one holding no match too, as a window query's); with
        several MATCHes, each as one match covering those it holds."""
        count = len(self.events.trees)
        return rows if count == 1 else combined(self.host.physical.slots, count, rows)

    def idle(self) -> bool:
        return self.events.idle()

    def rows(self) -> Snapshot:
        return self.events.rows()

    def restore(self, snapshot: Snapshot, low: int | None, matched: int, dropped: int) -> None:
        super().restore(snapshot, low, matched, dropped)
        self.events.restore(snapshot, low, matched, dropped)
