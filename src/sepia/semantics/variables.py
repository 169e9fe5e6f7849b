"""The variables a graph pattern can bind and the variables an expression reads.

SPAseq lets a GPM's FILTER use variables bound by earlier GPMs (seed 002, Query 4); such a
filter cannot be checked on the GPM's own event and is deferred to the run's combined
mapping. Telling the two apart needs these two functions.
"""

from __future__ import annotations

from typing import assert_never

import pyoxigraph as ox

from sepia.algebra import expression as ex
from sepia.algebra import pattern as gp


def _vars(*terms: object) -> set[str]:
    return {t.value for t in terms if isinstance(t, ox.Variable)}


def pattern_variables(p: gp.GraphPattern) -> set[str]:
    """The variables that solutions of ``p`` may bind (its in-scope variables)."""
    match p:
        case gp.Bgp(triples):
            return set().union(*(_vars(t.subject, t.predicate, t.object) for t in triples))
        case gp.PathPattern(subject, _, obj):
            return _vars(subject, obj)
        case gp.Join(left, right) | gp.LeftJoin(left, right, _) | gp.Union(left, right):
            return pattern_variables(left) | pattern_variables(right)
        case gp.Minus(left, _) | gp.Filter(_, left):
            return pattern_variables(left)
        case gp.Graph(name, inner):
            return pattern_variables(inner) | _vars(name)
        case gp.Extend(inner, variable, _):
            return pattern_variables(inner) | {variable.value}
        case gp.Values(variables, _):
            return {v.value for v in variables}
        case gp.Group(_, keys, aggregates):
            return {v.value for v in keys} | {a.variable.value for a in aggregates}
        case gp.Project(_, variables):
            return {v.value for v in variables}
        case gp.OrderBy(inner) | gp.Distinct(inner) | gp.Reduced(inner) | gp.Slice(inner):
            return pattern_variables(inner)
        case gp.Window(_, inner):
            return pattern_variables(inner)
        case gp.Match():
            return set()
        case _:
            assert_never(p)


def expression_variables(e: ex.Expression) -> set[str]:
    """The variables an expression reads (EXISTS reads those of its pattern)."""
    match e:
        case ox.Variable():
            return {e.value}
        case ox.NamedNode() | ox.Literal():
            return set()
        case ex.Binary(_, left, right):
            return expression_variables(left) | expression_variables(right)
        case ex.Unary(_, operand):
            return expression_variables(operand)
        case ex.In(value, options, _):
            return expression_variables(value).union(*map(expression_variables, options))
        case ex.Exists(pattern, _):
            return pattern_variables(pattern)
        case ex.Call(_, args) | ex.FunctionCall(_, args) | ex.Aggregate(_, args):
            return set().union(*map(expression_variables, args))
        case _:
            assert_never(e)
