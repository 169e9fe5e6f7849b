"""`sepia bench soak`: memory over a long stream follows the live state, not the input.

W3 (a 40 s C-SPARQL window, a fresh trade IRI per event) and W4's V-shape (SPAseq, WITHIN
60 minutes, PARTITION BY company, a fresh transaction literal per event) are generated at
the soak's scale (1,000,000 elements by default) and streamed through the local engine in a
fresh interpreter (``python -m sepia.bench.soak DATA VARIANT``), read element by element as
a live input would be, so that nothing but the engine's state is held. At every tenth of
the stream the child reports its peak resident set so far (VmHWM), its resident set now,
the dictionary's terms and the terms forgotten; the verdict compares the peak at the first
tenth with the peak at the end (the target: within 1.3x).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from sepia.workloads import Workload, workload

ID = "soak"
SCALE, QUICK_SCALE = 1_000_000, 20_000
TARGET = 1.3
"""Peak resident set at the whole stream over that at its first tenth."""
RUNS = (("W3", "average-price"), ("W4", "v-shape-sc"))
MARKS = 10
TIMEOUT_S = 3600.0
"""Each soak run's limit (``--budget`` sets another): it then reports the marks it reached."""


@dataclass(frozen=True, slots=True)
class Mark:
    """The child's state after ``elements`` elements."""

    elements: int
    seconds: float
    peak_mib: float
    rss_mib: float
    terms: int
    forgotten: int
    results: int


def _status_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def soak_child(data: Path, variant_name: str) -> list[Mark]:
    """Stream the variant's elements through a session, one at a time; a mark each tenth."""
    from sepia.bench.systems.local_engine import _session
    from sepia.io.streams import read_stream
    from sepia.rdf.stream import StreamSet
    from sepia.workloads.manifest import Manifest

    manifest = Manifest.load(data)
    variant = manifest.variant(variant_name)
    total = sum(s.elements for s in manifest.streams_of(variant))
    every = max(1, total // MARKS)
    session = _session(data, manifest, variant)
    merged = StreamSet({s.iri: read_stream(data / s.path, s.iri)
                        for s in manifest.streams_of(variant)}).merged()
    marks, results, started = [], 0, time.perf_counter()

    def mark(done: int) -> None:
        """Linux keeps the resident set in per-CPU counters synced lazily, so VmHWM can read
        a few pages under an earlier reading: the peak so far is the highest one read."""
        state = session.state_size()
        peak = max(_status_mib("VmHWM"), marks[-1].peak_mib if marks else 0.0)
        marks.append(Mark(done, time.perf_counter() - started, peak,
                          _status_mib("VmRSS"), state["dictionary_terms"],
                          state["forgotten_terms"], results))
        print(json.dumps(dataclasses.asdict(marks[-1])), flush=True)

    done = 0
    for done, element in enumerate(merged, start=1):
        results += len(session.push(element))
        if done % every == 0 and done < total:
            mark(done)
    results += len(session.flush())
    mark(done)
    return marks


def run_soak(data: Path, variant: str, timeout_s: float) -> tuple[list[Mark], str]:
    """The child's marks, and how it ended ("ok", or why it did not finish)."""
    command = [sys.executable, "-m", "sepia.bench.soak", str(data), variant]
    try:
        child = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                               check=False)
        out, ended = child.stdout, "ok" if child.returncode == 0 else (
            (child.stderr.strip() or f"exit code {child.returncode}").splitlines()[-1])
    except subprocess.TimeoutExpired as stopped:
        out = stopped.stdout.decode() if isinstance(stopped.stdout, bytes) else stopped.stdout or ""
        ended = f"stopped after {timeout_s:g} s"
    marks = [Mark(**json.loads(line)) for line in out.splitlines() if line.startswith("{")]
    return marks, ended


def verdict(marks: list[Mark]) -> dict[str, Any]:
    """Peak at the first tenth and at the end, their ratio, and whether it meets TARGET."""
    if len(marks) < 2:
        return {"ratio": None, "met": False}
    first, last = marks[0], marks[-1]
    ratio = last.peak_mib / first.peak_mib
    return {"first_elements": first.elements, "first_peak_mib": round(first.peak_mib, 1),
            "last_elements": last.elements, "last_peak_mib": round(last.peak_mib, 1),
            "ratio": round(ratio, 3), "met": ratio <= TARGET}


def bench_soak(scale: int, seed: int, data_of: Callable[[Workload, int], Path], out: Path,
               timeout_s: float, console: Console) -> list[Path]:
    """Generate W3 and W4 at ``scale`` (``data_of``: the harness's data folder of a
    workload at a scale), soak each, print the table, write the JSON."""
    from datetime import UTC, datetime

    documents = []
    for workload_id, variant in RUNS:
        with console.status(f"soak: generating {workload_id} at {scale:,} elements"):
            data = data_of(workload(workload_id), scale)
        with console.status(f"soak: {workload_id} {variant}, {scale:,} elements"):
            marks, ended = run_soak(data, variant, timeout_s)
        documents.append({"workload": workload_id, "variant": variant, "scale": scale,
                          "seed": seed, "ended": ended, **verdict(marks),
                          "marks": [dataclasses.asdict(m) for m in marks]})
        console.print(_table(workload_id, variant, marks, ended))
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{datetime.now(UTC):%Y-%m-%d}-{ID}.json"
    path.write_text(json.dumps(documents, indent=2) + "\n")
    return [path]


def _table(workload_id: str, variant: str, marks: list[Mark], ended: str) -> Table:
    found = verdict(marks)
    ratio = "n/a" if found["ratio"] is None else f"{found['ratio']:.2f}"
    table = Table(title=f"soak {workload_id} {variant}: peak end / first tenth {ratio} "
                        f"(target <= {TARGET}); {ended}")
    for name in ("elements", "seconds", "peak MiB", "RSS MiB", "terms", "forgotten",
                 "results"):
        table.add_column(name, justify="right")
    for m in marks:
        table.add_row(f"{m.elements:,}", f"{m.seconds:.1f}", f"{m.peak_mib:.1f}",
                      f"{m.rss_mib:.1f}", f"{m.terms:,}", f"{m.forgotten:,}", f"{m.results:,}")
    return table


if __name__ == "__main__":  # the child: python -m sepia.bench.soak DATA VARIANT
    soak_child(Path(sys.argv[1]), sys.argv[2])
