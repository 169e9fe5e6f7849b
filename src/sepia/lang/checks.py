"""Static checks that need the whole query: every name used is declared, durations agree on
their unit, and every triple sequence reads a window (language.md sections 2 and 8)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from sepia.algebra import event as ev
from sepia.algebra.query import Query
from sepia.lang.context import Context
from sepia.lang.errors import span_at
from sepia.rdf.time import TimeKind


def check_query(query: Query, ctx: Context) -> None:
    """Raise a QueryError for the first problem found, in the order the checks are listed."""
    _check_windows_declared(ctx)
    _check_time_units(ctx)
    _check_sequences_have_windows(query, ctx)


def _check_windows_declared(ctx: Context) -> None:
    for reference in ctx.window_references:
        if reference.name not in ctx.declared_windows:
            ctx.fail(reference.span, f"undeclared window <{reference.name}>",
                     expected=f"a clause FROM NAMED WINDOW <{reference.name}> ON <stream> "
                              "[window spec] before WHERE")


def _check_time_units(ctx: Context) -> None:
    wall = next((t for t in ctx.times if t.kind is TimeKind.DATETIME), None)
    abstract = next((t for t in ctx.times if t.kind is TimeKind.ABSTRACT), None)
    if wall is None or abstract is None:
        return
    later, earlier = (wall, abstract) if wall.span.start > abstract.span.start else (abstract,
                                                                                     wall)
    earlier_text = ctx.text[earlier.span.start:earlier.span.end]
    ctx.fail(later.span, f"wall-clock and abstract time units are mixed: "
                         f"'{ctx.text[wall.span.start:wall.span.end]}' is wall-clock, "
                         f"'{ctx.text[abstract.span.start:abstract.span.end]}' is abstract "
                         f"(line {earlier.span.line} has '{earlier_text}')",
             expected="the same kind of duration throughout the query")


def _check_sequences_have_windows(query: Query, ctx: Context) -> None:
    if any(e.window is None and e.stream is None for e in _events(query)):
        span = ctx.sequence_spans[0] if ctx.sequence_spans else span_at(ctx.text, 0, 1)
        ctx.fail(span, "a SEQ of triple patterns must be written inside a WINDOW block",
                 expected="WINDOW <w> { SEQ({ ... }, { ... }) }")


def _events(node: object) -> Iterator[ev.Event]:
    """Every Event leaf of the algebra, wherever it is."""
    if isinstance(node, ev.Event):
        yield node
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        for field in dataclasses.fields(node):
            yield from _events(getattr(node, field.name))
    elif isinstance(node, tuple):
        for item in node:
            yield from _events(item)

