"""Static checks that need the whole query: every name used is declared, durations agree on
their unit, every triple sequence reads a window, and interval functions stand inside event
patterns (language.md sections 2, 4 and 8)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from sepia.algebra import event as ev
from sepia.algebra.expression import Call
from sepia.algebra.functions import INTERVAL_FUNCTIONS
from sepia.algebra.pattern import Match
from sepia.algebra.query import Query
from sepia.algebra.scope import nodes
from sepia.lang.context import Context
from sepia.lang.errors import span_at
from sepia.rdf.time import TimeKind

MAX_DEPTH = 150
"""Deepest nesting of the query's algebra (groups, UNION branches, operators, paths) that is
compiled: the planners and evaluators walk it recursively, within Python's stack."""
TOO_DEEP = f"the query is nested more than {MAX_DEPTH} levels deep"
FLATTER = "fewer nested groups, UNION branches or parentheses (VALUES lists many alternatives)"


def check_query(query: Query, ctx: Context) -> None:
    """Raise a QueryError for the first problem found, in the order the checks are listed."""
    _check_depth(query, ctx)
    _check_windows_declared(ctx)
    _check_time_units(ctx)
    _check_sequences_have_windows(query, ctx)
    _check_interval_functions_in_events(query, ctx)


def _check_depth(query: Query, ctx: Context) -> None:
    """Measured without recursion, so a deep query gets this error, not a RecursionError."""
    stack: list[tuple[object, int]] = [(query.pattern, 1), (query.expression, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            ctx.fail(span_at(ctx.text, 0, 1), TOO_DEEP, expected=FLATTER)
        if isinstance(node, tuple):
            stack.extend((item, depth) for item in node)
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            stack.extend((getattr(node, f.name), depth + 1) for f in dataclasses.fields(node))


def _check_windows_declared(ctx: Context) -> None:
    for reference in ctx.window_references:
        if reference.name not in ctx.declared_windows:
            ctx.fail(
                reference.span,
                f"undeclared window <{reference.name}>",
                expected=f"a clause FROM NAMED WINDOW <{reference.name}> ON <stream> "
                "[window spec] before WHERE",
            )


def _check_time_units(ctx: Context) -> None:
    wall = next((t for t in ctx.times if t.kind is TimeKind.DATETIME), None)
    abstract = next((t for t in ctx.times if t.kind is TimeKind.ABSTRACT), None)
    if wall is None or abstract is None:
        return
    later, earlier = (wall, abstract) if wall.span.start > abstract.span.start else (abstract, wall)
    earlier_text = ctx.text[earlier.span.start : earlier.span.end]
    ctx.fail(
        later.span,
        f"wall-clock and abstract time units are mixed: "
        f"'{ctx.text[wall.span.start : wall.span.end]}' is wall-clock, "
        f"'{ctx.text[abstract.span.start : abstract.span.end]}' is abstract "
        f"(line {earlier.span.line} has '{earlier_text}')",
        expected="the same kind of duration throughout the query",
    )


def _check_sequences_have_windows(query: Query, ctx: Context) -> None:
    if any(e.window is None and e.stream is None for e in nodes(query, ev.Event)):
        span = ctx.sequence_spans[0] if ctx.sequence_spans else span_at(ctx.text, 0, 1)
        ctx.fail(
            span,
            "a SEQ of triple patterns must be written inside a WINDOW block",
            expected="WINDOW <w> { SEQ({ ... }, { ... }) }",
        )


def _check_interval_functions_in_events(query: Query, ctx: Context) -> None:
    """getDURATION() and friends read the interval of an event match (EP-SPARQL section
    4.2); outside an event pattern there is none."""
    for call in _calls_outside_events(query.expression):
        span = ctx.call_spans[id(call)]
        ctx.fail(
            span,
            f"{ctx.text[span.start : span.end]} has no interval to read here",
            expected="a FILTER in a group with EP-SPARQL operators (SEQ, EQUALS, "
            "OPTIONALSEQ, EQUALSOPTIONAL)",
        )


def _calls_outside_events(node: object) -> Iterator[Call]:
    if isinstance(node, Call) and node.function in INTERVAL_FUNCTIONS:
        yield node
    if isinstance(node, Match):
        return
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        for field in dataclasses.fields(node):
            yield from _calls_outside_events(getattr(node, field.name))
    elif isinstance(node, tuple):
        for item in node:
            yield from _calls_outside_events(item)

