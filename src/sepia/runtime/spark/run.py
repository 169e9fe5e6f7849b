"""`sepia run --engine spark`: a run's queries as one Spark Structured Streaming job.

Finite runs (every stream bound to a file or a folder, no `follow`) read what is there with
`availableNow` triggers, then mark the end of input so every key flushes (job.py), and
return. A followed run (live sources, or `follow=True` on folders) keeps going, emitting
results as the watermark passes them, until it is stopped (Ctrl-C stops it gracefully).
Restarting with the same checkpoint resumes where the last committed batch ended.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from sepia.runtime.inputs import NamedQuery, background
from sepia.runtime.spark.elements import IngestError
from sepia.runtime.spark.host import job_spec
from sepia.runtime.spark.ingest import IngestOptions, StreamSource, stream_rows
from sepia.runtime.spark.job import end_folder, mark_end, results_frame
from sepia.runtime.spark.session import SparkConfig, spark_session
from sepia.runtime.spark.sinks import ResultJournal
from sepia.runtime.spark.sources import parse_spec, source_for
from sepia.runtime.spark.units import units_of


@dataclass(frozen=True, slots=True)
class SparkRunOptions:
    """How a Spark run reads and evaluates (the CLI's options that are not about output)."""

    allowed_lateness: int = 0
    on_error: str = "stop"
    rdfs: bool = False
    follow: bool = False
    trigger_seconds: float = 1.0
    engine: str = "reference"


def run_on_spark(
    queries: Sequence[NamedQuery],
    bindings: Mapping[str, str],
    background_paths: Sequence[tuple[str | None, Path]] = (),
    options: SparkRunOptions | None = None,
    *,
    master: str = "local[*]",
    checkpoint: Path | None = None,
    output: str = "-",
    fmt: str | None = None,
    variables: list[str] | None = None,
    spark: SparkSession | None = None,
) -> None:
    """Run `queries` over the streams `bindings` gives (IRI -> file, folder or source SPEC)
    and write their results to `output` ("-": standard output) in `fmt`."""
    options = options or SparkRunOptions()
    spark = spark or spark_session(SparkConfig(master=master))
    scratch = None if checkpoint is not None else Path(tempfile.mkdtemp(prefix="sepia-spark-"))
    home = checkpoint or scratch
    assert home is not None
    try:
        units = units_of([(q.name, q.query) for q in queries])
        missing = {iri for unit in units for iri in unit.streams} - set(bindings)
        if missing:
            raise ValueError("no --stream given for " + ", ".join(f"<{i}>" for i in missing))
        spec = job_spec(
            units, background(background_paths),
            engine=options.engine, rdfs=options.rdfs, on_error=options.on_error,
        )  # fmt: skip
        ingest = IngestOptions(allowed_lateness=options.allowed_lateness)
        ends = {iri: end_folder(home, n) for n, iri in enumerate(bindings)}
        frames = [_stream(spark, iri, text, ends, ingest) for iri, text in bindings.items()]
        sink = ResultJournal(home / "results", output, fmt, variables)
        try:
            _drive(results_frame(frames, spec), sink, home, bindings, ends, options)
        finally:
            sink.close()
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _stream(
    spark: SparkSession, iri: str, spec: str, ends: dict[str, Path], ingest: IngestOptions
) -> DataFrame:
    """A stream's ingest rows; a file or folder also reads its end-of-input folder."""
    if parse_spec(spec) is not None:
        return source_for(spark, iri, spec, ingest)
    sources = [StreamSource(iri, Path(spec)), StreamSource(iri, ends[iri])]
    return stream_rows(spark, sources, ingest)


def _drive(
    results: DataFrame,
    sink: ResultJournal,
    home: Path,
    bindings: Mapping[str, str],
    ends: dict[str, Path],
    options: SparkRunOptions,
) -> None:
    """Run the streaming query: to the end of a finite input, or until stopped."""
    writer = results.writeStream.foreachBatch(sink).option("checkpointLocation", str(home / "job"))
    finite = not options.follow and all(parse_spec(s) is None for s in bindings.values())
    if not finite:
        interval = f"{round(options.trigger_seconds * 1000)} milliseconds"
        _await(writer.trigger(processingTime=interval).start())
        return
    if any(Path(s).is_dir() for s in bindings.values()):
        _await(writer.trigger(availableNow=True).start())  # every file first, in order
    for folder in ends.values():
        mark_end(folder)
    _await(writer.trigger(availableNow=True).start())


class SparkRunError(RuntimeError):
    """The streaming query failed; the message is the cause, without the JVM's stack."""


def _await(query: StreamingQuery) -> None:
    """Wait for a streaming query; Ctrl-C stops it after the batch in progress."""
    try:
        query.awaitTermination()
    except KeyboardInterrupt:
        query.stop()
        raise
    except StreamingQueryException as error:
        raise SparkRunError(_cause(str(error))) from None


def _cause(message: str) -> str:
    """The Python error inside a failed query's message (a bad element), else its first line."""
    found = re.search(rf"{IngestError.__name__}: (.*)", message)
    return found.group(1).strip() if found else message.strip().splitlines()[0]
