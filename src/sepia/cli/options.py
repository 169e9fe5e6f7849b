"""Options shared by several commands: `IRI=PATH` bindings, stream reading, query inputs."""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, NamedTuple, NoReturn

import pyoxigraph as ox
import typer

from sepia.algebra.event import SelectionPolicy
from sepia.algebra.query import Entailment
from sepia.cli.app import fail, warn
from sepia.io.errors import InputError
from sepia.lang import QueryError, static_warnings
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import (
    InputBindingError,
    NamedQuery,
    ReadOptions,
    background,
    bind_streams,
    input_streams,
    load_query,
    read_streams,
    unread_streams,
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
        "kafka://brokers/topic, gen:WORKLOAD?rate=N (or ?speed=X, by event time); "
        "repeatable.",
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


def warn_unread(queries: list[NamedQuery], bound: Iterable[str]) -> None:
    """A --stream no query reads is most likely a mistake: say so, and run on."""
    for iri in unread_streams(queries, bound):
        read = ", ".join(f"<{i}>" for i in input_streams(queries))
        warn(f"no query reads the stream <{iri}> given with --stream (they read {read}); "
             "its elements change no answer")


def warn_static(queries: Iterable[Path], stream: Iterable[str], data: Iterable[str] = ()) -> None:
    """The queries' static warnings (``sepia.lang.static_warnings``), one line each, given
    the graphs --data names and the kind of time of the first --stream file that has an
    element; a query that does not compile is left to the error that follows."""
    graphs = {name for name, _ in map(split_binding, data) if name}
    kind = stream_kind(stream)
    for path in queries:
        try:
            found = static_warnings(path.read_text(encoding="utf-8"), source=str(path),
                                    graphs=graphs, stream_kind=kind)
        except (QueryError, OSError, UnicodeDecodeError):
            continue
        for warning in found:
            warn(str(warning))


def stream_kind(stream: Iterable[str]) -> TimeKind | None:
    """The kind of time of the first element of the first --stream file that has one (None:
    none can be read now: standard input, a live source, a folder, a broken file)."""
    from sepia.io.streams import read_stream  # the readers: only once a stream is given

    for text in stream:
        name, path = split_binding(text)
        if not Path(path).is_file():
            continue
        try:
            first = next(iter(read_stream(path, name or Path(path).resolve().as_uri())), None)
        except Exception:  # the run reports a broken stream in its own words
            continue
        if first is not None:
            return first.kind
    return None


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
        warn_unread(named, paths)
        dataset = background(existing_paths(data))
        return RunInputs(named, read_streams(paths, options), dataset)
    except (InputBindingError, InputError) as error:
        fail(str(error), getattr(error, "hint", None))
