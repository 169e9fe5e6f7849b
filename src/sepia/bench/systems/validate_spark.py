"""`sepia validate` through the Spark ingest pipeline: the stream files read, parsed and
summarised by Spark (local mode), measured against the floor (pyoxigraph parse alone).

The run includes the SparkSession's start: a user of `sepia validate` pays it too. The
session is local[*] (both cores here), one task per stream file.
"""

from __future__ import annotations

from pathlib import Path

from sepia.bench.systems.base import RunOutcome
from sepia.workloads import Kind, Workload
from sepia.workloads.manifest import Manifest, Variant


class ValidateSpark:
    name = "validate-spark"
    description = "`sepia validate` through Spark (ingest), session start included"
    opt_in = True  # a JVM per run (about a minute of --quick on a busy machine): --engine

    def unavailable(self) -> str | None:
        from sepia.runtime.spark.session import SparkUnavailable, java_major_version

        try:
            java_major_version()
        except SparkUnavailable as error:
            return str(error)
        return None

    def cannot_express(self, workload: Workload, variant: Variant) -> str | None:
        return None if workload.kind is Kind.INGEST else "measures ingest only"

    def counts_differ(self, workload: Workload, variant: Variant) -> str | None:
        return None

    def run(self, data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
        from sepia.runtime.spark.ingest import StreamSource
        from sepia.runtime.spark.session import spark_session
        from sepia.runtime.spark.validate import validate_streams

        streams = manifest.streams_of(variant)
        sources = [StreamSource(s.iri, data / s.path) for s in streams]
        report = validate_streams(spark_session(), sources)
        if report.errors:
            raise RuntimeError(f"validate found {len(report.errors)} errors: {report.errors[0]}")
        return RunOutcome(report.elements, report.triples, None)
