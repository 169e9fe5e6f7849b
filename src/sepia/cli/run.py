"""`sepia run QUERY.rq ... --stream IRI=PATH ...`: evaluate continuous queries over streams."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from enum import StrEnum
from pathlib import Path
from typing import Annotated, TextIO

import typer

from sepia.cli.app import app, fail
from sepia.cli.options import (
    DataOption,
    DeadLetterOption,
    EntailmentOption,
    EventPolicyOption,
    LatenessOption,
    OnErrorChoice,
    OnErrorOption,
    QueriesArgument,
    RunInputs,
    StreamOption,
    UntilOption,
    load_inputs,
)
from sepia.io.results import Result
from sepia.io.writers import WRITERS, writer_for
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import ReadOptions, projected_variables
from sepia.semantics.evaluator import time_kind
from sepia.semantics.network import evaluate_network


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
    until: UntilOption = None,
    event_policy: EventPolicyOption = None,
    entailment: EntailmentOption = None,
) -> None:
    """Run continuous queries over stream files and print their results."""
    inputs = load_inputs(
        queries,
        stream,
        data,
        ReadOptions(on_error.value, dead_letter, allowed_lateness),
        event_policy,
    )
    results = _evaluate(engine, inputs, until)
    variables = projected_variables(inputs.queries)
    _write(results, format, output, time_kind(inputs.streams), variables)


def _evaluate(engine: Engine, inputs: RunInputs, until: int | None) -> list[Result]:
    """The results of every query on the chosen engine."""
    if engine is Engine.reference:
        pairs = [(q.name, q.query) for q in inputs.queries]
        return evaluate_network(pairs, inputs.streams, inputs.background, until=until)
    fail(
        f"the {engine.value} engine is not built yet in this version of Sepia; "
        "use --engine reference",
        code=3,
    )


def _write(
    results: list[Result],
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
