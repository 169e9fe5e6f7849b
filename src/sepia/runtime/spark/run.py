"""`sepia run --engine spark`: a run's queries as one Spark Structured Streaming job.

Finite runs (every stream bound to a file or a folder, no `follow`) read what is there with
`availableNow` triggers, then mark the end of input so every key flushes (job.py), and
return. A followed run (live sources, or `follow=True` on folders) keeps going, emitting
results as the watermark passes them, until it is stopped. Restarting with the same
checkpoint resumes where the last committed batch ended.

Operations: the driver waits on the query in short slices, reporting each finished batch
(`progress`), and starts it again from its checkpoint after a transient failure (`_await`);
Ctrl-C (SIGINT) lets the batch in progress finish (a second Ctrl-C does not wait), stops the
query, closes the sinks and raises `RunStopped`. When the reader of standard output goes
away (`| head`), the query is stopped at once and `ReaderGone` raised. With `--on-error skip`
and a dead-letter file, the rejected text of bad elements is gathered after every batch.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path

from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

from sepia.engine.forgetting import MIN_TERMS
from sepia.io.chunks import MAX_ELEMENT_SIZE
from sepia.runtime.inputs import NamedQuery, background, query_prefixes
from sepia.runtime.spark.class_archive import abandon_archive
from sepia.runtime.spark.errors import one_line, transient
from sepia.runtime.spark.host import DEFAULT_ENGINE, JobSpec, job_spec
from sepia.runtime.spark.ingest import IngestOptions, StreamSource, file_paths
from sepia.runtime.spark.interrupts import Interrupts
from sepia.runtime.spark.job import (
    SHUFFLE_PARTITIONS,
    RouteWarming,
    default_buckets,
    end_folder,
    ends_by_marker,
    mark_end,
    results_frame,
    stateful_partitions,
    warm_workers,
)
from sepia.runtime.spark.progress import BatchProgress, ProgressLog
from sepia.runtime.spark.session import SHORT_INPUT_BYTES, SparkConfig, setting, spark_session
from sepia.runtime.spark.sinks import DeadLetterFile, ResultJournal
from sepia.runtime.spark.sources import parse_spec, source_for
from sepia.runtime.spark.units import units_of


@dataclass(frozen=True, slots=True)
class SparkRunOptions:
    """How a Spark run reads and evaluates (the CLI's options that are not about output)."""

    allowed_lateness: int = 0
    on_error: str = "stop"
    rdfs: bool = False
    progress: bool = False
    """Print the Spark UI's address and one line per micro-batch on standard error."""
    metrics: Path | None = None
    """Append one JSON object per micro-batch to this file (`progress.BatchProgress`)."""
    dead_letter: Path | None = None
    """With on_error="skip": where the rejected text of bad elements goes."""
    max_element_size: int = MAX_ELEMENT_SIZE
    """The longest TriG statement or N-Quads line read (`sepia.io.streams`)."""
    follow: bool = False
    trigger_seconds: float = 1.0
    engine: str = DEFAULT_ENGINE
    """`host.ENGINES`: "incremental" (the default) or "reference"."""
    idle_timeout: float | None = None
    """Seconds after which a quiet live source (MQTT, socket, generator) lets time move on
    with the clock (`sources.idle`); files never do."""
    buckets: int | None = None
    """Keys a PARTITION BY query is spread over (job.py, Keys); None: one per core, at
    least two (`job.default_buckets`). A checkpoint keeps the count its run started with."""
    forget_terms: int | None = MIN_TERMS
    """A key's dictionary first forgets the terms no state holds once it holds this many
    (docs/engine.md, Forgetting terms; None: never); the stored dictionary follows it."""


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
) -> list[BatchProgress]:
    """Run `queries` over the streams `bindings` gives (IRI -> file, folder or source SPEC),
    write their results to `output` ("-": standard output) in `fmt`, and return the run's
    micro-batches."""
    options = options or SparkRunOptions()
    followed = not finite_input(bindings, options)
    spark = spark or spark_session(run_config(bindings, options, master))
    if options.progress:
        print(f"Spark UI: {spark.sparkContext.uiWebUrl or 'off'}", file=sys.stderr, flush=True)
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
            streams=tuple(bindings), buckets=_buckets(home, options.buckets, spark),
            forget_terms=options.forget_terms,
            stream_horizon=options.allowed_lateness if followed else None,
        )  # fmt: skip
        one_batch = not followed and not _folders(bindings) and ends_by_marker(spec)
        cores = spark.sparkContext.defaultParallelism
        spec = replace(spec, merges=one_batch and cores > 1)  # see _drive, and JobSpec
        letters = _dead_letters(home, options)
        ingest = IngestOptions(
            allowed_lateness=options.allowed_lateness,
            max_element_size=options.max_element_size,
            dead_letters=str(letters.parts) if letters else None,
            idle_timeout=options.idle_timeout,
        )
        ends = {iri: end_folder(home, n) for n, iri in enumerate(bindings)}
        live = {iri: text for iri, text in bindings.items() if parse_spec(text) is not None}
        frames = [source_for(spark, iri, text, ingest) for iri, text in live.items()]
        files = [
            file_paths(spark, [StreamSource(iri, _readable(Path(text), ends[iri])),
                               StreamSource(iri, ends[iri])])
            for iri, text in bindings.items()
            if iri not in live
        ]
        sink = ResultJournal(home / "results", output, fmt, variables, query_prefixes(queries))
        log = ProgressLog(sys.stderr if options.progress else None, options.metrics,
                          sink.results_of)  # fmt: skip
        with _one_daemon(spark, one_batch):
            warming = None if followed else RouteWarming(spark, spec)
            try:
                batch = _with_dead_letters(sink, letters)
                results = results_frame(frames, spec, files, ingest)
                gone = lambda: sink.reader_gone  # noqa: E731
                if followed:  # a live source releases (or queues) while the query starts
                    warm_workers(spark, spec)
                with _stateful_partitions(spark, spec):
                    one_pass = ends_by_marker(spec)
                    _drive(results, batch, home, bindings, ends, options, log, one_pass, gone)
                if sink.reader_gone:  # after the query's last batch, or stopped for it
                    abandon_archive()
                    raise ReaderGone
                return log.batches
            finally:
                if warming is not None:
                    warming.stop()
                sink.close()
                log.close()
                if letters:
                    letters.close()
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def short_input(bindings: Mapping[str, str], follow: bool = False) -> bool:
    """Whether the run's input is small and finite: files and folders only (not followed,
    no live source, standard input neither) of `SHORT_INPUT_BYTES` at most in all, so its
    session is set for start-up (`session.SparkConfig.short`)."""
    if follow or any(parse_spec(text) is not None for text in bindings.values()):
        return False
    paths = [Path(text) for text in bindings.values()]
    if not all(path.exists() for path in paths):
        return False
    files = [f for p in paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file()]
    return sum(f.stat().st_size for f in files) <= SHORT_INPUT_BYTES


