"""FILTERs decided on columns: comparisons of two variables' numbers, and ``&&`` of them.

SPAseq's FILTERs compare one element's price with another's (``?p2 > ?p1``, head and
shoulders' ``?p3 < ?p2 && ?p3 > ?p1``). Over a join of runs with candidates there are as
many distinct inputs as rows, so asking the expression evaluator once per distinct input
(``tables.filtered``) still costs a Python step per row. Here such a FILTER is decided
for all rows at once where it is exact to: both operands of every comparison bound to
xsd:integer or xsd:decimal terms (``groups.NumericIds``: a 64-bit mantissa and a number of
decimal digits) compared as 64-bit integers at the larger number of digits, when no
scaled mantissa leaves 2^62. A comparison with an unbound operand is an error, which a
conjunction of comparisons turns into false or an error: the row is dropped either way.
Every other row (a double, a string, an ill-typed literal, a mantissa too wide) is the
evaluator's, so the answer is the evaluator's on every row.
"""

from __future__ import annotations

import numpy as np
import pyoxigraph as ox

from sepia.algebra import expression as ex
from sepia.engine.columnar.groups import LIMIT, UNBOUND, NumericIds
from sepia.engine.columnar.tables import Ids, Table, distinct_inputs
from sepia.engine.r2r.expressions import ExpressionEvaluator
from sepia.engine.r2r.numeric import COMPARE
from sepia.engine.rows import Slots
from sepia.rdf.numbers import DECIMAL, INTEGER


def comparisons(e: ex.Expression, slots: Slots) -> list[tuple] | None:
    """The (test, left slot, right slot) of a conjunction of comparisons of two query
    variables, or None for any other shape."""
    match e:
        case ex.Binary(ex.BinaryOperator.AND, left, right):
            a, b = comparisons(left, slots), comparisons(right, slots)
            return None if a is None or b is None else a + b
        case ex.Binary(op, ox.Variable() as left, ox.Variable() as right) if op in COMPARE:
            if left.value in slots.names and right.value in slots.names:
                return [(COMPARE[op], slots.index(left.value), slots.index(right.value))]
    return None


def vector_filtered(
    table: Table, condition: ExpressionEvaluator, slots: Slots, numbers: NumericIds
) -> Table:
    """FILTER ``condition`` over the table: decided on columns where exact (see the
    module docstring), by the evaluator once per distinct input elsewhere."""
    found = comparisons(condition.expression, slots)
    if found is None or not table.size:
        return _by_evaluator(table, condition, np.ones(table.size, dtype=bool))
    sure = np.ones(table.size, dtype=bool)
    truth = np.ones(table.size, dtype=bool)
    dropped = np.zeros(table.size, dtype=bool)
    for test, left, right in found:
        a, b = table.columns.get(left), table.columns.get(right)
        if a is None or b is None:  # unbound in every row: an error
            return Table({k: v[:0] for k, v in table.columns.items()}, 0)
        (ka, da, ma), (kb, db, mb) = _numbers(a, numbers), _numbers(b, numbers)
        dropped |= (ka == UNBOUND) | (kb == UNBOUND)
        top = np.maximum(da, db)
        sa, sb = (10.0 ** (top - da)) * np.abs(ma), (10.0 ** (top - db)) * np.abs(mb)
        exact = np.isin(ka, (INTEGER, DECIMAL)) & np.isin(kb, (INTEGER, DECIMAL))
        exact &= (sa < LIMIT) & (sb < LIMIT)
        scaled_a = np.where(exact, ma * 10 ** np.where(exact, top - da, 0), 0)
        scaled_b = np.where(exact, mb * 10 ** np.where(exact, top - db, 0), 0)
        sure &= exact
        truth &= test(scaled_a, scaled_b)
    keep = sure & truth
    return _by_evaluator(table, condition, ~sure & ~dropped, keep)


def _numbers(column: Ids, numbers: NumericIds) -> tuple[np.ndarray, Ids, Ids]:
    """(kind, digits, mantissa) of each id of a column."""
    ids, inverse = np.unique(column, return_inverse=True)
    kind, digits, mantissa = numbers.of(ids)
    inverse = inverse.reshape(-1)
    return kind[inverse], digits[inverse], mantissa[inverse]


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
