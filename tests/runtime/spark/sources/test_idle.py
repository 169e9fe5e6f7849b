"""Idle live sources let time move on (`idleTimeout`): their offsets and clock rows, no Spark.

A quiet source adds a clock row once `idleTimeout` seconds have passed since its last
element: stamped with the latest element's time plus the milliseconds since the timeout
ran out (plus the allowed lateness, so that the watermark itself gets there). The row's time
is in the offset, so a replayed batch holds the same row; no new row until time has moved.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable

from sepia.runtime.spark.elements import CLOCK_GRAPH
from sepia.runtime.spark.sources.generator import GeneratorReader
from sepia.runtime.spark.sources.idle import IdleClock
from sepia.runtime.spark.sources.push import Inbox, PushStreamReader

from .events import TRIG_DOCUMENTS

Clock = list[float]


def frozen(now: Clock) -> Callable[[], float]:
    return lambda: now[0]


def rows_of(reader, start: dict, end: dict) -> list[dict]:
    return [r for p in reader.partitions(start, end) for b in reader.read(p) for r in b.to_pylist()]


def test_a_paced_generator_that_ran_out_moves_time_with_the_clock(tmp_path: Path) -> None:
    reader = GeneratorReader(
        {"workload": "W4", "scale": "20", "seed": "3", "stream": "http://e/s",
         "cache": str(tmp_path), "rate": "10", "idleTimeout": "0.5", "allowedLateness": "7"}
    )  # fmt: skip
    now = [100.0]
    reader.clock = reader.idle.clock = frozen(now)
    latest = lambda start: reader.latestOffset(start, ReadAllAvailable())  # noqa: E731
    assert latest({"element": 0}) == {"element": 0}  # the first batch: start-up
    now[0] = 101.0
    assert latest({"element": 0}) == {"element": 0}  # the clock starts
    now[0] = 103.0
    assert latest({"element": 0}) == {"element": 20}  # the whole workload, released
    last = rows_of(reader, {"element": 19}, {"element": 20})[0]["end"]
    now[0] = 103.4
    assert latest({"element": 20}) == {"element": 20}  # quiet for less than 0.5 s
    now[0] = 104.5
    ticked = latest({"element": 20})
    assert ticked == {"element": 20, "clock": last + 1000 + 7}
    [row] = rows_of(reader, {"element": 20}, ticked)
    assert (row["element"], row["start"], row["end"], row["s"]) == (
        CLOCK_GRAPH,
        last + 1007,
        last + 1007,
        None,
    )
    assert latest(ticked) == ticked  # no time has passed: no new batch
    assert rows_of(reader, ticked, ticked) == []


def test_without_idle_timeout_a_generator_that_ran_out_stays_put(tmp_path: Path) -> None:
    reader = GeneratorReader(
        {"workload": "W4", "scale": "20", "seed": "3", "stream": "http://e/s",
         "cache": str(tmp_path), "rate": "10"}
    )  # fmt: skip
    now = [100.0]
    reader.clock = frozen(now)
    reader.latestOffset({"element": 0}, ReadAllAvailable())
    now[0] = 1000.0
    assert reader.latestOffset({"element": 20}, ReadAllAvailable()) == {"element": 20}


class Pushed(PushStreamReader):
    """A push source whose connection is a list the test appends to."""

    @property
    def source(self) -> str:
        return "test://pushed"

    def receive(self, inbox: Inbox) -> Callable[[], None]:
        self.inbox = inbox
        return lambda: None


def test_a_quiet_push_source_moves_time_from_its_latest_element() -> None:
    reader = Pushed({"stream": "http://e/s", "idleTimeout": "2"})
    now = [50.0]
    reader.idle.clock = frozen(now)
    reader.idle.arrived = now[0]
    start = reader.initialOffset()
    assert reader.latestOffset(start, ReadAllAvailable()) == {"received": 0}  # nothing seen
    for document in TRIG_DOCUMENTS:  # elements at 2, 2, 5 and one without time
        reader.inbox.put(document.encode())
    assert reader.latestOffset(start, ReadAllAvailable()) == {"received": 3}
    now[0] = 52.25
    ticked = reader.latestOffset({"received": 3}, ReadAllAvailable())
    assert ticked == {"received": 3, "clock": 5 + 250}
    rows = rows_of(reader, {"received": 3}, ticked)
    assert [(r["element"], r["end"], r["kind"]) for r in rows] == [(CLOCK_GRAPH, 255, "abstract")]


def test_an_idle_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="must be positive"):
        IdleClock(0)
