"""In-scope variables of a pattern (SPARQL 1.1, section 18.2.1), in order of first appearance.

``SELECT *`` projects these; BIND and ``SELECT (e AS ?v)`` may not rebind one of them. For event
patterns the variables of negated parts are out of scope: they never bind anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import assert_never

import pyoxigraph as ox

from sepia.algebra import event as ev
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
