"""`sepia validate` on the Spark ingest pipeline: per-stream counts, time range, rate, errors.

The pipeline runs to the end of its input (`availableNow`), and each micro-batch is
summarised by Spark (a grouped aggregate) before the small summary reaches the driver.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sepia.rdf.time import TimeKind
from sepia.runtime.spark.ingest import IngestOptions, StreamSource, is_error, stream_rows


@dataclass(frozen=True, slots=True)
class ErrorRecord:
    """One bad element or syntax error, as the reader reported it."""

    stream: str
    file: str
    line: int | None
    element: str | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return (
            f"{where}: element {self.element}: {self.reason}"
            if self.element
            else f"{where}: {self.reason}"
        )


@dataclass(slots=True)
class StreamReport:
    """What validation found in one stream."""

    stream: str
    elements: int = 0
    triples: int = 0
    first: int | None = None
    last: int | None = None
    kind: TimeKind = TimeKind.ABSTRACT
    errors: list[ErrorRecord] = field(default_factory=list)

    def add(self, elements: int, triples: int, first: int, last: int, kind: str) -> None:
        self.elements += elements
        self.triples += triples
        self.first = first if self.first is None else min(self.first, first)
        self.last = last if self.last is None else max(self.last, last)
        self.kind = TimeKind(kind)

    @property
    def data_rate(self) -> float | None:
        """Elements per time unit of the stream's own clock (per second for dateTime)."""
        if self.first is None or self.last is None or self.last == self.first:
            return None
        span = self.last - self.first
        return self.elements / (span / 1000 if self.kind is TimeKind.DATETIME else span)


@dataclass(slots=True)
class ValidationReport:
    """Per-stream reports and how long reading took."""

    streams: dict[str, StreamReport]
    seconds: float = 0.0

    @property
    def triples(self) -> int:
        return sum(report.triples for report in self.streams.values())

    @property
    def elements(self) -> int:
        return sum(report.elements for report in self.streams.values())

    @property
    def errors(self) -> list[ErrorRecord]:
        return [error for report in self.streams.values() for error in report.errors]


Progress = Callable[[ValidationReport], None]


def validate_streams(
    spark: SparkSession,
    sources: Iterable[StreamSource],
    options: IngestOptions | None = None,
    progress: Progress | None = None,
) -> ValidationReport:
    """Read every source through the Spark pipeline and summarise it per stream."""
    sources = list(sources)
    report = ValidationReport({source.stream: StreamReport(source.stream) for source in sources})
    started = time.perf_counter()

    def summarise(batch: DataFrame, _batch_id: int) -> None:
        _add_batch(report, batch)
        report.seconds = time.perf_counter() - started
        if progress:
            progress(report)

    with tempfile.TemporaryDirectory(prefix="sepia-validate-") as checkpoint:
        query = (
            stream_rows(spark, sources, options)
            .writeStream.foreachBatch(summarise)
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
    report.seconds = time.perf_counter() - started
    return report


def _add_batch(report: ValidationReport, batch: DataFrame) -> None:
    """Fold one micro-batch into the report: Spark aggregates, the driver adds up."""
    batch = batch.persist()
    try:
        good = batch.where(~is_error())
        summary = good.groupBy("stream").agg(
            F.count_distinct("file", "seq").alias("elements"),
            F.count("s").alias("triples"),
            F.min("start").alias("first"),
            F.max("end").alias("last"),
            F.first("kind").alias("kind"),
        )
        for row in summary.collect():
            report.streams[row.stream].add(row.elements, row.triples, row.first, row.last, row.kind)
        bad = batch.where(is_error()).select("stream", "file", "line", "element", "error")
        for row in bad.collect():
            report.streams[row.stream].errors.append(
                ErrorRecord(row.stream, row.file, row.line, row.element, row.error)
            )
    finally:
        batch.unpersist()
