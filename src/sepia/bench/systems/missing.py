"""Systems the benchmark has a slot for but that do not exist yet. They are listed in every
table as "not available yet" with the reason, never faked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sepia.bench.generators import Workload
from sepia.bench.systems.base import RunOutcome
from sepia.bench.workload import Manifest, Variant


@dataclass(frozen=True, slots=True)
class NotYetAvailable:
    """A slot: the system's name, what it will measure, why it cannot run yet, and the
    workloads it applies to (None: all)."""

    name: str
    description: str
    reason: str
    workloads: tuple[str, ...] | None = None

    def unavailable(self) -> str | None:
        return self.reason

    def cannot_express(self, workload: Workload, variant: Variant) -> str | None:
        if self.workloads is not None and workload.id not in self.workloads:
            return f"does not apply to {workload.id}"
        return None

    def run(self, data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
        raise RuntimeError(f"{self.name} is not available yet: {self.reason}")


ENGINE_MISSING = "engine missing"

SLOTS = (
    NotYetAvailable("spark", "Sepia on Spark Structured Streaming (--engine spark)",
                    "the Spark job hosts the reference evaluator until the incremental engine "
                    "plugs into it: not a throughput figure yet",
                    workloads=tuple(f"W{i}" for i in range(1, 12))),
)
