"""Options shared by several commands: `IRI=PATH` bindings, stream reading, query inputs."""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path
from typing import Annotated, NamedTuple, NoReturn

import pyoxigraph as ox
import typer

from sepia.algebra.event import SelectionPolicy
from sepia.algebra.query import Entailment
from sepia.cli.app import fail
from sepia.io.errors import InputError
from sepia.lang import QueryError
from sepia.rdf.stream import StreamElement
from sepia.runtime.inputs import (
    InputBindingError,
    NamedQuery,
    ReadOptions,
    background,
    bind_streams,
    load_query,
    read_streams,
)


class OnErrorChoice(StrEnum):
    stop = "stop"
    skip = "skip"


QueriesArgument = Annotated[
    list[Path],
    typer.Argument(
        metavar="QUERY",
        help="Query files (.rq), or one example folder holding a run.json.",
        exists=True,
    ),
]
StreamOption = Annotated[
    list[str],
    typer.Option(
        metavar="[IRI=]SOURCE",
        help="A stream: a TriG / N-Quads file or folder (.gz ok), - for standard input, "
        "or with --engine spark also mqtt://host:port/topic, tcp://host:port, "
        "kafka://brokers/topic, gen:WORKLOAD?rate=N; repeatable.",
    ),
]
DataOption = Annotated[
    list[str],
    typer.Option(metavar="[GRAPH=]PATH", help="Background data (Turtle, TriG ...); repeatable."),
]
OnErrorOption = Annotated[
    OnErrorChoice, typer.Option(help="At bad input: stop, or skip it to the dead-letter file.")
]
DeadLetterOption = Annotated[
    Path | None,
    typer.Option(metavar="FILE", help="Where skipped elements go (with --on-error skip)."),
]
LatenessOption = Annotated[
    int,
    typer.Option(metavar="N", help="Put back in order elements up to this many time units late."),
]
SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text: str | int) -> int:
    """A byte count: 1000, 512K, 64M or 1G (binary units; `KiB`, `MB` and the like too)."""
    if isinstance(text, int):
        return text
    match = re.fullmatch(r"\s*(\d+)\s*([KMG]?)(?:i?B)?\s*", text, re.IGNORECASE)
    if match is None or int(match.group(1)) < 1:
        raise typer.BadParameter(f"{text!r} is not a size: write e.g. 1000, 512K, 64M, 1G")
    return int(match.group(1)) * SIZE_UNITS[match.group(2).upper()]


MaxElementSizeOption = Annotated[
    int,
    typer.Option(
        parser=parse_size, metavar="SIZE",
        help="Longest TriG statement (a graph block) or N-Quads line read, e.g. 64M; a longer "
        "one is a bad element, skipped in bounded memory.",
    ),
]  # fmt: skip


class EventPolicy(StrEnum):
    """The four policies of language.md section 5 (SPAseq's own operators carry theirs)."""

    unrestricted = "unrestricted"
    chronological = "chronological"
    recent = "recent"
    naive = "naive"


EventPolicyOption = Annotated[
    EventPolicy | None,
    typer.Option(
        case_sensitive=False,
        help="Selection and consumption policy of event SEQs (RSEP-QL Table 1) for queries "
        "without their own EVENT POLICY.",
    ),
]
EntailmentOption = Annotated[
    Entailment | None,
    typer.Option(
        case_sensitive=False,
        help="Read every graph under this entailment regime (rdfs: RDFS rules over background "
        "and window contents) for queries without their own ENTAILMENT clause.",
    ),
]
UntilOption = Annotated[
    int | None,
    typer.Option(metavar="T", help="Flush up to this time instead of the last window close."),
]


def split_binding(text: str) -> tuple[str | None, str]:
    """Split `[NAME=]VALUE` (`--stream IRI=PATH`, `--data G=PATH`); NAME must be an IRI.

    Only a left side that looks like an IRI (has a scheme) is taken as the name, so paths
    containing '=' still work; `<...>` around the IRI is allowed.
    """
    name, sep, value = text.partition("=")
    name = name.strip().removeprefix("<").removesuffix(">")
    if sep and ":" in name and value:
        return name, value
    return None, text


def existing_paths(values: list[str]) -> list[tuple[str | None, Path]]:
    """`[NAME=]PATH` values whose paths must exist (a usage error names the missing one)."""
    bindings = [split_binding(value) for value in values]
    for _, path in bindings:
        if not Path(path).exists():
            missing_file(path)
    return [(name, Path(path)) for name, path in bindings]


def missing_file(path: str) -> NoReturn:
    """A `--stream` / `--data` path that is not there: say so and what the option takes."""
    fail(f"{path}: no such file or directory",
         "check the path (relative to the current folder); --stream takes [IRI=]SOURCE, "
         "--data [GRAPH=]PATH")


def stream_binding(text: str) -> tuple[str, Path]:
    """A `[IRI=]PATH` stream; without an IRI the stream is named by the file's URI."""
    ((name, path),) = existing_paths([text])
    return (name or path.resolve().as_uri()), path


class RunInputs(NamedTuple):
    """Compiled queries and everything they read, ready for an engine."""

    queries: list[NamedQuery]
    streams: dict[str, list[StreamElement]]
    background: ox.Store | None


def compile_queries(
    queries: list[Path],
    event_policy: EventPolicy | None = None,
    entailment: Entailment | None = None,
) -> list[NamedQuery]:
    """Compile every query, failing with the query error (line, column, caret) if one is bad."""
    policy = SelectionPolicy(event_policy.value) if event_policy else None
    try:
        return [load_query(path, policy, entailment) for path in queries]
    except QueryError as error:
        fail(str(error), getattr(error, "hint", None))


def load_inputs(
    queries: list[Path],
    stream: list[str],
    data: list[str],
    options: ReadOptions,
    event_policy: EventPolicy | None = None,
    entailment: Entailment | None = None,
) -> RunInputs:
    """Compile the queries (errors before any data is read), then read streams and data."""
    named = compile_queries(queries, event_policy, entailment)
    try:
        paths = bind_streams(named, existing_paths(stream))
        dataset = background(existing_paths(data))
        return RunInputs(named, read_streams(paths, options), dataset)
    except (InputBindingError, InputError) as error:
        fail(str(error), getattr(error, "hint", None))
