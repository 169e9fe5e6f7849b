"""Measuring one run of one system on one variant, in a fresh child process.

Why a child process (``python -m sepia.bench.measure``): peak memory is the child's own peak
resident set size (VmHWM of /proc/self/status, read at its end), which
tracemalloc could not give without slowing Python code 2-3x and without seeing pyoxigraph's
native memory; and a fresh interpreter that imports only the system starts every run from
the same state. A system that raises is a "failed" row, not a crashed benchmark. The
interpreter's own footprint is reported too (``start_rss_mib``: the peak before the run
began), so the run's share is the difference. Wall time covers the system's whole run, from
the files to the counted results, the query's compile in it; the interpreter and the
engine's code are loaded before, as each system's own libraries are (pyoxigraph for the
floor and the baselines; the columnar reader's polars is imported in the run, timed, and
reported as start-up, apart, as a SparkSession's is).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sepia.bench.systems.base import RunOutcome
from sepia.workloads.manifest import Manifest

CDF_POINTS = 101  # latency quantiles kept per run: 0%, 1%, ..., 100%


@dataclass(frozen=True, slots=True)
class Measurement:
    """One row of the results: a system on a variant, or why it did not run."""

    system: str
    variant: str
    status: str  # ok, partial (budget hit), not available yet, cannot express, failed
    note: str = ""
    seconds: float | None = None
    elements: int | None = None
    triples: int | None = None
    results: int | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    latency_quantiles_ms: tuple[float, ...] = ()
    peak_rss_mib: float | None = None
    start_rss_mib: float | None = None
    peer_rss_mib: float | None = None  # the peer's process tree (Node, JVM), sampled
    startup_s: float | None = None  # start-up (a SparkSession's), not in ``seconds``
    counting_s: float | None = None  # reading written results back to count them, neither
    x: float | None = None
    series: str | None = None
    checked: str = ""  # the count against the reference evaluator's (sepia.bench.check)

    @property
    def ran(self) -> bool:
        return self.status in ("ok", "partial")

    @property
    def triples_per_s(self) -> float | None:
        return self.triples / self.seconds if self.ran and self.seconds else None

    @property
    def events_per_s(self) -> float | None:
        return self.elements / self.seconds if self.ran and self.seconds else None


def _rss_mib() -> float:
    """This process's peak resident set (VmHWM), in MiB. Not ``getrusage().ru_maxrss``: Linux
    carries that over exec, so a child would report its parent's peak at fork time."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # not Linux: KiB or bytes


def _latency_summary(latencies: tuple[float, ...]) -> dict[str, Any]:
    if not latencies:
        return {}
    values = np.asarray(latencies)
    quantiles = np.percentile(values, np.linspace(0, 100, CDF_POINTS))
    return {"p50_ms": float(np.percentile(values, 50)), "p99_ms": float(np.percentile(values, 99)),
            "latency_quantiles_ms": [round(float(q), 4) for q in quantiles]}


def run_child(system_name: str, data: Path, variant_name: str, budget: float) -> dict[str, Any]:
    """What the child process does: the system's run, timed, with its peak memory."""
    import sepia.runtime.local  # noqa: F401  the engine's code, loaded before the clock
    from sepia.bench.systems import system  # imported here: the parent needs none of it

    manifest = Manifest.load(data)
    variant = manifest.variant(variant_name)
    chosen = system(system_name)
    start_rss = _rss_mib()
    started = time.perf_counter()
    outcome: RunOutcome = chosen.run(data, manifest, variant, started + budget)
    apart = (outcome.startup_s or 0.0) + (outcome.counting_s or 0.0)
    seconds = time.perf_counter() - started - apart
    return {"status": "ok" if outcome.complete else "partial", "seconds": seconds,
            "startup_s": outcome.startup_s, "counting_s": outcome.counting_s,
            "elements": outcome.elements, "triples": outcome.triples,
            "results": outcome.results, "peak_rss_mib": _rss_mib(),
            "peer_rss_mib": outcome.peer_rss_mib,
            "start_rss_mib": start_rss, **_latency_summary(outcome.latencies_ms)}


def measure(system_name: str, data: Path, manifest: Manifest, variant_name: str,
            budget: float) -> Measurement:
    """Run ``system_name`` on one variant in a fresh interpreter, at most ``budget`` seconds of
    input reading (the run then reports the prefix it read, as status "partial")."""
    variant = manifest.variant(variant_name)
    placement = {"x": variant.x, "series": variant.params.get("series")}
    command = [sys.executable, "-m", "sepia.bench.measure", system_name, str(data),
               variant_name, str(budget)]
    child = subprocess.run(command, capture_output=True, text=True, check=False)
    if child.returncode != 0:
        lines = (child.stderr.strip() or f"exit code {child.returncode}").splitlines()
        return Measurement(system_name, variant_name, "failed", lines[-1], **placement)
    raw = json.loads(child.stdout.strip().splitlines()[-1])
    status = raw.pop("status")
    note = "" if status == "ok" else f"stopped after the {budget:g} s budget"
    quantiles = tuple(raw.pop("latency_quantiles_ms", ()))
    return Measurement(system_name, variant_name, status, note, latency_quantiles_ms=quantiles,
                       **raw, **placement)


if __name__ == "__main__":  # the child: python -m sepia.bench.measure SYSTEM DATA VARIANT BUDGET
    name, folder, variant_arg, budget_arg = sys.argv[1:5]
    print(json.dumps(run_child(name, Path(folder), variant_arg, float(budget_arg))))
