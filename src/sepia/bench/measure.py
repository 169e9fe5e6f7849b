"""Measuring one run of one system on one variant, in a fresh child process.

Why a child process: peak memory is the child's own peak resident set size
(``resource.getrusage(RUSAGE_SELF).ru_maxrss`` read at its end), which tracemalloc could not
give without slowing Python code 2-3x and without seeing pyoxigraph's native memory; and a
fresh interpreter (``spawn``) starts every system from the same state. The interpreter's own
footprint is reported too (``start_rss_mib``: the peak before the run began), so the run's
share is the difference. Wall time covers the system's whole run, file to counted results.
"""

from __future__ import annotations

import multiprocessing
import resource
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sepia.bench.systems.base import RunOutcome
from sepia.bench.workload import Manifest

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
    x: float | None = None
    series: str | None = None

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
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _child(system_name: str, data: str, variant_name: str, budget: float) -> dict[str, Any]:
    """Runs in the child: the system's run, timed, with its peak memory."""
    from sepia.bench.systems import system  # imported here: the child starts empty

    manifest = Manifest.load(Path(data))
    variant = manifest.variant(variant_name)
    start_rss = _rss_mib()
    started = time.perf_counter()
    try:
        outcome: RunOutcome = system(system_name).run(
            Path(data), manifest, variant, started + budget)
    except Exception:  # a failing system is a row in the table, not a crashed benchmark
        return {"error": traceback.format_exc(limit=3)}
    return {"outcome": outcome, "seconds": time.perf_counter() - started,
            "peak_rss_mib": _rss_mib(), "start_rss_mib": start_rss}


def _latency_summary(latencies: tuple[float, ...]) -> dict[str, Any]:
    if not latencies:
        return {}
    values = np.asarray(latencies)
    quantiles = np.percentile(values, np.linspace(0, 100, CDF_POINTS))
    return {"p50_ms": float(np.percentile(values, 50)), "p99_ms": float(np.percentile(values, 99)),
            "latency_quantiles_ms": tuple(round(float(q), 4) for q in quantiles)}


def measure(system_name: str, data: Path, manifest: Manifest, variant_name: str,
            budget: float) -> Measurement:
    """Run ``system_name`` on one variant in a fresh process, at most ``budget`` seconds of
    input reading (the run then reports the prefix it read, as status "partial")."""
    variant = manifest.variant(variant_name)
    placement = {"x": variant.x, "series": variant.params.get("series")}
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        raw = pool.submit(_child, system_name, str(data), variant_name, budget).result()
    if "error" in raw:
        reason = raw["error"].strip().splitlines()[-1]
        return Measurement(system_name, variant_name, "failed", reason, **placement)
    outcome: RunOutcome = raw["outcome"]
    return Measurement(
        system_name, variant_name, "ok" if outcome.complete else "partial",
        "" if outcome.complete else f"stopped after the {budget:g} s budget",
        seconds=raw["seconds"], elements=outcome.elements, triples=outcome.triples,
        results=outcome.results, peak_rss_mib=raw["peak_rss_mib"],
        start_rss_mib=raw["start_rss_mib"], **_latency_summary(outcome.latencies_ms), **placement,
    )
