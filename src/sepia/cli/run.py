"""`sepia run QUERY.rq ... --stream IRI=PATH ...`: evaluate continuous queries over streams."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from contextlib import ExitStack
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from sepia.cli.app import app, fail
from sepia.cli.local import LocalRun, run_local
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
)
from sepia.runtime.local.feed import Feed
from sepia.semantics.evaluator import time_kind
from sepia.semantics.network import evaluate_network
from sepia.semantics.sparql import Unsupported

if TYPE_CHECKING:
    from sepia.runtime.spark.run import SparkRunOptions


class Engine(StrEnum):
    spark = "spark"
    local = "local"
    reference = "reference"


@app.command()
def run(
    queries: QueriesArgument,
    stream: StreamOption = [],  # noqa: B006  (typer reads the default, never mutates it)
    data: DataOption = [],  # noqa: B006
    engine: Annotated[Engine, typer.Option(help="Who evaluates the queries.")] = Engine.spark,
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help=f"One of {', '.join(WRITERS)}; default: table on a terminal, jsonl otherwise.",
        ),
    ] = None,
    output: Annotated[str, typer.Option(help="Result file, or - for standard output.")] = "-",
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
        typer.Option(help="Spark master URL (--engine spark): local[*], spark://host:7077, ..."),
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
    wall_clock: Annotated[
        bool,
        typer.Option(
            help="Live, xsd:dateTime streams: time also moves with the clock, so window closes "
            "and periodic reports fire without waiting for an element (--engine local).",
        ),
    ] = False,
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
) -> None:
    """Run continuous queries over stream files and print their results.

    With --engine spark (the default) the run is a Spark Structured Streaming job; streams
    may then also be live sources: mqtt://host:port/topic, tcp://host:port, gen:WORKLOAD?...,
    kafka://brokers/topic (docs/spark.md).
    """
    if engine is Engine.spark:
        from sepia.runtime.spark.run import SparkRunOptions  # pyspark: only for Spark runs

        named = compile_queries(queries, event_policy, entailment)
        options = SparkRunOptions(
            allowed_lateness, on_error.value, follow=follow, progress=progress,
            metrics=metrics, dead_letter=dead_letter, max_element_size=max_element_size,
        )  # fmt: skip
        _run_spark(named, stream, data, options, master, checkpoint, output, format)
        return
    read = ReadOptions(on_error.value, dead_letter, allowed_lateness, max_element_size)
    if engine is Engine.local:
        feed = Feed(read, follow, wall_clock, snapshot, snapshot_every, until)
        local = LocalRun(queries, stream, data, feed, max_runs, restore, event_policy, entailment)
        run_local(local, output, format)
        return
    if snapshot or restore or wall_clock:
        fail("--snapshot, --restore and --wall-clock are for --engine local")
    inputs = load_inputs(queries, stream, data, read, event_policy, entailment)
    pairs = [(q.name, q.query) for q in inputs.queries]
    try:
        results = evaluate_network(pairs, inputs.streams, inputs.background, until=until)
    except Unsupported as error:
        fail(f"the reference evaluator cannot run this query: {error}")
    variables = projected_variables(inputs.queries)
    _write(results, format, output, time_kind(inputs.streams), variables)


def _run_spark(
    named: list[NamedQuery],
    stream: list[str],
    data: list[str],
    options: SparkRunOptions,
    master: str,
    checkpoint: Path | None,
    output: str,
    fmt: str | None,
) -> None:
    """The run as a Spark job (streams stay where they are: Spark reads them)."""
    from sepia.runtime.spark.run import RunStopped, SparkRunError, run_on_spark
    from sepia.runtime.spark.session import SparkUnavailable

    try:
        bindings = bind_sources(named, [split_binding(text) for text in stream])
        run_on_spark(
            named, bindings, existing_paths(data), options, master=master, checkpoint=checkpoint,
            output=output, fmt=fmt, variables=projected_variables(named),
        )  # fmt: skip
    except (InputBindingError, InputError, SparkUnavailable, SparkRunError, ValueError) as error:
        fail(str(error))
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
) -> None:
    with ExitStack() as stack:
        out: TextIO = (
            sys.stdout
            if output == "-"
            else stack.enter_context(Path(output).open("w", encoding="utf-8"))
        )
        chosen = fmt or ("table" if out.isatty() else "jsonl")
        try:
            writer = writer_for(chosen, out, time_kind=kind, variables=variables)
        except ValueError as error:
            fail(str(error))
        for result in results:
            writer.write(result)
        writer.close()
