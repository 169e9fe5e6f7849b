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
"""

from __future__ import annotations

from collections.abc import Callable
from weakref import WeakKeyDictionary

import numpy as np

from sepia.engine.columnar.expressions import TRUE, UNSURE, Boolean, Columns, Context, compiled
from sepia.engine.columnar.groups import NumericIds
from sepia.engine.columnar.tables import Table, distinct_inputs
from sepia.engine.columnar.terms import TermKinds
from sepia.engine.r2r.expressions import ExpressionEvaluator
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
