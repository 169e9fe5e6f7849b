"""The benchmark's query-parsing measurement covers every query of a workload once."""

from __future__ import annotations

from pathlib import Path

from sepia.bench.parsing import time_parsing, workload_parsing
from sepia.workloads import generate


def test_every_distinct_query_of_a_workload_is_timed(tmp_path: Path) -> None:
    manifest = generate("W4", 200, 7, tmp_path / "w4")
    timings = workload_parsing(tmp_path / "w4", manifest)
    assert [t.query for t in timings] == sorted({v.query for v in manifest.variants})
    assert len(timings) == 4
    assert all(0 < t.median_ms <= t.max_ms for t in timings)


def test_lines_count_the_non_blank_lines() -> None:
    timing = time_parsing("q", "PREFIX : <http://e/>\n\nSELECT * WHERE { ?s :p ?o }\n", repeat=2)
    assert timing.lines == 2
