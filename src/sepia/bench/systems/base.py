"""The protocol every measured system follows (engines, baselines, peers), so an engine
plugs into the harness by adding one class to the registry in ``systems/__init__.py``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from sepia.rdf.results import Result
from sepia.workloads import Workload
from sepia.workloads.manifest import Manifest, Variant


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What a system did with one variant of a workload.

    ``results`` counts result rows (matches for event workloads: a Kleene match counts once);
    ``latencies_ms`` holds, per result, the wall time from the arrival of the element that
    completed it to the result being produced, when the system can tell; ``complete`` is
    False when the run hit its time budget, and the counts then cover the prefix it read;
    ``peer_rss_mib`` is the peak memory of the processes a peer system ran in.
    """

    elements: int
    triples: int
    results: int | None
    latencies_ms: tuple[float, ...] = ()
    complete: bool = True
    peer_rss_mib: float | None = None  # a peer's own processes (sepia.bench.memory)
    startup_s: float | None = None
    """Start-up the run paid before reading (a SparkSession's): reported apart, not in the
    run's seconds."""
    counting_s: float | None = None
    """Seconds spent after the run reading its written results back to count them (the
    Spark job's jsonl): the harness's check, not the system's work, so reported apart too.
    The pass-through the job is compared with never reads its output back, and W4
    v-shape-stn's 967,515 lines took 3.3-3.9 s to count, a tenth of the job's time."""


class ResultCount:
    """Results as the benchmark counts them: rows, except that the rows of one SPAseq match
    (one per Kleene iteration, sharing a ``match`` id) count once, so an engine's count and
    the naive matchers' (one per match) measure the same thing. Counted as they come: a run
    keeps no results."""

    def __init__(self) -> None:
        self.rows = 0
        self.matches: set[str] = set()

    def add(self, results: Iterable[Result]) -> int:
        """Count ``results``; returns how many rows they were."""
        before = self.rows
        for result in results:
            self.add_row(result.match)
        return self.rows - before

    def add_row(self, match: str | None) -> None:
        """Count one result row by its ``match`` id (a jsonl line's, for systems that
        write their results)."""
        if match is None:
            self.rows += 1
        else:
            self.matches.add(match)

    @property
    def total(self) -> int:
        return self.rows + len(self.matches)


def count_results(results: Iterable[Result]) -> int:
    counter = ResultCount()
    counter.add(results)
    return counter.total


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

    def counts_differ(self, workload: Workload, variant: Variant) -> str | None:
        """Why the system's result count differs from the reference evaluator's by design
        (it counts something else, or reads the query differently), else None."""
        ...

    def run(self, data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
        """Run the variant on the generated data; stop reading input after ``deadline``
        (a ``time.perf_counter()`` value) and say so with ``complete=False``."""
        ...
