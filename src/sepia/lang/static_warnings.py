"""Static warnings: queries that compile but, as written, most likely answer nothing or
not what was meant. `sepia explain` and `sepia run` print the same ones (run also knows the
inputs: the graphs `--data` loads and the streams' kind of time); each is one located line,
the cause and what to write instead, and the run goes on.

- ``PARTITION BY ?v`` where no event pattern binds ``?v``: no event joins any partition,
  so there is never a match (SPAseq's partitions are made by the events' values of ?v).
- ``FROM <http://...>`` / ``FROM NAMED <http://...>``: Sepia fetches nothing over the
  network, so the graph is empty unless ``--data`` loads it.
- a bare integer duration (``RANGE 40``) over an ``xsd:dateTime`` stream: it counts the
  stream's time unit, milliseconds, which is seldom what was meant.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sepia.algebra import event as ev
from sepia.algebra.query import Query
from sepia.algebra.scope import nodes, pattern_variables
from sepia.lang.context import Context
from sepia.lang.errors import Span
from sepia.rdf.time import TimeKind

REMOTE = ("http://", "https://", "ftp://")


@dataclass(frozen=True, slots=True)
class QueryWarning:
    """A located warning about a query that compiled."""

    source: str
    span: Span
    message: str
    advice: str

    def __str__(self) -> str:
        return f"{self.source}:{self.span.line}:{self.span.column}: {self.message}; {self.advice}"


def query_warnings(
    query: Query,
    ctx: Context,
    graphs: Collection[str] = (),
    stream_kind: TimeKind | None = None,
) -> list[QueryWarning]:
    """Every warning, in the query's order: ``graphs`` are the graph names the run loads,
    ``stream_kind`` the kind of time its streams have (None: not known, not checked)."""
    found = [
        *_partition_unbound(query, ctx),
        *_remote_graphs(query, ctx, graphs),
        *_unitless_durations(ctx, stream_kind),
    ]
    return sorted(found, key=lambda w: w.span.start)


def _partition_unbound(query: Query, ctx: Context) -> list[QueryWarning]:
    variable = query.partition_by
    if variable is None or ctx.partition_span is None:
        return []
    leaves = nodes(query.expression, (ev.Event, ev.OccurrencePattern))
    bound = set().union(*(pattern_variables(leaf) for leaf in leaves))
    if variable.value in bound:
        return []
    named = ", ".join(f"?{v}" for v in sorted(bound)) or "none"
    return [QueryWarning(
        ctx.source, ctx.partition_span,
        f"PARTITION BY ?{variable.value}: no event pattern binds ?{variable.value}, so no "
        f"event joins a partition and the query never matches",
        f"partition by a variable the event patterns bind (they bind {named})",
    )]


def _remote_graphs(query: Query, ctx: Context, graphs: Collection[str]) -> list[QueryWarning]:
    warnings = []
    declared = [*query.dataset.default_graphs, *query.dataset.named_graphs]
    for iri in dict.fromkeys(g.value for g in declared):
        if not iri.startswith(REMOTE) or iri in graphs:
            continue
        spans = ctx.iri_spans.get(iri) or [Span(1, 1, 0, 1)]
        warnings.append(QueryWarning(
            ctx.source, spans[0],
            f"the graph <{iri}> is never fetched (Sepia reads nothing over the network): "
            "unless --data loads it, the query sees it empty",
            f"load it from a file with --data {iri}=FILE",
        ))
    return warnings


def _unitless_durations(ctx: Context, stream_kind: TimeKind | None) -> list[QueryWarning]:
    if stream_kind is not TimeKind.DATETIME:
        return []
    bare = next((t for t in ctx.times if t.kind is TimeKind.ABSTRACT), None)
    if bare is None:
        return []
    text = ctx.text[bare.span.start : bare.span.end]
    return [QueryWarning(
        ctx.source, bare.span,
        f"'{text}' has no unit: over this xsd:dateTime stream it counts milliseconds",
        f"write a duration with its unit: {text}s, PT{text}S or {text} SECONDS for seconds, "
        f"{text}m or PT{text}M for minutes",
    )]
