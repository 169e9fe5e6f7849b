"""What a run reads: its queries, the stream files bound to their streams, background data.

Shared by every engine, so that `--stream`, `--data`, `--on-error` and lateness mean the
same thing whichever engine evaluates the queries. Queries are compiled first: a query
error is reported before any data is read (language.md section 8).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pyoxigraph as ox

from sepia.algebra.event import SelectionPolicy
from sepia.algebra.pattern import Project
from sepia.algebra.query import Entailment, Query, RegistrationKind
from sepia.io.background import load_background
from sepia.io.chunks import MAX_ELEMENT_SIZE
from sepia.io.errors import StreamError
from sepia.io.streams import OnError, read_stream
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement

T = TypeVar("T")


class InputBindingError(ValueError):
    """A `--stream` binding does not fit the queries (unknown stream, ambiguous path);
    `hint` says what to do."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True, slots=True)
class NamedQuery:
    """A compiled query and the name its results carry (io.md: registered name, else stem)."""

    name: str
    query: Query
    source: Path


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How stream files are read (io.md: `--on-error`, dead letters, `--allowed-lateness`)."""

    on_error: OnError = "stop"
    dead_letter: Path | None = None
    allowed_lateness: int = 0
    max_element_size: int = MAX_ELEMENT_SIZE
    errors: Callable[[StreamError], None] | None = field(default=None, compare=False)


def load_query(
    path: Path,
    event_policy: SelectionPolicy | None = None,
    entailment: Entailment | None = None,
) -> NamedQuery:
    """Compile one query file; its results are named after C-SPARQL's REGISTER QUERY name."""
    text = path.read_text(encoding="utf-8")
    query = parse_query(text, source=str(path), event_policy=event_policy, entailment=entailment)
    registration = query.registration
    if registration is not None and registration.kind is RegistrationKind.QUERY:
        return NamedQuery(registration.name, query, path)
    return NamedQuery(path.stem, query, path)


def projected_variables(queries: Sequence[NamedQuery]) -> list[str] | None:
    """The SELECT variables in query order (for tables and CSV), when one query is run."""
    if len(queries) != 1:
        return None
    node: object = queries[0].query.expression
    while not isinstance(node, Project):
        node = getattr(node, "inner", None)
        if node is None:
            return None
    return [variable.value for variable in node.variables]


def query_prefixes(queries: Sequence[NamedQuery]) -> dict[str, str]:
    """The prefixes the queries declare (a later query's wins), for writers that shorten."""
    return {name: iri for named in queries for name, iri in named.query.prefixes}


def input_streams(queries: Sequence[NamedQuery]) -> list[str]:
    """Stream IRIs the queries read that no query of the run produces, in order of mention."""
    produced = {q.query.output_stream for q in queries}
    seen: dict[str, None] = {}
    for named in queries:
        for declared in named.query.dataset.streams:
            if declared.iri.value not in produced:
                seen[declared.iri.value] = None
    return list(seen)


def bind_streams(
    queries: Sequence[NamedQuery], bindings: Sequence[tuple[str | None, Path]]
) -> dict[str, Path]:
    """Stream IRI -> file; a binding without an IRI goes to the queries' only input stream.

    Queries that name no stream (EP-SPARQL reads the union of whatever streams it is given)
    take a bare path as a stream named by the file's URI.
    """
    named = [(iri or _only_stream(queries, path), path) for iri, path in bindings]
    return _complete(queries, named)


def bind_sources(
    queries: Sequence[NamedQuery], bindings: Sequence[tuple[str | None, str]]
) -> dict[str, str]:
    """Stream IRI -> path or source spec (mqtt://, tcp://, gen:, kafka://), as for files."""
    named = [(iri or _only_stream(queries, Path(spec)), spec) for iri, spec in bindings]
    return _complete(queries, named)


def _only_stream(queries: Sequence[NamedQuery], path: Path) -> str:
    wanted = input_streams(queries)
    if not wanted:
        return path.resolve().as_uri()
    if len(wanted) != 1:
        names = ", ".join(f"<{w}>" for w in wanted)
        raise InputBindingError(f"{path}: give the stream as IRI=PATH; the queries read {names}")
    return wanted[0]


def _complete(queries: Sequence[NamedQuery], named: Sequence[tuple[str, T]]) -> dict[str, T]:
    """The bindings as a map, refusing a stream bound twice or an input stream left unbound."""
    bound: dict[str, T] = {}
    for iri, value in named:
        if iri in bound:
            raise InputBindingError(f"stream <{iri}> is bound twice ({bound[iri]} and {value})")
        bound[iri] = value
    missing = [iri for iri in input_streams(queries) if iri not in bound]
    if missing:
        raise InputBindingError(
            "no --stream given for " + ", ".join(f"<{i}>" for i in missing),
            _closest(unread_streams(queries, bound), missing)
            or f"add --stream {missing[0]}=PATH",
        )
    return bound


def unread_streams(queries: Sequence[NamedQuery], bound: Iterable[str]) -> list[str]:
    """Bound streams no query declares (none when a query reads whatever it is given)."""
    declared = [{s.iri.value for s in q.query.dataset.streams} for q in queries]
    if not all(declared):
        return []
    return [iri for iri in bound if not any(iri in streams for streams in declared)]


def _closest(unread: list[str], missing: list[str]) -> str | None:
    """'did you mean' for a mistyped stream IRI: the unread IRI closest to a missing one."""
    for iri in unread:
        close = difflib.get_close_matches(iri, missing, n=1, cutoff=0.6)
        if close:
            return f"--stream {iri} is read by no query: did you mean {close[0]}?"
    return None


def read_streams(paths: dict[str, Path], options: ReadOptions) -> dict[str, list[StreamElement]]:
    """Every element of every bound stream file (for engines that evaluate a finite prefix)."""
    return {
        iri: list(
            read_stream(
                path,
                iri,
                on_error=options.on_error,
                errors=options.errors,
                dead_letter=options.dead_letter,
                allowed_lateness=options.allowed_lateness,
                max_element_size=options.max_element_size,
            )
        )
        for iri, path in paths.items()
    }


def background(
    data: Sequence[tuple[str | None, Path]], predicates: frozenset[str] | None = None
) -> ox.Store | None:
    """The background dataset of the run, or None when no `--data` was given; the triples
    of ``predicates`` alone where that is quicker (None: all; see ``load_background``)."""
    return load_background(data, predicates) if data else None
