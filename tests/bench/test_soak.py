"""`sepia bench soak`: the child streams a workload through the local engine and reports
its memory at every tenth; its answers are the engine's own over the same files."""

from __future__ import annotations

from pathlib import Path

from sepia.bench.soak import Mark, run_soak, verdict
from sepia.bench.systems.local_engine import _elements, _session
from sepia.workloads import generate


def test_the_soak_child_marks_every_tenth_and_counts_the_engines_results(tmp_path: Path):
    data = tmp_path / "w3"
    manifest = generate("W3", 2_000, 7, data)
    variant = manifest.variant("average-price")
    session = _session(data, manifest, variant)
    expected = sum(len(session.push(e)) for e in _elements(data, manifest, variant))
    expected += len(session.flush())
    marks, ended = run_soak(data, "average-price", 300)
    assert ended == "ok"
    assert [m.elements for m in marks] == list(range(200, 2_001, 200))
    assert marks[-1].results == expected > 0
    peaks = [m.peak_mib for m in marks]
    assert peaks == sorted(peaks) and all(m.rss_mib > 0 for m in marks)  # a peak never falls


def test_the_verdict_compares_the_first_tenths_peak_with_the_ends():
    def mark(elements: int, peak: float) -> Mark:
        return Mark(elements, 1.0, peak, peak, 10, 0, 0)

    assert verdict([mark(100, 100.0), mark(1_000, 129.0)])["met"] is True
    found = verdict([mark(100, 100.0), mark(500, 120.0), mark(1_000, 131.0)])
    assert (found["ratio"], found["met"]) == (1.31, False)
    assert verdict([mark(100, 100.0)])["met"] is False
