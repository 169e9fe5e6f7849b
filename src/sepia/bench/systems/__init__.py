"""The registry of measured systems: baselines, peers and Sepia's runtimes, and slots for
what does not exist yet. A system plugs in by replacing its slot with a class that follows
``base.System``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sepia.bench.systems import naive_events, naive_intervals
from sepia.bench.systems.base import RunOutcome, System
from sepia.bench.systems.flink import Flink
from sepia.bench.systems.floor import Floor
from sepia.bench.systems.local_engine import LocalEngine, PacedLocalEngine
from sepia.bench.systems.naive_windows import run_windows
from sepia.bench.systems.rspjs import RspJs
from sepia.bench.systems.spark import SYSTEMS as SPARK_SYSTEMS
from sepia.bench.systems.validate_spark import ValidateSpark
from sepia.workloads import Kind, Workload
from sepia.workloads.manifest import Manifest, Variant

Matcher = Callable[[Path, Manifest, Variant, float], RunOutcome]

EVENT_MATCHERS: dict[str, Matcher] = {
    "W4": naive_events.stocks,
    "W11": naive_events.stocks,
    "W12": naive_events.stocks,
    "W5": naive_events.smart_grid,
    "W6": naive_events.credit_card,
    "W10": naive_events.credit_card,
    "W7": naive_events.traffic,
    "W8": naive_intervals.drop_then_rise,
    "W9": naive_intervals.repeated_delays,
}


class Naive:
    """SPARQL over each window snapshot (window workloads) or hand-written nested loops
    (event workloads): what a user without a stream engine would do."""

    name = "naive"
    description = "pyoxigraph SPARQL per window snapshot / nested loops per event workload"

    def unavailable(self) -> str | None:
        return None

    def cannot_express(self, workload: Workload, variant: Variant) -> str | None:
        if workload.kind is Kind.INGEST:
            return "ingest has no query"
        if workload.kind is Kind.EVENT and workload.id not in EVENT_MATCHERS:
            return f"no nested-loop matcher written for {workload.id}"
        return None

    def counts_differ(self, workload: Workload, variant: Variant) -> str | None:
        return None

    def run(self, data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
        if manifest.workload in EVENT_MATCHERS:
            return EVENT_MATCHERS[manifest.workload](data, manifest, variant, deadline)
        return run_windows(data, manifest, variant, deadline)


SYSTEMS: dict[str, System] = {
    s.name: s
    for s in (
        Floor(), Naive(), LocalEngine(), PacedLocalEngine(), ValidateSpark(), RspJs(), Flink(),
        *SPARK_SYSTEMS,
    )
}


DEFAULT_SYSTEMS = tuple(name for name, s in SYSTEMS.items() if not getattr(s, "opt_in", False))
"""What a run without --engine measures: the systems that are not opt-in (a JVM per run)."""


def system(name: str) -> System:
    try:
        return SYSTEMS[name]
    except KeyError:
        raise KeyError(f"unknown system {name!r}; known: {', '.join(SYSTEMS)}") from None
