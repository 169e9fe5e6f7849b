"""Distinct rows by one plain sort (``columnar.codes``): the same first rows and inverse
as ``numpy.unique``, and numpy's own answer where the codes are too wide to carry a row
number."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.engine.columnar.codes import first_rows, firsts, grouped, ranked

small = st.lists(st.integers(0, 30), max_size=60)
wide = st.lists(st.integers(-(2**62), 2**62), max_size=20)


@settings(max_examples=200, deadline=None)
@given(small)
def test_first_rows_are_numpys(values: list[int]) -> None:
    code = np.array(values, dtype=np.int64)
    found = first_rows(code, inverse=True)
    assert found is not None
    _, first, back = np.unique(code, return_index=True, return_inverse=True)
    assert found[0].tolist() == first.tolist()
    assert found[1] is not None and found[1].tolist() == back.reshape(-1).tolist()


def test_first_rows_by_hand() -> None:
    found = first_rows(np.array([5, 2, 5, 9, 2], dtype=np.int64), inverse=True)
    assert found is not None and found[1] is not None
    assert found[0].tolist() == [1, 0, 3]
    assert found[1].tolist() == [1, 0, 1, 2, 0]


def test_too_wide_codes_are_left_to_numpy() -> None:
    assert first_rows(np.array([2**62, 1], dtype=np.int64)) is None
    assert first_rows(np.array([-1, 1], dtype=np.int64)) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from([0, 3, 2**61])), max_size=40))
def test_grouped_rows_are_numpys(rows: list[tuple[int, int]]) -> None:
    columns = [np.array([r[k] for r in rows], dtype=np.int64) for k in range(2)]
    first, back = grouped(columns)
    if not rows:
        assert not len(first) and not len(back)
        return
    _, want_first, want_back = np.unique(np.stack(columns, axis=1), axis=0,
                                         return_index=True, return_inverse=True)
    assert first.tolist() == want_first.tolist()
    assert back.tolist() == want_back.reshape(-1).tolist()
    assert firsts(columns).tolist() == want_first.tolist()


@settings(max_examples=200, deadline=None)
@given(st.one_of(small, wide))
def test_ranked_is_numpys_inverse(values: list[int]) -> None:
    column = np.array(values, dtype=np.int64)
    want = np.unique(column, return_inverse=True)[1].reshape(-1)
    assert ranked(column).tolist() == want.tolist()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(*[st.sampled_from([-(2**40), 7, 2**40, 2**50 + 1])] * 5),
                min_size=1, max_size=40))
def test_wide_rows_are_ranked_in_order(rows: list[tuple[int, ...]]) -> None:
    """Five columns of 40-50 bits: packing alone overflows, ranks keep the order."""
    columns = [np.array([r[k] for r in rows], dtype=np.int64) for k in range(5)]
    _, want_first, want_back = np.unique(np.stack(columns, axis=1), axis=0,
                                         return_index=True, return_inverse=True)
    first, back = grouped(columns)
    assert first.tolist() == want_first.tolist()
    assert back.tolist() == want_back.reshape(-1).tolist()
