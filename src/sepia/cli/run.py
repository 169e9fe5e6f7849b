"""`sepia run QUERY.rq ... --stream IRI=PATH ...`: evaluate continuous queries over streams."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from enum import StrEnum
from pathlib import Path
from typing import Annotated, TextIO

import typer

from sepia.cli.app import app, fail
from sepia.cli.options import split_binding
from sepia.io.errors import InputError
from sepia.io.results import Result
from sepia.io.writers import WRITERS, writer_for
from sepia.lang import QueryError
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import (
    InputBindingError,
    NamedQuery,
    ReadOptions,
    background,
    bind_streams,
    load_query,
    read_streams,
)
from sepia.semantics.network import evaluate_network


class Engine(StrEnum):
    spark = "spark"
    local = "local"
    reference = "reference"


class OnErrorChoice(StrEnum):
    stop = "stop"
    skip = "skip"


def _paths(values: list[str]) -> list[tuple[str | None, Path]]:
    bindings = [split_binding(value) for value in values]
    for _, path in bindings:
        if not Path(path).exists():
            raise typer.BadParameter(f"{path}: no such file or directory")
    return [(name, Path(path)) for name, path in bindings]


@app.command()
def run(
    queries: Annotated[list[Path], typer.Argument(help="Query files (.rq).", exists=True)],
    stream: Annotated[
        list[str],
        typer.Option(help="[IRI=]PATH of a stream file (TriG / N-Quads, .gz ok); repeatable."),
    ] = [],  # noqa: B006  (typer reads the default, never mutates it)
    data: Annotated[
        list[str], typer.Option(help="[GRAPH=]PATH of background data; repeatable.")
    ] = [],  # noqa: B006
    engine: Annotated[Engine, typer.Option(help="Who evaluates the queries.")] = Engine.spark,
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help=f"One of {', '.join(WRITERS)}; default: table on a terminal, jsonl otherwise.",
        ),
    ] = None,
    output: Annotated[str, typer.Option(help="Result file, or - for standard output.")] = "-",
    on_error: Annotated[
        OnErrorChoice, typer.Option(help="At bad input: stop, or skip it to the dead-letter file.")
    ] = OnErrorChoice.stop,
    dead_letter: Annotated[
        Path | None, typer.Option(help="Where skipped elements go (with --on-error skip).")
    ] = None,
    allowed_lateness: Annotated[
        int, typer.Option(help="Put back in order elements up to this many time units late.")
    ] = 0,
    until: Annotated[
        int | None, typer.Option(help="Flush up to this time instead of the last window close.")
    ] = None,
) -> None:
    """Run continuous queries over stream files and print their results as they are due."""
    try:
        named = [load_query(path) for path in queries]
    except QueryError as error:
        fail(str(error))
    try:
        paths = bind_streams(named, _paths(stream))
        options = ReadOptions(on_error.value, dead_letter, allowed_lateness)
        dataset = background(_paths(data))
        elements = read_streams(paths, options)
    except (InputBindingError, InputError) as error:
        fail(str(error))
    results = _evaluate(engine, named, elements, dataset, until)
    kind = next((e.kind for es in elements.values() for e in es[:1]), TimeKind.ABSTRACT)
    _write(results, format, output, kind)


def _evaluate(engine: Engine, named: list[NamedQuery], elements, dataset, until) -> list[Result]:
    """The results of every query on the chosen engine."""
    if engine is Engine.reference:
        pairs = [(q.name, q.query) for q in named]
        return evaluate_network(pairs, elements, dataset, until=until)
    fail(
        f"the {engine.value} engine is not built yet in this version of Sepia; "
        "use --engine reference",
        code=3,
    )


def _write(results: list[Result], fmt: str | None, output: str, kind: TimeKind) -> None:
    with ExitStack() as stack:
        out: TextIO = (
            sys.stdout
            if output == "-"
            else stack.enter_context(open(output, "w", encoding="utf-8"))
        )
        chosen = fmt or ("table" if out.isatty() else "jsonl")
        try:
            writer = writer_for(chosen, out, time_kind=kind)
        except ValueError as error:
            fail(str(error))
        for result in results:
            writer.write(result)
        writer.close()
