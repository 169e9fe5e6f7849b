"""The variables of algebra trees, walked once for everyone (parser, planner, both evaluators).

In-scope variables of a pattern (SPARQL 1.1, section 18.2.1), in order of first appearance:
``SELECT *`` projects these; BIND and ``SELECT (e AS ?v)`` may not rebind one of them. For event
patterns the variables of negated parts are out of scope: they never bind anything.

The variables an expression reads: row by row (what a FILTER or BIND needs bound before it
can run), or with those read inside EXISTS patterns and aggregates too (SPAseq lets a GPM's
FILTER use variables bound by earlier GPMs, seed 002 Query 4: such a filter cannot be checked
on the GPM's own event and waits for the run's combined mapping).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import assert_never

import pyoxigraph as ox

from sepia.algebra import event as ev
from sepia.algebra import expression as ex
from sepia.algebra import pattern as gp


def in_scope(pattern: gp.GraphPattern | ev.EventPattern) -> tuple[ox.Variable, ...]:
    """The variables a solution of ``pattern`` may bind, each once, first appearance first."""
    return tuple(dict.fromkeys(_variables(pattern)))


def _variables(node: gp.GraphPattern | ev.EventPattern) -> Iterator[ox.Variable]:
    match node:
        case gp.Bgp(triples):
            for triple in triples:
                yield from _terms(triple.subject, triple.predicate, triple.object)
        case gp.PathPattern(subject, _, obj):
            yield from _terms(subject, obj)
        case gp.Join(left, right) | gp.Union(left, right) | gp.LeftJoin(left, right, _):
            yield from _variables(left)
            yield from _variables(right)
        case gp.Minus(left, _):
            yield from _variables(left)
        case gp.Graph(name, inner):
            yield from _terms(name)
            yield from _variables(inner)
        case gp.Extend(inner, variable, _):
            yield from _variables(inner)
            yield variable
        case gp.Values(variables, _):
            yield from variables
        case gp.Group(_, variables, aggregates):
            yield from variables
            yield from (binding.variable for binding in aggregates)
        case gp.Project(_, variables):
            yield from variables
        case (gp.Filter(_, inner) | gp.OrderBy(inner, _) | gp.Distinct(inner) | gp.Reduced(inner)
              | gp.Slice(inner, _, _) | gp.Window(_, inner)):
            yield from _variables(inner)
        case gp.Match(event):
            yield from _variables(event)
        case _:
            yield from _event_variables(node)


def _event_variables(node: ev.EventPattern) -> Iterator[ox.Variable]:
    match node:
        case ev.Event(pattern, _, _, _):
            yield from _variables(pattern)
        case ev.OccurrencePattern(bgp):
            yield from _variables(bgp)
        case (ev.Seq(left, right, _) | ev.And(left, right) | ev.Or(left, right)
              | ev.IntervalJoin(left, right) | ev.EventJoin(left, right)
              | ev.SeqJoin(left, right, _) | ev.EqJoin(left, right)
              | ev.SeqWithout(left, _, right) | ev.EqLeftJoin(left, right, _)
              | ev.SeqRightJoin(left, right, _)):
            yield from _variables(left)
            yield from _variables(right)
        case ev.NoHead(_, inner) | ev.NoTail(inner, _):
            yield from _variables(inner)
        case (ev.First(inner) | ev.Last(inner) | ev.Kleene(inner) | ev.Optional(inner)
              | ev.EventFilter(_, inner)):
            yield from _variables(inner)
        case ev.Negation(_):
            return
        case _:
            assert_never(node)


def _terms(*terms: object) -> Iterator[ox.Variable]:
    yield from (term for term in terms if isinstance(term, ox.Variable))


def pattern_variables(pattern: gp.GraphPattern | ev.EventPattern) -> set[str]:
    """The names of the variables that solutions of ``pattern`` may bind (its in-scope ones)."""
    return {v.value for v in in_scope(pattern)}


def bop_variables(pattern: ev.EventPattern) -> set[str]:
    """Variables of a basic event pattern: an Event, or a conjunction / disjunction of them."""
    match pattern:
        case ev.Event(inner):
            return pattern_variables(inner)
        case ev.And(left, right) | ev.Or(left, right):
            return bop_variables(left) | bop_variables(right)
        case _:
            return set()


CallReads = Callable[[ex.Call], set[str] | None]
"""What a builtin call reads besides its arguments (None: its arguments only)."""


def expression_variables(
    expression: ex.Expression, *, nested: bool = True, reads: CallReads | None = None
) -> set[str]:
    """The names of the variables an expression reads. ``nested``: also those inside EXISTS
    patterns (their in-scope variables) and aggregates' arguments; without, only those read
    row by row. ``reads`` answers for builtins that read more than their arguments."""

    def walk(e: ex.Expression) -> set[str]:
        match e:
            case ox.Variable():
                return {e.value}
            case ox.NamedNode() | ox.Literal():
                return set()
            case ex.Binary(_, left, right):
                return walk(left) | walk(right)
            case ex.Unary(_, operand):
                return walk(operand)
            case ex.In(value, options, _):
                return walk(value).union(*map(walk, options))
            case ex.Exists(pattern, _):
                return pattern_variables(pattern) if nested else set()
            case ex.Aggregate(_, args):
                return set().union(*map(walk, args)) if nested else set()
            case ex.Call(_, args):
                own = None if reads is None else reads(e)
                return set().union(*map(walk, args)) if own is None else own
            case ex.FunctionCall(_, args):
                return set().union(*map(walk, args))
            case _:
                assert_never(e)

    return walk(expression)


def nodes(tree: object, kind: type | tuple[type, ...], *, inside: bool = True) -> list:
    """Every node of type ``kind`` inside an algebra tree (any dataclass tree), outermost and
    leftmost first. ``inside=False`` stops at each node found (the leaves of an event tree
    rather than what their patterns hold)."""
    found = [tree] if isinstance(tree, kind) else []
    if found and not inside:
        return found
    if isinstance(tree, tuple):
        return found + [m for x in tree for m in nodes(x, kind, inside=inside)]
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        return found + [
            m for f in dataclasses.fields(tree)
            for m in nodes(getattr(tree, f.name), kind, inside=inside)
        ]
    return found


def basic_events(tree: object) -> list[ev.Event | ev.OccurrencePattern]:
    """The basic event patterns of a query expression or event tree, left to right: its
    ``Event`` and ``OccurrencePattern`` leaves (negated ones included)."""
    return nodes(tree, (ev.Event, ev.OccurrencePattern), inside=False)


def event_leaves(tree: object) -> Iterator[gp.GraphPattern]:
    """The graph pattern of every basic event pattern in ``tree`` (an occurrence pattern
    gives one pattern per triple, matched on its own)."""
    for leaf in basic_events(tree):
        if isinstance(leaf, ev.Event):
            yield leaf.pattern
        else:
            yield from (gp.Bgp((triple,)) for triple in leaf.bgp.triples)


FRESH = frozenset({"RAND", "NOW", "UUID", "STRUUID", "BNODE"})
"""Builtins whose value is not a function of the row: a new value at each call."""


def answers_anew(query: object) -> bool:
    """Whether two evaluations of a query over the same data may answer differently: it
    calls a ``FRESH`` builtin, or its CONSTRUCT template has blank nodes (fresh at every
    evaluation). While its answer is not empty such a query is never quiet: no evaluation may be
    leapt over (an empty answer is taken as quiet, even under a FILTER on RAND())."""
    template = getattr(getattr(query, "form", None), "template", ())
    return any(c.function in FRESH for c in nodes(query, ex.Call)) or any(
        isinstance(x, ox.BlankNode) for p in template for x in (p.subject, p.predicate, p.object)
    )
