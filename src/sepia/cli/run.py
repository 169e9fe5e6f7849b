"""`sepia run QUERY.rq ... --stream IRI=PATH ...`: evaluate continuous queries over streams."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterable
from contextlib import ExitStack
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from sepia.algebra.query import Entailment, Unsupported
from sepia.cli.app import app, fail
from sepia.cli.described import described_run
from sepia.cli.options import (
    DataOption,
    DeadLetterOption,
    EntailmentOption,
    EventPolicyOption,
    LatenessOption,
    MaxElementSizeOption,
    OnErrorChoice,
    OnErrorOption,
    QueriesArgument,
    StreamOption,
    UntilOption,
    compile_queries,
    existing_paths,
    load_inputs,
    split_binding,
    warn_static,
    warn_unread,
)
from sepia.cli.timeline import (
    TimelineOption,
    TimelineRangeOption,
    check_timeline,
    draw_run,
)
from sepia.io.chunks import MAX_ELEMENT_SIZE
from sepia.io.errors import InputError
from sepia.io.writers import WRITERS, writer_for
from sepia.rdf.results import Result
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import (
    InputBindingError,
    NamedQuery,
    ReadOptions,
    bind_sources,
    projected_variables,
    query_prefixes,
)

if TYPE_CHECKING:
    from sepia.runtime.spark.run import SparkRunOptions


class Engine(StrEnum):
    spark = "spark"
    local = "local"
    reference = "reference"


@app.command(short_help="Run continuous queries over streams; print their results.")
def run(
    queries: QueriesArgument,
    stream: StreamOption = [],  # noqa: B006  (typer reads the default, never mutates it)
    data: DataOption = [],  # noqa: B006
    engine: Annotated[Engine, typer.Option(help="Who evaluates the queries.")] = Engine.spark,
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            metavar="FORMAT",
            help=f"One of {', '.join(WRITERS)}; default: table on a terminal, jsonl otherwise.",
        ),
    ] = None,
    output: Annotated[
        str, typer.Option(metavar="FILE", help="Result file, or - for standard output.")
    ] = "-",
    on_error: OnErrorOption = OnErrorChoice.stop,
    dead_letter: DeadLetterOption = None,
    allowed_lateness: LatenessOption = 0,
    max_element_size: MaxElementSizeOption = MAX_ELEMENT_SIZE,
    until: UntilOption = None,
    max_runs: Annotated[
        int | None,
        typer.Option(
            help="Bound on the partial matches (runs) of each event automaton, oldest dropped "
            "first; drops are counted and reported (local engine).",
        ),
    ] = None,
    master: Annotated[
        str,
        typer.Option(
            metavar="URL",
            help="Spark master URL (--engine spark): local[*], spark://host:7077, ...",
        ),
    ] = "local[*]",
    checkpoint: Annotated[
        Path | None,
        typer.Option(help="Spark checkpoint folder: a restarted run resumes from it exactly once."),
    ] = None,
    follow: Annotated[
        bool,
        typer.Option(
            help="Live: keep watching stream folders for new files until Ctrl-C (spark, local)."
        ),
    ] = False,
    progress: Annotated[
        bool,
        typer.Option(help="One line per Spark micro-batch on standard error (--engine spark)."),
    ] = True,
    metrics: Annotated[
        Path | None,
        typer.Option(help="Append one JSON object per Spark micro-batch to this file."),
    ] = None,
    conf: Annotated[
        list[str],
        typer.Option(
            metavar="KEY=VALUE",
            help="A Spark setting for the run's session, as spark-submit's --conf; repeatable.",
        ),
    ] = [],  # noqa: B006  (typer reads the default, never mutates it)
    packages: Annotated[
        str | None,
        typer.Option(
            metavar="GROUP:ARTIFACT:VERSION,...",
            help="Maven packages Spark adds (connectors such as Kafka's), as spark-submit's "
            "--packages.",
        ),
    ] = None,
    debug: Annotated[
        bool, typer.Option(help="On a Spark error, also print Spark's full trace.")
    ] = False,
    wall_clock: Annotated[
        bool,
        typer.Option(
            help="Live, xsd:dateTime streams: time also moves with the clock, so window closes "
            "and periodic reports fire without waiting for an element (--engine local).",
        ),
    ] = False,
    idle_timeout: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS",
            min=0.001,
            help="Live runs: an input quiet this long stops holding results back, and once "
            "all are, time moves on with the clock from the latest element (off by default).",
        ),
    ] = None,
    snapshot: Annotated[
        Path | None,
        typer.Option(
            help="Pause instead of ending the input: save the state to this file at the end "
            "or on Ctrl-C (and every --snapshot-every seconds) (--engine local).",
        ),
    ] = None,
    snapshot_every: Annotated[
        float | None, typer.Option(help="Also save --snapshot every this many seconds.")
    ] = None,
    restore: Annotated[
        Path | None,
        typer.Option(help="Resume from a --snapshot file (same queries and data).", exists=True),
    ] = None,
    event_policy: EventPolicyOption = None,
    entailment: EntailmentOption = None,
    timeline: TimelineOption = None,
    timeline_range: TimelineRangeOption = None,
) -> None:
    """Run continuous queries over stream files and print their results.

    With --engine spark (the default) the run is a Spark Structured Streaming job; streams
    may then also be live sources: mqtt://host:port/topic, tcp://host:port, gen:WORKLOAD?...,
    kafka://brokers/topic (docs/spark.md).
    """
    described = described_run(queries, stream, data)
    queries, stream, data = described.queries, described.stream, described.data
    if entailment is None and described.entailment:
        entailment = Entailment(described.entailment)
    _check_engine_options(engine, {
        "--master": master != "local[*]", "--checkpoint": checkpoint is not None,
        "--metrics": metrics is not None, "--no-progress": not progress,
        "--snapshot": snapshot is not None, "--snapshot-every": snapshot_every is not None,
        "--restore": restore is not None, "--wall-clock": wall_clock,
        "--max-runs": max_runs is not None, "--follow": follow, "--conf": bool(conf),
        "--packages": packages is not None, "--debug": debug,
        "--idle-timeout": idle_timeout is not None,
    })  # fmt: skip
    span = check_timeline(timeline, timeline_range, stream)
    warn_static(queries, stream, data)
    if engine is Engine.spark:
        if timeline is not None:
            fail("--timeline draws runs of --engine local or reference",
                 "run the same inputs with --engine local: its results agree with Spark's")
        from sepia.runtime.spark.run import SparkRunOptions  # pyspark: only for Spark runs

        named = compile_queries(queries, event_policy, entailment)
        options = SparkRunOptions(
            allowed_lateness, on_error.value, follow=follow, progress=progress,
            metrics=metrics, dead_letter=dead_letter, max_element_size=max_element_size,
            idle_timeout=idle_timeout,
        )  # fmt: skip
        session = SparkChoices(master, spark_settings(conf, packages), debug)
        _run_spark(named, stream, data, options, session, checkpoint, output, format)
        return
    read = ReadOptions(on_error.value, dead_letter, allowed_lateness, max_element_size)
    if engine is Engine.local:
        from sepia.cli.local import LocalRun, run_local  # the engine: only for local runs
        from sepia.runtime.local.feed import Feed

        feed = Feed(read, follow, wall_clock, snapshot, snapshot_every, until, idle_timeout)
        made: list[Result] = []  # kept only for --timeline: memory follows the live state
        keep = made.extend if timeline is not None else None
        local = LocalRun(
            queries, stream, data, feed, max_runs, restore, event_policy, entailment, keep
        )
        run_local(local, output, format)
        if timeline is not None:
            inputs = load_inputs(queries, stream, data, read, event_policy, entailment)
            draw_run(timeline, inputs, made, span, until)
        return
    from sepia.semantics.evaluator import time_kind  # the reference evaluator, only here
    from sepia.semantics.network import evaluate_network

    inputs = load_inputs(queries, stream, data, read, event_policy, entailment)
    pairs = [(q.name, q.query) for q in inputs.queries]
    try:
        results = evaluate_network(pairs, inputs.streams, inputs.background, until=until)
    except Unsupported as error:
        fail(f"the reference evaluator cannot run this query: {error}")
    variables = projected_variables(inputs.queries)
    prefixes = query_prefixes(inputs.queries)
    _write(results, format, output, time_kind(inputs.streams), variables, prefixes)
    if timeline is not None:
        draw_run(timeline, inputs, results, span, until)


_ENGINE_OPTIONS = {
    "--master": {Engine.spark}, "--checkpoint": {Engine.spark}, "--metrics": {Engine.spark},
    "--no-progress": {Engine.spark}, "--snapshot": {Engine.local},
    "--snapshot-every": {Engine.local}, "--restore": {Engine.local},
    "--wall-clock": {Engine.local}, "--max-runs": {Engine.local},
    "--follow": {Engine.spark, Engine.local}, "--conf": {Engine.spark},
    "--packages": {Engine.spark}, "--debug": {Engine.spark},
    "--idle-timeout": {Engine.spark, Engine.local},
}  # fmt: skip
"""Options that only some engines read: given to another engine, they are an error."""


def _check_engine_options(engine: Engine, given: dict[str, bool]) -> None:
    unread = [name for name, present in given.items()
              if present and engine not in _ENGINE_OPTIONS[name]]  # fmt: skip
    if not unread:
        return
    engines = sorted({e.value for name in unread for e in _ENGINE_OPTIONS[name]})
    names = " and ".join(unread)
    fail(
        f"--engine {engine.value} does not read {names}",
        f"leave {names} out, or run with --engine {' or --engine '.join(engines)}",
    )


@dataclass(frozen=True, slots=True)
class SparkChoices:
    """The command line's choices for the Spark session of a run."""

    master: str
    settings: dict[str, str]
    """`--conf` and `--packages`, as Spark settings."""
    debug: bool = False


