"""The paced local replay (`local-paced`): elements are released at the given rate, each
result's latency runs from its element's scheduled arrival, and pacing changes no result.

The replays run on a virtual clock: every reading of it advances it by a fixed step (the
cost of the work between two readings) and a sleep advances it by its length, so the
schedule and the budget give the same counts on an idle or a loaded machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from sepia.bench.systems import local_engine
from sepia.bench.systems.local_engine import PacedLocalEngine, _elements, _session, replay
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement
from sepia.workloads import generate
from sepia.workloads.manifest import Manifest


class VirtualClock:
    """Seconds that advance by ``step`` at each reading and by each sleep's length."""

    def __init__(self, step: float) -> None:
        self.time, self.step, self.slept = 0.0, step, 0.0

    def now(self) -> float:
        self.time += self.step
        return self.time

    def sleep(self, seconds: float) -> None:
        self.time += seconds
        self.slept += seconds

    def wait_until(self, moment: float) -> None:
        self.sleep(max(0.0, moment - self.time))


def _w5(tmp_path: Path, scale: int = 300) -> tuple[Path, Manifest]:
    generate("W5", scale=scale, seed=7, out=tmp_path)
    return tmp_path, Manifest.load(tmp_path)


def test_a_paced_replay_keeps_its_schedule_and_its_results(tmp_path: Path) -> None:
    data, manifest = _w5(tmp_path)
    variant = manifest.variants[0]
    elements = _elements(data, manifest, variant)[:60]
    clock = VirtualClock(step=0.0001)
    full = replay(_session(data, manifest, variant), elements, clock.now() + 60, clock=clock)
    started = clock.now()
    paced = replay(_session(data, manifest, variant), elements, started + 60, 200.0, clock)
    took = clock.now() - started
    assert took >= 59 / 200  # the 60th element is released 59/200 s after the first
    assert clock.slept > 0.25  # mostly waiting: each reading costs 0.1 ms of the 5 ms gaps
    assert (paced.elements, paced.triples, paced.results) == (60, full.triples, full.results)
    assert full.results and len(paced.latencies_ms) == len(full.latencies_ms)
    assert all(latency >= 0 for latency in paced.latencies_ms)


@pytest.mark.parametrize("reading_s", [0.0, 4.0])
def test_the_paced_system_stops_at_its_budget_with_the_prefix_it_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reading_s: float
) -> None:
    """Reading the stream (4 s of a 5 s budget here) is start-up, not budget: the paced
    replay reads the same prefix however long the reading took."""
    data, manifest = _w5(tmp_path, scale=10_000)
    variant = manifest.variants[0]
    total = len(_elements(data, manifest, variant))
    # Two readings a pushed element (1 ms each): 500 elements/s at full speed. The first
    # 1.5 s (PEAK_SHARE of the 5 s budget) learn that rate over 750 elements; the paced
    # replay releases 50 a second from then on, so about 3.5 s x 50 of them fit.
    clock = VirtualClock(step=0.001)

    def slowly_read(*args: object) -> list:
        clock.sleep(reading_s)
        return _elements(*args)

    monkeypatch.setattr(local_engine, "_elements", slowly_read)
    outcome = PacedLocalEngine(clock).run(data, manifest, variant, clock.now() + 5.0)
    assert not outcome.complete and 170 <= outcome.elements <= 180 < total  # 175 today
    assert outcome.startup_s == pytest.approx(reading_s, abs=0.01)


def test_the_wall_clock_never_sleeps_a_negative_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock moved past the sleep's start between two reads of it (a paced W7 run
    failed with 'sleep length must be non-negative'): the wait reads it once."""
    readings = iter([0.0, 1.0, 2.0, 3.0])
    slept: list[float] = []
    monkeypatch.setattr(local_engine.time, "perf_counter", lambda: next(readings))
    monkeypatch.setattr(local_engine.time, "sleep", slept.append)
    local_engine.WALL.wait_until(local_engine.SPIN_S + 0.5)
    assert slept == [0.5]


class SlowSession:
    """A session whose every push costs ``cost`` s of the virtual clock (one push of the
    element stamped ``stall_at`` ``stall`` s more) and makes the result of the instant
    before each element it is given due."""

    def __init__(self, clock: VirtualClock, cost: float, stall_at: int, stall: float) -> None:
        self.clock, self.cost, self.stall_at, self.stall = clock, cost, stall_at, stall
        self.pushed: list[int] = []

    def push_many(self, elements: list[StreamElement]) -> list[Result]:
        self.pushed.append(len(elements))
        stalled = any(e.time == self.stall_at for e in elements)
        self.clock.sleep(self.cost + (self.stall if stalled else 0.0))
        return [Result("q", e.time - 1, boolean=True) for e in elements]

    def flush(self) -> list[Result]:
        return []


def test_a_backlog_goes_in_at_once_each_result_timed_from_its_element() -> None:
    """Elements 10 ms apart, 8 ms a push; the push of the 5th (arrived at 40 ms) stalls
    50 ms more, done at 98 ms. The 6th-10th (arrived at 50-90 ms) then go in as one push,
    done at 106 ms: latencies 56, 46, 36, 26, 16 ms. The 11th (100 ms) waits for it, done
    at 114 (14 ms); the 12th (110 ms) at 122 (12); the 13th (120 ms) at 130 (10); from
    the 14th (130 ms) each is pushed on arrival (8 ms). One push per element behind the
    stall drained the backlog at 2 ms an element: 56, 54, 52, ..."""
    clock = VirtualClock(step=0.0)
    session = SlowSession(clock, cost=0.008, stall_at=5, stall=0.05)
    elements = [StreamElement("s", f"g{t}", t, t, ()) for t in range(1, 21)]
    outcome = replay(session, elements, 60.0, 100.0, clock)  # type: ignore[arg-type]
    assert session.pushed == [1] * 5 + [5] + [1] * 10
    assert outcome.complete and (outcome.elements, outcome.results) == (20, 20)
    expected = [8] * 4 + [58, 56, 46, 36, 26, 16, 14, 12, 10] + [8] * 7
    assert [round(ms, 6) for ms in outcome.latencies_ms] == expected
