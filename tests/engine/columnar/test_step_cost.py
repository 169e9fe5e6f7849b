"""What a paced step's fast paths must keep: window chunks merged as they pile up show
the row window's state, packed row codes give ``numpy.unique(axis=0)``'s answer, and
PARTITION BY routing's searches give the brute-force answer."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.algebra import dataset as ds
from sepia.engine.columnar import windows
from sepia.engine.columnar.partitions import Routing
from sepia.engine.columnar.sequences import _segments
from sepia.engine.columnar.tables import packed, unique_rows
from sepia.engine.columnar.windows import ColumnWindow
from sepia.engine.s2r.windows import WindowOperator, WindowState


@pytest.mark.parametrize(("loose", "chunks"), [(2, 3), (windows.LOOSE, windows.CHUNKS)])
def test_many_single_pushes_show_the_row_window(monkeypatch, loose, chunks):
    """3,000 elements, one at a time and in column slices, read at random instants: the
    same rows and graph as ``WindowState`` at every read (chunks made and merged)."""
    monkeypatch.setattr(windows, "LOOSE", loose)
    monkeypatch.setattr(windows, "CHUNKS", chunks)
    draw = random.Random(19)
    operator = WindowOperator(ds.Sliding(400, 100, 0))
    rows_window, columns_window = WindowState(operator), ColumnWindow(operator)
    t = 0
    for _ in range(3000):
        t += draw.randrange(3)
        triples = tuple((draw.randint(1, 40), draw.randint(1, 3), draw.randint(1, 40))
                        for _ in range(draw.randrange(3)))
        rows_window.advance(t)
        rows_window.insert(t, triples)
        columns_window.advance(t)
        if draw.random() < 0.1:
            spo = np.array(triples, dtype=np.int64).reshape(-1, 3)
            columns_window.extend(np.array([t]), np.zeros(len(spo), dtype=np.int64),
                                  spo[:, 0], spo[:, 1], spo[:, 2])
        else:
            columns_window.insert(t, triples)
        if draw.random() < 0.02:
            assert columns_window.rows() == rows_window.rows()
            graph = columns_window.graph
            shown = set(zip(graph.s.tolist(), graph.p.tolist(), graph.o.tolist(), strict=True))
            assert shown == set(rows_window.graph.triples())
            assert columns_window.next_eviction() == rows_window.next_eviction()
    assert columns_window.rows() == rows_window.rows()


columns_of = st.integers(1, 3).flatmap(lambda width: st.lists(
    st.tuples(*[st.sampled_from([-3, 0, 1, 2, 7, 2**40, 2**62, -(2**62)])] * width),
    min_size=1, max_size=30))


@settings(max_examples=200, deadline=None)
@given(columns_of)
def test_unique_rows_is_numpys_unique_over_rows(rows):
    """Values, first rows and inverse as ``numpy.unique(axis=0)``'s, ranges too wide to
    pack included (they take numpy's own path)."""
    stacked = np.array(rows, dtype=np.int64)
    columns = list(stacked.T)
    values, first, inverse = np.unique(stacked, axis=0, return_index=True, return_inverse=True)
    *mine, my_first, my_inverse = unique_rows(columns, index=True, inverse=True)
    assert np.array_equal(np.stack(mine, axis=1), values)
    assert my_first.tolist() == first.tolist()
    assert my_inverse.tolist() == inverse.reshape(-1).tolist()
    assert np.array_equal(np.stack(unique_rows(columns), axis=1), values)
    code = packed(columns)
    if code is not None:  # ordered as the rows, equal exactly when they are
        order = sorted(range(len(rows)), key=lambda i: rows[i])
        assert [code[i] for i in order] == sorted(code.tolist())
        assert len(set(code.tolist())) == len(set(rows))


pairs = st.lists(st.tuples(st.integers(1, 6), st.integers(0, 9)), max_size=25)


@settings(max_examples=200, deadline=None)
@given(pairs, st.lists(st.tuples(st.integers(1, 8), st.integers(0, 9), st.integers(-2, 11)),
                       max_size=20), st.sampled_from([1, 10**6]))
def test_routing_searches_are_the_brute_force_answers(routed, asked, spread):
    """``members``: whether a pair is routed; ``next_instant``: a partition's first
    instant after a time (element i is stamped 10 * i + 3). Keys ``spread`` apart: a
    range too wide for ``Routing``'s table of keys (the binary search instead)."""
    routed = [(k * spread, e) for k, e in routed]
    asked = [(k * spread, e, a) for k, e, a in asked]
    times = np.arange(10) * 10 + 3
    element = np.array([e for _, e in routed], dtype=np.int64)
    key = np.array([k for k, _ in routed], dtype=np.int64)
    key, element = unique_rows([key, element])
    routing = Routing(element, key, *unique_rows([key, times[element]]))
    ask_key = np.array([k for k, _, _ in asked], dtype=np.int64)
    ask_element = np.array([e for _, e, _ in asked], dtype=np.int64)
    after = np.array([10 * a for _, _, a in asked], dtype=np.int64)
    expected = [(k, e) in set(routed) for k, e, _ in asked]
    assert routing.members(ask_element, ask_key).tolist() == expected
    assert routing.members(ask_element, ask_key).tolist() == expected  # its kept answer
    flipped = [(k, e) in set(routed) for k, e, _ in asked[::-1]]
    assert routing.members(ask_element[::-1].copy(), ask_key[::-1].copy()).tolist() == flipped
    assert routing.members(ask_element, ask_key).tolist() == expected  # not the last one's
    found_time, found = routing.next_instant(ask_key, after)
    for (k, _, a), when, has in zip(asked, found_time.tolist(), found.tolist(), strict=True):
        later = sorted(10 * e + 3 for rk, e in set(routed) if rk == k and 10 * e + 3 > 10 * a)
        assert has == bool(later)
        if later:
            assert when == later[0]


@settings(max_examples=200, deadline=None)
@given(st.sets(st.integers(-5, 40)), st.lists(st.integers(-10, 50), max_size=30),
       st.sampled_from([1, 10**7]))
def test_segments_are_each_keys_index_or_absent(among, keys, spread):
    """A key's index among a state's sorted distinct partitions, -1 where it has none:
    by a table over a small range, or (keys ``spread`` wide) by a binary search."""
    among_sorted = sorted(k * spread for k in among)
    keys = [k * spread for k in keys]
    found = _segments(np.array(among_sorted, dtype=np.int64), np.array(keys, dtype=np.int64))
    assert found.tolist() == [among_sorted.index(k) if k in among_sorted else -1
                              for k in keys]
