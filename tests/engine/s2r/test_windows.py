"""Window operators on hand-drawn timelines (virtual clock, no sleeps)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.algebra import dataset as ds
from sepia.algebra.dataset import last_close_holding, windows_for
from sepia.engine.graph import SMALL, TripleIndex
from sepia.engine.s2r.windows import WindowOperator, WindowState


def times(state: WindowState) -> list[int]:
    return [time for time, _ in state.elements]


def test_rspql_example_10_window_w1():
    """w1 = (5, 2, t0=1) over nearby: diana-a@2, eve-b@2, carl-a@5, eve-a@7, diana-b@12.
    At 8 the earliest window holding 8 is (3, 8]: carl@5, eve@7; at 16 it is (11, 16]."""
    state = WindowState(WindowOperator(ds.Sliding(5, 2, 1)))
    for time, triple in [(2, (1, 9, 2)), (2, (3, 9, 4)), (5, (5, 9, 2)), (7, (3, 9, 2))]:
        assert state.insert(time, (triple,))
    state.advance(8)
    assert times(state) == [5, 7]
    assert sorted(state.graph.match(None, 9, None)) == [(3, 9, 2), (5, 9, 2)]
    state.insert(12, ((1, 9, 4),))
    state.advance(16)
    assert times(state) == [12]


@pytest.mark.parametrize(
    ("spec", "time", "admitted"),
    [
        (ds.Sliding(2, 4, 0), 2, True),  # (0, 2]
        (ds.Sliding(2, 4, 0), 3, False),  # in the gap between (0, 2] and (4, 6]
        (ds.Sliding(2, 4, 0), 0, False),  # no window opens before t0 = 0
        (ds.Sliding(3, 1, 5), 5, False),
        (ds.Sliding(3, 1, 5), 6, True),
        (ds.Landmark(4), 3, False),
        (ds.Landmark(4), 4, True),
        (ds.Interval(2, 5), 5, True),
        (ds.Interval(2, 5), 6, False),
        (ds.Now(), 0, True),
    ],
)
def test_admits(spec, time, admitted):
    assert WindowOperator(spec).admits(time) is admitted


@pytest.mark.parametrize(
    ("spec", "closes"),
    [
        (ds.Sliding(5, 2, 1), [6, 8, 10, 12]),
        (ds.Sliding(2, 2, 0), [2, 4, 6, 8, 10, 12]),
        (ds.Interval(3, 7), [7]),
        (ds.Landmark(0), []),  # closes with its arrivals only (see test_report)
    ],
)
def test_closes(spec, closes):
    operator = WindowOperator(spec)
    assert [t for t in range(13) if operator.closes_at(t)] == closes
    firsts, t = [], -1
    while (t := operator.first_close_after(t)) is not None and t <= 12:
        firsts.append(t)
    assert firsts == closes


def test_count_based_keeps_the_last_elements_and_now_only_the_present():
    count = WindowState(WindowOperator(ds.CountBased(2)))
    now = WindowState(WindowOperator(ds.Now()))
    for time in (1, 1, 3):
        count.insert(time, ((time, 1, 1),))
        now.insert(time, ((time, 1, 1),))
    count.advance(9)
    assert times(count) == [1, 3]
    now.advance(3)
    assert times(now) == [3]


def test_a_triple_stays_while_one_element_still_carries_it():
    state = WindowState(WindowOperator(ds.Sliding(2, 1, 0)))
    state.insert(1, ((1, 2, 3),))
    state.insert(2, ((1, 2, 3), (4, 2, 3)))
    state.advance(3)  # (1, 3]: the element at 1 left
    assert sorted(state.graph.match(None, 2, 3)) == [(1, 2, 3), (4, 2, 3)]
    state.advance(4)
    assert len(state.graph) == 0


def test_state_rows_round_trip():
    operator = WindowOperator(ds.Landmark(0))
    state = WindowState(operator)
    state.insert(1, ((1, 2, 3), (1, 2, 4)))
    state.insert(2, ())
    rows = state.rows()
    assert rows == [(0, 1, 1, 2, 3), (0, 1, 1, 2, 4), (1, 2, None, None, None)]
    back = WindowState.from_rows(operator, rows)
    assert back.rows() == rows and len(back) == 2
    assert sorted(back.graph.match(1, None, None)) == [(1, 2, 3), (1, 2, 4)]


@pytest.mark.parametrize("filler", [0, SMALL])
def test_index_match_and_estimate(filler):
    """A small graph (an event's) is scanned whole, a larger one indexed on its first
    lookup: the same matches either way; estimates are upper bounds, exact bucket sizes
    once indexed."""
    others = [(100 + i, 7, 100 + i) for i in range(filler)]
    index = TripleIndex([(1, 2, 3), (1, 2, 4), (5, 2, 3), *others])
    assert index.small is (filler == 0)
    assert sorted(index.match(None, 2, 3)) == [(1, 2, 3), (5, 2, 3)]
    assert list(index.match(1, None, 4)) == [(1, 2, 4)]
    assert list(index.match(9, None, None)) == []
    assert index.estimate(None, 2, None) >= 3 and index.estimate(5, 2, None) >= 1
    if filler:
        assert not index.small  # indexed by the lookups above
        assert index.estimate(None, 2, None) == 3 and index.estimate(5, 2, None) == 1
        index.add((5, 2, 9))
        index.remove((1, 2, 4))
        assert sorted(index.match(5, 2, None)) == [(5, 2, 3), (5, 2, 9)]
        assert index.estimate(1, None, None) == 1


@settings(max_examples=500, deadline=None)
@given(
    st.integers(0, 400), st.integers(1, 60), st.integers(1, 60), st.integers(0, 30),
)
def test_sliding_window_arithmetic_agrees_with_the_reference_enumeration(t, width, slide, t0):
    """admits / lower / flush_end in constant time (a CQELS [RANGE 5m] slides by 1 ms)
    against the reference's list of every window holding t."""
    operator = WindowOperator(ds.Sliding(width, slide, t0))
    holding = windows_for(t, width, slide, t0)
    assert operator.admits(t) == bool(holding)
    assert operator.lower(t) == (holding[0][0] if holding else t)
    assert operator.flush_end(t) == (last_close_holding(t, width, slide, t0) or t)
    lower, through = operator.lower_through(t)  # cached by WindowState.advance
    assert through >= t
    for u in range(t, min(through, t + 150) + 1):
        holding = windows_for(u, width, slide, t0)
        assert lower == (holding[0][0] if holding else u)


@pytest.mark.parametrize("spec", [ds.Sliding(3, 1, 5), ds.Sliding(2, 4, 0), ds.Landmark(4),
                                  ds.Interval(2, 5), ds.Now(), ds.CountBased(2)])
def test_a_state_admits_what_its_operator_admits(spec):
    """``WindowState.admits`` (a threshold where admission is one) against the operator."""
    state, operator = WindowState(WindowOperator(spec)), WindowOperator(spec)
    assert [t for t in range(-3, 12) if state.admits(t)] == [
        t for t in range(-3, 12) if operator.admits(t)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.lists(st.tuples(*[st.integers(0, 3)] * 3),
                                                      max_size=3)), max_size=10),
       st.integers(0, 10))
def test_a_graph_first_read_late_is_the_one_kept_all_along(steps, read_at):
    """The instantaneous graph is built when first read (after ``read_at`` steps), then
    kept up to date: the same triples, counts included, as a window whose graph was read
    from the start, through insertions and evictions."""
    early, late = (WindowState(WindowOperator(ds.Sliding(3, 1, 0))) for _ in range(2))
    assert len(early.graph) == 0
    t = 0
    for n, (gap, triples) in enumerate(steps):
        t += gap + 1
        for state in (early, late):
            state.insert(t, tuple(triples))
            state.advance(t)
        if n >= read_at:
            assert late.graph._counts == early.graph._counts
            found = [sorted(s.graph.match(None, 1, None)) for s in (late, early)]
            assert found[0] == found[1]
