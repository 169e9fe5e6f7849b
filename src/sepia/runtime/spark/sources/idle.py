"""Idleness: a live source that falls silent lets time move on with the clock.

Spark's watermark moves only with event times the sources bring: after the last element of
a quiet stream, the results due after it (a window that closes later, a WITHIN deadline, a
tail negation's end) wait for an element that may never come. With `idleTimeout` (seconds;
off by default, and never for files) a live source that brought nothing for that long
adds a *clock row* to its next batch: an element of no triples named `CLOCK_GRAPH`,
stamped with the latest element's time moved on by the clock since the timeout ran out
(a time unit read as a millisecond, as everywhere in the pipeline), plus the allowed
lateness, so that the watermark itself reaches that time. A source that replays a stream at
a speed (the generator's `speed`: event-time milliseconds per wall-clock millisecond) moves
its clock rows at that speed, so they never pass the time its stream has been released to.
The route stage drops the row (job.py); only the watermark sees it. An element stamped at
or before it arrives late. `sepia run --engine local --idle-timeout` moves time the same way
(runtime.local.feed).

The clock's time is part of the source's offset (`"clock"`), so a restarted query replays
the same rows: offsets, not the clock, decide what a batch holds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pyarrow as pa

from sepia.runtime.spark.elements import CLOCK_GRAPH
from sepia.runtime.spark.ingest import INGEST_SCHEMA

CLOCK = "clock"
"""The offset key holding the time of a source's last clock row."""


class IdleClock:
    """When a source last brought an element, the latest time it brought, and the clock
    row time once it has been quiet for `timeout` seconds (time moving `speed` milliseconds
    per millisecond of the clock)."""

    clock: Callable[[], float] = staticmethod(time.monotonic)

    def __init__(self, timeout: float, allowed_lateness: int = 0, speed: float = 1.0) -> None:
        if timeout <= 0:
            raise ValueError(f"idleTimeout is seconds and must be positive, not {timeout}")
        self.timeout = timeout
        self.lateness = allowed_lateness
        self.speed = speed
        self.latest: int | None = None
        self.arrived = self.clock()

    def saw(self, latest: int | None) -> None:
        """Elements arrived; `latest` is the latest time among them (None: none had one)."""
        self.arrived = self.clock()
        if latest is not None:
            self.latest = latest if self.latest is None else max(self.latest, latest)

    def tick(self, offset: dict, start: dict) -> dict:
        """`offset` (nothing new since `start`) with a clock row's time when one is due,
        else with `start`'s (an offset equal to `start`: no new batch)."""
        kept = {**offset, CLOCK: start[CLOCK]} if CLOCK in start else offset
        quiet = self.clock() - self.arrived - self.timeout
        if self.latest is None or quiet < 0:
            return kept
        moved = self.latest + int(quiet * 1000 * self.speed) + self.lateness
        if moved <= start.get(CLOCK, moved - 1):
            return kept
        return {**offset, CLOCK: moved}


def clock_due(start: dict, end: dict) -> int | None:
    """The time of the clock row the batch from `start` to `end` holds, if any."""
    moved = end.get(CLOCK)
    return moved if moved is not None and moved != start.get(CLOCK) else None


def clock_batch(stream: str, source: str, moved: int, kind: str) -> pa.RecordBatch:
    """The clock row of `stream`'s source `source`, stamped `moved`."""
    row = {
        "stream": stream, "file": source, "seq": 0, "element": CLOCK_GRAPH, "start": moved,
        "end": moved, "kind": kind, "s": None, "p": None, "o": None, "line": None, "error": None,
    }  # fmt: skip
    return pa.RecordBatch.from_pylist([row], schema=INGEST_SCHEMA)