def _buckets(home: Path, asked: int | None, spark: SparkSession) -> int:
    """The run's bucket count: the one its checkpoint started with (a restart must key
    elements as before: state lives per key), else `asked`, else `job.default_buckets`."""
    saved = home / "buckets"
    home.mkdir(parents=True, exist_ok=True)
    if saved.exists():
        return int(saved.read_text())
    buckets = asked or default_buckets(spark)
    saved.write_text(str(buckets))
    return buckets


def _dead_letters(home: Path, options: SparkRunOptions) -> DeadLetterFile | None:
    if options.dead_letter is None or options.on_error != "skip":
        return None
    return DeadLetterFile(home / "dead-letters", options.dead_letter)


BatchFunction = Callable[[DataFrame, int], None]


def _with_dead_letters(sink: ResultJournal, letters: DeadLetterFile | None) -> BatchFunction:
    """The foreachBatch function: results, then (the batch has run) its dead letters."""
    if letters is None:
        return sink

    def batch(frame: DataFrame, batch_id: int) -> None:
        sink(frame, batch_id)
        letters.gather()

    return batch


def _readable(path: Path, end: Path) -> Path:
    """A stream folder as it is; a stream file through `_alone`, beside its end folder."""
    return path if path.is_dir() else _alone(path, end.parent.parent / "inputs" / end.name)


