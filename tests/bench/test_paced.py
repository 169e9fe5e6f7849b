"""The paced local replay (`local-paced`): elements are released at the given rate, each
result's latency runs from its element's scheduled arrival, and pacing changes no result."""

from __future__ import annotations

import time
from pathlib import Path

from sepia.bench.systems.local_engine import PacedLocalEngine, _elements, _session, replay
from sepia.workloads import generate
from sepia.workloads.manifest import Manifest


def _w5(tmp_path: Path, scale: int = 300) -> tuple[Path, Manifest]:
    generate("W5", scale=scale, seed=7, out=tmp_path)
    return tmp_path, Manifest.load(tmp_path)


def test_a_paced_replay_keeps_its_schedule_and_its_results(tmp_path: Path) -> None:
    data, manifest = _w5(tmp_path)
    variant = manifest.variants[0]
    elements = _elements(data, manifest, variant)[:60]
    full = replay(_session(data, manifest, variant), elements, time.perf_counter() + 60)
    started = time.perf_counter()
    paced = replay(_session(data, manifest, variant), elements, started + 60, rate=200.0)
    took = time.perf_counter() - started
    assert took >= 59 / 200  # the 60th element is released 59/200 s after the first
    assert (paced.elements, paced.triples, paced.results) == (60, full.triples, full.results)
    assert full.results and len(paced.latencies_ms) == len(full.latencies_ms)
    assert all(latency >= 0 for latency in paced.latencies_ms)


def test_the_paced_system_stops_at_its_budget_with_the_prefix_it_read(tmp_path: Path) -> None:
    data, manifest = _w5(tmp_path, scale=10_000)
    variant = manifest.variants[0]
    total = len(_elements(data, manifest, variant))
    _session(data, manifest, variant)  # the process's first parse, outside the budget
    # 10,000 elements at 10% of the peak rate take over the ~4 s left after learning it
    # unless the peak is over 25k elements/s; 5 s leave time to learn it on a busy machine
    # (with 1 s, a load of 11 left none: 0 elements read)
    outcome = PacedLocalEngine().run(data, manifest, variant, time.perf_counter() + 5.0)
    assert not outcome.complete and 0 < outcome.elements < total
