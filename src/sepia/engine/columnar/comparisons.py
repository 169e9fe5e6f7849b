"""FILTERs decided on columns where exact, by the evaluator elsewhere.

SPAseq's FILTERs compare one element's amount with another's (``?p2 > ?p1``, credit
cards' ``?amount2 * 10 <= ?amount1``, head and shoulders' ``?p3 < ?p2 && ?p3 > ?p1``).
Over a join of runs with candidates there are as many distinct inputs as rows, so asking
the expression evaluator once per distinct input (``tables.filtered``) costs a Python
step per row. Here a FILTER that ``columnar.expressions`` compiles (numeric comparisons,
arithmetic, constants, ``&&``, ``||``, ``!``; equality, sameTerm, IN, BOUND and the
isIRI family by ids and term kinds; functions of one variable once per distinct id) is
decided for all rows at once; the rows it is unsure of (a double, a dateTime meeting
another, an ill-typed literal, a function of two variables) are the evaluator's, once
per distinct input, so the answer is the evaluator's on every row.

A FILTER over a table that lacks a column it reads (a variable no row binds: a SPAseq
GPM's FILTER over another element's variable, as PARTITION BY matches the GPM alone) may
be false or an error whatever the bound ones hold (``never_true``, asked once per
condition and set of unbound variables): it then keeps no row, and no row is read.
"""

from __future__ import annotations

from collections.abc import Callable
from weakref import WeakKeyDictionary

import numpy as np
import pyoxigraph as ox

from sepia.algebra import expression as ex
from sepia.engine.columnar.expressions import TRUE, UNSURE, Boolean, Columns, Context, compiled
from sepia.engine.columnar.groups import NumericIds
from sepia.engine.columnar.tables import Table, distinct_inputs
from sepia.engine.columnar.terms import TermKinds
from sepia.engine.r2r.expressions import ExpressionEvaluator, variables_of
from sepia.engine.rows import Slots

_COMPILED: WeakKeyDictionary[ExpressionEvaluator, tuple[Boolean | None, Context]] = (
    WeakKeyDictionary())
"""Each evaluator's expression compiled once (its slots never change), with its context
(the kinds of the ids it met, its per-term evaluators)."""


def vector_filtered(
    table: Table, condition: ExpressionEvaluator, slots: Slots, numbers: NumericIds,
    inputs: Callable[[Table, NumericIds, TermKinds], Columns] = Columns,
) -> Table:
    """FILTER ``condition`` over the table: decided on columns where exact (see the
    module docstring), by the evaluator once per distinct input elsewhere. ``inputs``
    reads the table's numbers (a caller that knows them cheaper gives its own)."""
    if _keeps_none(table, condition):
        return table.take(np.empty(0, dtype=np.int64))
    if condition not in _COMPILED:
        context = Context(condition)
        _COMPILED[condition] = compiled(condition.expression, slots, context), context
    decide, context = _COMPILED[condition]
    if decide is None or not table.size:
        return _by_evaluator(table, condition, np.ones(table.size, dtype=bool))
    answers = decide(inputs(table, numbers, context.kinds))
    return _by_evaluator(table, condition, answers == UNSURE, answers == TRUE)


def _by_evaluator(
    table: Table, condition: ExpressionEvaluator, asked: np.ndarray, keep: np.ndarray | None = None
) -> Table:
    """The rows kept: ``keep`` and, of the ``asked`` rows, those the evaluator keeps (once
    per distinct input)."""
    keep = np.zeros(table.size, dtype=bool) if keep is None else keep
    if asked.any():
        rows = np.flatnonzero(asked)
        inputs, inverse = distinct_inputs(table.take(rows), condition)
        truths = np.array(condition.truths(inputs), dtype=bool)
        keep[rows[truths[inverse]]] = True
    return table if keep.all() else table.take(np.flatnonzero(keep))


_NONE_KEPT: WeakKeyDictionary[
    ExpressionEvaluator, tuple[frozenset[str], dict[frozenset[str], bool]]
] = WeakKeyDictionary()
"""Each evaluator's variables, and its ``never_true`` answer per set of unbound ones."""
_STRICT = frozenset(ex.BinaryOperator) - {ex.BinaryOperator.AND, ex.BinaryOperator.OR}
"""Comparisons and arithmetic: an error in an operand is the result's (SPARQL 17.3)."""


def _keeps_none(table: Table, condition: ExpressionEvaluator) -> bool:
    """Whether the FILTER keeps no row of ``table`` for want of its unbound variables."""
    if condition not in _NONE_KEPT:
        _NONE_KEPT[condition] = frozenset(variables_of(condition.expression)), {}
    variables, known = _NONE_KEPT[condition]
    unbound = variables - {n for n, k in zip(condition.names, condition.positions, strict=True)
                           if k in table.columns}
    if not unbound:
        return False
    if unbound not in known:
        known[unbound] = never_true(condition.expression, unbound)
    return known[unbound]


def never_true(e: ex.Expression, unbound: frozenset[str]) -> bool:
    """Whether ``e`` is false or an error on every row leaving ``unbound`` unbound,
    whatever the others hold: an error (``_fails``), a ``&&`` with such a side or a
    ``||`` with two. False where unsure (BOUND, COALESCE, IF, IN, functions ...)."""
    match e:
        case ex.Binary(ex.BinaryOperator.AND, left, right):
            return never_true(left, unbound) or never_true(right, unbound)
        case ex.Binary(ex.BinaryOperator.OR, left, right):
            return never_true(left, unbound) and never_true(right, unbound)
    return _fails(e, unbound)


def _fails(e: ex.Expression, unbound: frozenset[str]) -> bool:
    """Whether ``e`` is an error on every row leaving ``unbound`` unbound: such a
    variable, a comparison, arithmetic or ``!``, ``-``, ``+`` over such an error, or
    ``&&`` / ``||`` of two (error && error, error || error: errors)."""
    match e:
        case ox.Variable():
            return e.value in unbound
        case ex.Unary(_, operand):
            return _fails(operand, unbound)
        case ex.Binary(op, left, right) if op in _STRICT:
            return _fails(left, unbound) or _fails(right, unbound)
        case ex.Binary(_, left, right):
            return _fails(left, unbound) and _fails(right, unbound)
    return False