def spark_settings(conf: list[str], packages: str | None) -> dict[str, str]:
    """`--conf KEY=VALUE ...` and `--packages` as Spark settings (a usage error names a bad one)."""
    settings = {}
    for text in conf:
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{text!r}: a Spark setting is KEY=VALUE", param_hint="--conf")
        settings[key.strip()] = value
    if packages:
        settings["spark.jars.packages"] = packages
    return settings


def _run_spark(
    named: list[NamedQuery],
    stream: list[str],
    data: list[str],
    options: SparkRunOptions,
    choices: SparkChoices,
    checkpoint: Path | None,
    output: str,
    fmt: str | None,
) -> None:
    """The run as a Spark job (streams stay where they are: Spark reads them)."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    from sepia.runtime.spark.errors import one_line
    from sepia.runtime.spark.run import RunStopped, SparkRunError, run_config, run_on_spark
    from sepia.runtime.spark.session import SparkUnavailable, spark_session

    try:
        bindings = bind_sources(named, [split_binding(text) for text in stream])
        warn_unread(named, bindings)
        paths = existing_paths(data)
        spark = spark_session(run_config(bindings, options, choices.master, choices.settings))
        run_on_spark(
            named, bindings, paths, options, checkpoint=checkpoint, output=output, fmt=fmt,
            variables=projected_variables(named), spark=spark,
        )  # fmt: skip
    except (InputBindingError, InputError, SparkUnavailable, ValueError) as error:
        if choices.debug:
            traceback.print_exception(error)
        fail(str(error), getattr(error, "hint", None))
    except (SparkRunError, PySparkException, Py4JError) as error:
        if choices.debug:
            traceback.print_exception(error)
        told = str(error) if isinstance(error, SparkRunError) else one_line(str(error))
        fail(f"Spark: {told}", None if choices.debug else "--debug prints Spark's full trace")
    except RunStopped as stopped:
        resume = (
            f"run again with --checkpoint {checkpoint} to resume"
            if checkpoint is not None
            else "without --checkpoint a new run starts over"
        )
        fail(f"{stopped}; the results of finished batches are written; {resume}", code=130)
    except KeyboardInterrupt:  # before the query started: nothing was run
        fail("interrupted by Ctrl-C before the Spark job started", code=130)


def _write(
    results: Iterable[Result],
    fmt: str | None,
    output: str,
    kind: TimeKind,
    variables: list[str] | None,
    prefixes: dict[str, str],
) -> None:
    with ExitStack() as stack:
        out: TextIO = (
            sys.stdout
            if output == "-"
            else stack.enter_context(Path(output).open("w", encoding="utf-8"))
        )
        chosen = fmt or ("table" if out.isatty() else "jsonl")
        try:
            writer = writer_for(chosen, out, time_kind=kind, variables=variables,
                                prefixes=prefixes)
        except ValueError as error:
            fail(str(error), getattr(error, "hint", None))
        for result in results:
            writer.write(result)
        writer.close()