def _alone(file: Path, folder: Path) -> Path:
    """A link to a stream file in a folder of its own: Spark's file source lists the whole
    folder of a file it reads, and fails on one with unrelated subfolders (a home folder:
    CONFLICTING_DIRECTORY_STRUCTURES). The workers read through the link; errors name the
    file itself (ingest)."""
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / file.name
    if not link.is_symlink():
        link.symlink_to(file.resolve())
    return link


def _drive(
    results: DataFrame,
    sink: BatchFunction,
    home: Path,
    bindings: Mapping[str, str],
    ends: dict[str, Path],
    options: SparkRunOptions,
    log: ProgressLog,
    one_pass: bool = True,
    gone: Callable[[], bool] = lambda: False,
) -> None:
    """Run the streaming query: to the end of a finite input, or until stopped. `one_pass`:
    every key ends in the batch that reads the end-of-input markers (`ends_by_marker`);
    `gone`: the output's reader went away (the query stops)."""
    writer = results.writeStream.foreachBatch(sink).option("checkpointLocation", str(home / "job"))
    with Interrupts() as interrupts:
        if not finite_input(bindings, options):
            interval = f"{round(options.trigger_seconds * 1000)} milliseconds"
            _await(writer.trigger(processingTime=interval), log, interrupts, gone=gone)
            return
        if _folders(bindings):
            _await(writer.trigger(availableNow=True), log, interrupts, gone=gone)  # files first
        if gone():
            return
        for folder in ends.values():
            mark_end(folder)
        if not one_pass:
            _await(writer.trigger(availableNow=True), log, interrupts, gone=gone)
            return
        with _no_empty_batches(results.sparkSession):
            _await(writer.trigger(availableNow=True), log, interrupts, gone=gone)


def _folders(bindings: Mapping[str, str]) -> bool:
    """Whether a stream is read from a folder (its files, one a micro-batch)."""
    return any(Path(s).is_dir() for s in bindings.values())


def run_config(
    bindings: Mapping[str, str], options: SparkRunOptions, master: str,
    extra: Mapping[str, str] | None = None,
) -> SparkConfig:
    """The session a run over `bindings` asks for: set for start-up when its input is
    short and finite (`short_input`), C1 only when it is live or followed (`finite_input`);
    `extra`: the user's own settings (--conf), which win."""
    return SparkConfig(
        master=master, extra=dict(extra or {}), short=short_input(bindings, options.follow),
        live=not finite_input(bindings, options),
    )


def finite_input(bindings: Mapping[str, str], options: SparkRunOptions) -> bool:
    """Whether the run reads files to their end (else it follows them, or live sources)."""
    return not options.follow and all(parse_spec(s) is None for s in bindings.values())


def _one_daemon(spark: SparkSession, one_batch: bool) -> AbstractContextManager[None]:
    """Within, for a run of one batch: the route and stateful stages' Python workers come
    from one daemon. Spark starts a daemon per set of worker settings, and its Arrow
    stages (the route stage) set simplified tracebacks where transformWithState does
    not, so the stateful stage started a daemon of its own, which imports Sepia: W3 at
    1,000,000 elements on two cores waited 2.4 s for it at the start of that stage, both
    tasks (Spark starts one worker at a time), after the route warm-up had started the
    route's. With tracebacks whole in both (`errors.one_line` reads either), the stateful
    tasks fork warm workers. Runs of many batches keep their two daemons: a key's session
    lives in the worker that last stepped it, and a daemon shared with the route stage
    would hand the key's next task another worker as often as not."""
    return setting(spark, "spark.sql.execution.pyspark.udf.simplifiedTraceback.enabled",
                   "false" if one_batch else None)


