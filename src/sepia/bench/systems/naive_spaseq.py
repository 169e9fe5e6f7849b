"""A straightforward nested-loop matcher for SPAseq sequence expressions (the naive baseline
of the event workloads): from every event, walk forward through the later events of its
partition and try each step of the sequence, with the semantics of spec/semantics.md:

- `,` strict contiguity: the step must match the very next event of the partition;
- `;` skip-till-next: the first later event that matches the step is taken, others skipped;
- `B+` after another element: the first iteration follows the operator before it, later
  iterations are strictly contiguous, and every iteration count is its own match;
- a later step matches events of a strictly later instant than the step before it; a
  conjunction step (`B & C`) matches events of one instant, one per GPM;
- `WITHIN w`: the last event of a match is at most w after its first.

GPMs are hand-written per workload as Python functions of an event and the bindings so far,
returning the extended bindings (several when a GRAPH join fans out). No automaton, no
indexes beyond the partition: a yardstick and an independent count, not an engine.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Bindings = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Event:
    """One stream element reduced to the fields the workload's GPMs read."""

    time: int
    stream: str
    fields: dict[str, Any]


Gpm = Callable[[Event, Bindings], list[Bindings]]


@dataclass(frozen=True, slots=True)
class Step:
    """One element of a sequence: its GPMs (several: a conjunction), the operator before it
    (ignored for the first step) and whether it carries Kleene `+`."""

    gpms: tuple[Gpm, ...]
    operator: str = ";"
    kleene: bool = False


@dataclass(frozen=True, slots=True)
class SeqExpression:
    """A SPAseq sequence expression with its WITHIN bound (ms)."""

    steps: tuple[Step, ...]
    within: int

    def count_matches(self, events: Sequence[Event], deadline: float) -> tuple[int, int]:
        """(matches, start events tried) in one partition's time-ordered events; stops
        trying new starts after ``deadline`` (a ``time.perf_counter()`` value)."""
        first = self.steps[0]
        total = 0
        for start in range(len(events)):
            if start % 256 == 0 and time.perf_counter() > deadline:
                return total, start
            for bindings in _match_group(first, events[start:start + 1], {}):
                total += self._advance(events, start, 1, bindings, events[start].time)
        return total, len(events)

    def _advance(self, events: Sequence[Event], pos: int, k: int, bindings: Bindings,
                 t0: int) -> int:
        if k == len(self.steps):
            return 1
        step = self.steps[k]
        total = 0
        for last, matched in self._candidates(events, pos, step, bindings, t0):
            if step.kleene:
                total += self._iterate(events, last, k, bindings, matched, t0)
            else:
                total += self._advance(events, last, k + 1, matched, t0)
        return total

    def _candidates(self, events: Sequence[Event], pos: int, step: Step, bindings: Bindings,
                    t0: int) -> list[tuple[int, Bindings]]:
        """(index of the step's last event, bindings) for the events the operator selects:
        the first later instant (``,``: the very next one) with events matching the step."""
        start = _later(events, pos)
        while start < len(events) and events[start].time - t0 <= self.within:
            end = _later(events, start)
            found = _match_group(step, events[start:end], bindings)
            if found or step.operator == ",":
                return [(end - 1, matched) for matched in found]
            start = end
        return []

    def _iterate(self, events: Sequence[Event], last: int, k: int, outer: Bindings,
                 matched: Bindings, t0: int) -> int:
        """A Kleene iteration ended at ``last``: complete the match here, and/or go on
        iterating with an event of the strictly next instant (each iteration binds its own
        variables)."""
        total = self._advance(events, last, k + 1, matched, t0)
        following = _later(events, last)
        if following < len(events) and events[following].time - t0 <= self.within:
            gpm = self.steps[k].gpms[0]
            for index in range(following, _later(events, following)):
                for again in gpm(events[index], outer):
                    total += self._iterate(events, index, k, outer, again, t0)
        return total


def _later(events: Sequence[Event], pos: int) -> int:
    """The index of the first event after ``pos`` with a later time: a sequence's next
    element is strictly later (SPAseq Definitions 11-12), never at the same instant."""
    after = pos + 1
    while after < len(events) and events[after].time == events[pos].time:
        after += 1
    return after


def _match_group(step: Step, group: Sequence[Event], bindings: Bindings) -> list[Bindings]:
    """Bindings under which every GPM of the step matches some event of the group."""
    results = [bindings]
    for gpm in step.gpms:
        results = [extended for b in results for event in group for extended in gpm(event, b)]
    return results
