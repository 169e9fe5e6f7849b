"""The variables an expression reads, and the names of those a pattern can bind.

SPAseq lets a GPM's FILTER use variables bound by earlier GPMs (seed 002, Query 4); such a
filter cannot be checked on the GPM's own event and is deferred to the run's combined
mapping. Telling the two apart needs these two functions.
"""

from __future__ import annotations

from typing import assert_never

import pyoxigraph as ox

from sepia.algebra import event as ev
from sepia.algebra import expression as ex
from sepia.algebra import pattern as gp
from sepia.algebra.scope import in_scope


def pattern_variables(p: gp.GraphPattern) -> set[str]:
    """The names of the variables that solutions of ``p`` may bind (its in-scope ones)."""
    return {v.value for v in in_scope(p)}


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


def bop_variables(p: ev.EventPattern) -> set[str]:
    """Variables of a basic event pattern: an Event, or a conjunction / disjunction of them."""
    match p:
        case ev.Event(pattern):
            return pattern_variables(pattern)
        case ev.And(left, right) | ev.Or(left, right):
            return bop_variables(left) | bop_variables(right)
        case _:
            return set()