def _stateful_partitions(spark: SparkSession, spec: JobSpec) -> AbstractContextManager[None]:
    """Within: the stateful stage's shuffle partitions as `job.stateful_partitions` counts
    them, where every key is known up front: no task for a partition no key hashes to (a
    query on one key: one task, not two per core), and no two keys in one task where the
    cores could run them side by side. A restarted run keeps the count its checkpoint
    recorded."""
    count = stateful_partitions(spec, int(spark.conf.get(SHUFFLE_PARTITIONS) or "200"))
    return setting(spark, SHUFFLE_PARTITIONS, None if count is None else str(count))


def _no_empty_batches(spark: SparkSession) -> AbstractContextManager[None]:
    """Within: no micro-batch without new data. The end-of-input batch ends every key
    itself (job.py, End of input), so the batch Spark would add after it, to let the
    watermark it moved fire timers, would find nothing to do."""
    return setting(spark, "spark.sql.streaming.noDataMicroBatches.enabled", "false")


class SparkRunError(RuntimeError):
    """The streaming query failed; the message is the cause, without the JVM's stack."""


class ReaderGone(BrokenPipeError):
    """The reader of standard output closed it; the query was stopped."""


class RunStopped(Exception):
    """The run was stopped by Ctrl-C (SIGINT); what was committed stays committed."""

    def __init__(self, batches: int) -> None:
        super().__init__(f"stopped by Ctrl-C after {batches} micro-batches")
        self.batches = batches


POLL_S = 0.5
"""How often the driver looks at the query's progress while it runs."""
QUERY_ATTEMPTS = 4
"""Starts of a streaming query that failed for a transient reason (`errors.transient`)."""


def _await(
    writer: DataStreamWriter,
    log: ProgressLog,
    interrupts: Interrupts,
    attempts: int = QUERY_ATTEMPTS,
    gone: Callable[[], bool] = lambda: False,
) -> None:
    """Start the query and wait for it, reporting its batches; Ctrl-C stops it gracefully,
    and so does `gone()` (the output's reader closed it: nothing more would be read).

    A query that fails for a transient reason (a Python worker that did not connect back in
    time, on a loaded machine) starts again from its checkpoint: Spark replays the failed
    batch from the same offsets and state, and the sinks skip what they already wrote.
    """
    for attempt in range(1, attempts + 1):
        if interrupts.count:
            raise RunStopped(len(log.batches))
        query = writer.start()
        try:
            while not query.awaitTermination(POLL_S):
                log.poll(query)
                if gone():
                    query.stop()
                    return
                if interrupts.count:
                    _stop(query, interrupts)
                    log.poll(query)
                    raise RunStopped(len(log.batches))
            log.poll(query)
            return
        except KeyboardInterrupt:  # outside the main thread, Python's default handler
            query.stop()
            log.poll(query)
            raise RunStopped(len(log.batches)) from None
        except StreamingQueryException as error:
            told = one_line(str(error))
            if attempt == attempts or not transient(str(error)):
                raise SparkRunError(told) from error
            again = f"the query starts again from its checkpoint ({attempt + 1} of {attempts})"
            print(f"sepia: Spark: {told}; {again}", file=sys.stderr, flush=True)


def _stop(query: StreamingQuery, interrupts: Interrupts) -> None:
    """Stop once the batch in progress is done (a live source with an idle timeout may
    start the next at once: the wait is for that batch, not for a quiet moment), or at
    once on a second Ctrl-C."""
    print("stopping after the batch in progress (Ctrl-C again: now) ...", file=sys.stderr)
    done = _last_batch(query)
    while (
        interrupts.count < 2
        and query.isActive
        and query.status["isTriggerActive"]
        and _last_batch(query) == done
    ):
        time.sleep(0.1)
    query.stop()


def _last_batch(query: StreamingQuery) -> int | None:
    progress = query.lastProgress
    return progress["batchId"] if progress else None
