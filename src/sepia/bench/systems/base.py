"""The protocol every measured system follows (engines, baselines, peers), so an engine
plugs into the harness by adding one class to the registry in ``systems/__init__.py``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from sepia.bench.generators import Workload
from sepia.bench.workload import Manifest, Variant


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What a system did with one variant of a workload.

    ``results`` counts result rows (matches for event workloads: a Kleene match counts once);
    ``latencies_ms`` holds, per result, the wall time from the arrival of the element that
    completed it to the result being produced, when the system can tell; ``complete`` is
    False when the run hit its time budget, and the counts then cover the prefix it read.
    """

    elements: int
    triples: int
    results: int | None
    latencies_ms: tuple[float, ...] = ()
    complete: bool = True


class System(Protocol):
    """A thing `sepia bench` measures."""

    name: str
    description: str

    def unavailable(self) -> str | None:
        """Why the system cannot run at all on this machine or in this version, else None."""
        ...

    def cannot_express(self, workload: Workload, variant: Variant) -> str | None:
        """Why the system cannot run this workload's query, else None."""
        ...

    def run(self, data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
        """Run the variant on the generated data; stop reading input after ``deadline``
        (a ``time.perf_counter()`` value) and say so with ``complete=False``."""
        ...
