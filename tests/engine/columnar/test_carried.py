"""A run's numbers carried with it (``columnar.carried``): what it carries reads back as
``Columns``'s numbers of the slot, a mantissa too wide is not carried, and a run's
distinctness ignores the carried column."""

from __future__ import annotations

import numpy as np
import pyoxigraph as ox
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.engine.columnar.carried import carried, carried_slot, with_numbers
from sepia.engine.columnar.expressions import Columns
from sepia.engine.columnar.groups import NumericIds
from sepia.engine.columnar.partitions import distinct
from sepia.engine.columnar.tables import NO_ID, Table
from sepia.engine.r2r.numbers import Terms

from ..generators import EX
from ..support import filter_plan, xsd

TERMS = [xsd("-2", "integer"), xsd("7", "integer"), xsd("6.99", "decimal"),
         xsd("-0.5", "decimal"), xsd("4.9999999", "decimal"), xsd("7.0E0", "double"),
         ox.Literal("3"), xsd("x", "integer"), ox.NamedNode(EX + "a"),
         xsd("144115188075855871", "integer")]
"""Sure numbers, one just under 2^57; a double, a string, an ill-typed literal, an IRI."""


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from(TERMS)), min_size=1, max_size=12))
def test_carried_numbers_are_columns(column: list[ox.Literal | ox.NamedNode | None]) -> None:
    codec, _, _ = filter_plan("?a > ?b")
    ids = np.array([NO_ID if t is None else codec.encode(t) for t in column], dtype=np.int64)
    runs = with_numbers(Table({4: ids}, len(ids)), [4, 9], NumericIds(Terms(codec)))
    assert carried_slot(9) not in runs.columns  # the runs do not bind it
    mine = carried(runs, 4)
    assert mine is not None
    theirs = Columns(Table({4: ids}, len(ids)), NumericIds(Terms(codec))).column(4)
    for field in ("state", "digits", "mantissa"):
        assert getattr(mine, field).tolist() == getattr(theirs, field).tolist(), field


def test_too_wide_a_mantissa_is_read_not_carried() -> None:
    codec, _, _ = filter_plan("?a > ?b")
    wide = codec.encode(xsd("144115188075855872", "integer"))  # 2^57
    runs = with_numbers(Table({4: np.array([wide])}, 1), [4], NumericIds(Terms(codec)))
    assert carried(runs, 4) is None


def test_by_hand_and_distinct_ignores_it() -> None:
    codec, _, _ = filter_plan("?a > ?b")
    ids = np.array([codec.encode(xsd("-0.5", "decimal"))] * 2
                   + [codec.encode(xsd("12", "integer"))], dtype=np.int64)
    runs = with_numbers(Table({4: ids}, 3), [4], NumericIds(Terms(codec)))
    mine = carried(runs, 4)
    assert mine is not None
    assert mine.mantissa.tolist() == [-5, -5, 12] and mine.digits.tolist() == [1, 1, 0]
    assert distinct(runs).size == 2
    marked = Table({4: ids[:2], carried_slot(4): np.array([1, 2])}, 2)  # not a real code:
    assert distinct(marked).size == 1  # runs are told apart by their slots' ids only
