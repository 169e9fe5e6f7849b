"""A FILTER over a variable no row binds, decided once (``comparisons.never_true``)."""

from __future__ import annotations

import numpy as np
import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.engine.columnar.comparisons import never_true, vector_filtered
from sepia.engine.columnar.groups import NumericIds
from sepia.engine.columnar.tables import Table, filtered
from sepia.engine.r2r.numbers import Terms

from ..support import filter_plan
from .test_expressions import CHECKS, LEAVES, TERMS, _setting, boolean

UNBOUND_D = frozenset({"d"})


@pytest.mark.parametrize(("condition", "expected"), [
    ("?d * 10 <= ?a", True),  # W6's B FILTER as PARTITION BY reads it: ?d is A's
    ("?a >= ?d", True),
    ("!(?d > 1)", True),  # ! of an error is an error
    ("-(?d) < 0", True),
    ("?d > 1 && ?a > 1", True),
    ("?a > 1 && (?d > 1 || ?d < 1)", True),
    ("?a > 1 || ?d > 1", False),  # true where ?a > 1
    ("!(?d > 1 && ?a > 1)", False),  # !(false) where ?a <= 1
    ("!(?d > 1 || ?d < 1)", True),  # error || error: an error
    ("BOUND(?d) || ?a > 1", False),
    ("!BOUND(?d)", False),
    ("COALESCE(?d, 1) = 1", False),
    ("?d IN (1, 2)", False),  # unsure: left to the rows
    ("?a > ?b", False),
])
def test_never_true_by_hand(condition: str, expected: bool) -> None:
    """Hand-worked: errors propagate through comparisons, arithmetic and signs; && needs
    one side never true, || both; BOUND, COALESCE and IN are not judged."""
    _, select, _ = filter_plan(condition)
    assert never_true(select.condition.expression, UNBOUND_D) is expected


@settings(max_examples=300, deadline=None, suppress_health_check=CHECKS)
@given(boolean(LEAVES),
       st.lists(st.tuples(*[st.sampled_from(TERMS)] * 3), min_size=1, max_size=10))
def test_never_true_keeps_no_row_of_the_evaluators(condition, rows):
    """Where ``never_true`` says so of ?d (no row binds it), the evaluator keeps no row."""
    evaluator, _, table, _ = _setting(condition, rows)
    if never_true(evaluator.expression, UNBOUND_D):
        assert filtered(table, evaluator).size == 0, condition


def test_a_filter_never_true_reads_no_row():
    """W6's B GPM as PARTITION BY matches it (?amount1 bound by A only): no row kept and
    no number looked up; with ?amount1 bound the rows are decided as before."""
    codec, select, slots = filter_plan("?b * 10 <= ?d")
    b, d = slots.index("b"), slots.index("d")
    ids = np.array([codec.encode(ox.Literal(v, datatype=ox.NamedNode(
        "http://www.w3.org/2001/XMLSchema#decimal"))) for v in ("4.99", "5.00", "5.01")])
    numbers = NumericIds(Terms(codec))
    kept = vector_filtered(Table({b: ids}, 3), select.condition, slots, numbers)
    assert kept.size == 0 and b in kept.columns and len(numbers.ids) == 0
    fifty = np.full(3, codec.encode(ox.Literal("50", datatype=ox.NamedNode(
        "http://www.w3.org/2001/XMLSchema#integer"))))
    kept = vector_filtered(Table({b: ids, d: fifty}, 3), select.condition, slots, numbers)
    assert kept.columns[b].tolist() == ids[:2].tolist()
