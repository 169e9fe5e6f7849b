"""Sepia on Spark in the benchmark: the workload's stream files through the Spark job
(`sepia run --engine spark`, the job's default engine: the incremental one), on `local[2]`
and on `local[1]` (the speed-up from a second core, W4-W7), the same job hosting the
reference evaluator (`spark-reference`, W4-W7: the adapter it had before), and Spark's own
pass-through (the same files read,
parsed and written by Spark, no query: the floor of any Spark job over them).

What the columns mean for these rows: the harness times the run; the SparkSession's start
(a user of `sepia run` pays it: ~10 s on an idle 2-core machine) is reported apart
(`startup_s`), and so is reading the job's written results back to count them
(`counting_s`), which the pass-through never does; `p50 ms` and
`p99 ms` are the durations of the job's micro-batches (from Spark's progress reports), not
per-result latencies: a result leaves at the end of the batch whose watermark passes it. A
Spark run reads its files to the end whatever the budget (a file source has no clean
mid-batch stop). The systems are opt-in (`sepia bench --engine spark ...`): each run starts
a JVM, too slow for every quick run of the suite.
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sepia.bench.systems.base import ResultCount, RunOutcome
from sepia.bench.systems.validate_spark import ValidateSpark
from sepia.workloads import Kind, Workload
from sepia.workloads.manifest import Manifest, Variant

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPEED_UP_WORKLOADS = ("W1", "W3", "W4", "W5", "W6", "W7", "W13")


@dataclass(frozen=True, slots=True)
class SparkJob:
    """The Spark job on a local master; `workloads` limits where it runs (None: all)."""

    name: str
    master: str
    description: str
    workloads: tuple[str, ...] | None = None
    opt_in: bool = True
    engine: str = "incremental"
    """What the job hosts (`sepia.runtime.spark.host.ENGINES`)."""

    unavailable = ValidateSpark.unavailable

    def cannot_express(self, workload: Workload, variant: Variant) -> str | None:
        if workload.kind is Kind.INGEST or variant.query is None:
            return "no query"
        if self.workloads is not None and workload.id not in self.workloads:
            return f"the {self.master} comparison runs on {', '.join(self.workloads)}"
        return None

    def counts_differ(self, workload: Workload, variant: Variant) -> str | None:
        return None

    def run(self, data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
        from sepia.runtime.inputs import load_query
        from sepia.runtime.spark.run import SparkRunOptions, run_on_spark

        assert variant.query is not None
        spark, startup = _warm_session(self.master)
        streams = manifest.streams_of(variant)
        with tempfile.TemporaryDirectory(prefix="sepia-bench-spark-") as scratch:
            out = Path(scratch) / "results.jsonl"
            batches = run_on_spark(
                [load_query(data / variant.query)],
                {s.iri: str(data / s.path) for s in streams},
                [(graph, data / path) for graph, path in manifest.background_of(variant)],
                SparkRunOptions(engine=self.engine, rdfs=variant.rdfs),
                checkpoint=Path(scratch) / "checkpoint", output=str(out), fmt="jsonl",
                spark=spark,
            )  # fmt: skip
            counting = time.perf_counter()
            counted = ResultCount()
            for line in out.open(encoding="utf-8") if out.exists() else ():
                counted.add_row(json.loads(line).get("match"))
            counting = time.perf_counter() - counting
        durations = tuple(float(b.duration_ms) for b in batches)
        elements, triples = sum(s.elements for s in streams), sum(s.triples for s in streams)
        return RunOutcome(elements, triples, counted.total, latencies_ms=durations,
                          startup_s=startup, counting_s=counting)  # fmt: skip


def _warm_session(master: str) -> tuple[SparkSession, float]:
    """The SparkSession, warmed by one small job, and the seconds that took (the start-up
    every run pays once, reported apart from the run's own time)."""
    from sepia.runtime.spark.session import SparkConfig, spark_session

    started = time.perf_counter()
    spark = spark_session(SparkConfig(master=master))
    spark.range(4).repartition(2).count()
    return spark, time.perf_counter() - started


@dataclass(frozen=True, slots=True)
class SparkPassThrough:
    """The variant's stream files read and parsed by the job's own reader (the same Arrow
    stage over the same file source) and their element rows written by Spark's Parquet file
    sink (exactly-once, like the job's), with no query in between: the floor of the job."""

    name: str
    master: str
    description: str
    opt_in = True
    unavailable = ValidateSpark.unavailable

    def cannot_express(self, workload: Workload, variant: Variant) -> str | None:
        return "no query" if workload.kind is Kind.INGEST or variant.query is None else None

    def counts_differ(self, workload: Workload, variant: Variant) -> str | None:
        return None

    def run(self, data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
        from sepia.runtime.spark.elements import ELEMENT_DDL
        from sepia.runtime.spark.ingest import StreamSource, file_paths, file_pieces, read_files
        from sepia.runtime.spark.progress import ProgressLog

        spark, startup = _warm_session(self.master)
        streams = manifest.streams_of(variant)
        paths = file_paths(spark, [StreamSource(s.iri, data / s.path) for s in streams])
        rows = file_pieces(paths).mapInArrow(read_files, ELEMENT_DDL)
        log = ProgressLog()
        with tempfile.TemporaryDirectory(prefix="sepia-bench-spark-") as scratch:
            query = (
                rows.writeStream.format("parquet")
                .option("path", f"{scratch}/rows")
                .option("checkpointLocation", f"{scratch}/checkpoint")
                .trigger(availableNow=True)
                .start()
            )
            query.awaitTermination()
            log.poll(query)
            written = spark.read.parquet(f"{scratch}/rows").count()
        elements = sum(s.elements for s in streams)
        if written != elements:
            raise RuntimeError(f"Spark wrote {written} element rows of {elements}")
        durations = tuple(float(b.duration_ms) for b in log.batches)
        triples = sum(s.triples for s in streams)
        return RunOutcome(elements, triples, None, durations, startup_s=startup)


SYSTEMS = (
    SparkJob("spark", "local[2]", "Sepia on Spark Structured Streaming, local[2] (--engine spark)"),
    SparkJob("spark-1core", "local[1]", "the same job on local[1] (speed-up from a 2nd core)",
             SPEED_UP_WORKLOADS),
    SparkJob("spark-reference", "local[2]", "the job hosting the reference evaluator (before "
             "the incremental engine)", SPEED_UP_WORKLOADS, engine="reference"),
    SparkPassThrough("spark-passthrough", "local[2]", "Spark alone, local[2]: the same files "
                     "read, parsed and written (Parquet), no query"),
    SparkPassThrough("spark-passthrough-1core", "local[1]", "the pass-through on local[1] "
                     "(its own speed-up from a 2nd core)"),
)  # fmt: skip
