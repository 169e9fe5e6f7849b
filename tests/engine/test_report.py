"""Report schedules on hand-drawn timelines: which instants are due, with or without
arrivals."""

from __future__ import annotations

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.algebra import dataset as ds
from sepia.algebra import report as rp
from sepia.engine.s2r.report import Arrivals, Schedule
from sepia.engine.s2r.windows import WindowOperator

W1, W2 = ox.NamedNode("urn:w1"), ox.NamedNode("urn:w2")
WINDOWS = {
    W1: ("urn:s1", WindowOperator(ds.Sliding(5, 2, 1))),
    W2: ("urn:s2", WindowOperator(ds.Sliding(2, 2, 0))),
}


def schedule(*strategies: rp.Strategy) -> Schedule:
    return Schedule(rp.Report(strategies), WINDOWS)


@pytest.mark.parametrize(
    ("strategies", "instants"),
    [
        ((rp.WindowClose(W2),), [2, 4, 6, 8, 10, 12]),
        ((rp.WindowClose(W1),), [6, 8, 10, 12]),  # t0 + width = 6, slide 2
        ((rp.WindowClose(),), [2, 4, 6, 8, 10, 12]),
        ((rp.Periodic(3),), [3, 6, 9, 12]),
        ((rp.Periodic(3, W1),), [1, 4, 7, 10]),  # aligned on w1's t0 = 1
        ((rp.WindowClose(W2), rp.Periodic(3)), [6, 12]),
        ((rp.WindowClose(W1), rp.Periodic(5, W1)), [6]),  # 1 + 5k and 6 + 2k: 6, 16
        ((rp.ContentChange(),), []),  # only arrivals make content change
    ],
)
def test_instants_without_arrivals(strategies, instants):
    assert list(schedule(*strategies).between(0, 13)) == instants


def test_arrival_instants():
    change = schedule(rp.ContentChange(W1))
    assert change.due_at(3, Arrivals(frozenset({W1})))
    assert not change.due_at(3, Arrivals(frozenset({W2})))
    both = schedule(rp.ContentChange(), rp.WindowClose(W2))
    assert both.due_at(4, Arrivals(frozenset({W1})))
    assert not both.due_at(5, Arrivals(frozenset({W1})))


@pytest.mark.parametrize("spec", [ds.CountBased(2), ds.Landmark(3), ds.Now()])
def test_windows_that_move_with_elements_close_at_what_they_admit(spec):
    windows = {W1: ("urn:s1", WindowOperator(spec))}
    close = Schedule(rp.Report((rp.WindowClose(),)), windows)
    assert close.due_at(7, Arrivals(frozenset({W1})))
    assert not close.due_at(7, Arrivals(frozenset()))  # not admitted
    assert not close.due_at(7, Arrivals(frozenset()))
    assert list(close.between(0, 10)) == []


def test_conditions_only_fire_on_content_change():
    only = schedule(rp.NonEmpty(W2))
    assert only.triggers == (rp.ContentChange(),)
    assert only.conditions == (rp.NonEmpty(W2),)


def test_unknown_window_is_refused():
    with pytest.raises(ValueError, match="unknown window"):
        schedule(rp.WindowClose(ox.NamedNode("urn:nope")))


TIME_DRIVEN = st.lists(
    st.one_of(
        st.sampled_from([rp.WindowClose(W1), rp.WindowClose(W2), rp.WindowClose()]),
        st.builds(rp.Periodic, st.integers(1, 7), st.sampled_from([None, W1, W2])),
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=300, deadline=None)
@given(TIME_DRIVEN, st.integers(0, 40), st.integers(1, 60))
def test_next_due_never_skips_a_due_instant(strategies, after, bound):
    """``next_due`` (the engine asks it once per window close, not once per arrival) against
    every instant checked one by one: nothing due before it, and it is the first due
    instant when it lies before the bound."""
    policy = schedule(*strategies)
    assert policy.time_driven
    due = [u for u in range(after + 1, after + 200) if policy.due_at(u, Arrivals())]
    found = policy.next_due(after, after + bound)
    if found is None:
        assert due == []
        return
    assert all(u >= found for u in due)
    if found < after + bound:
        assert due[0] == found
    assert list(policy.between(after, after + bound)) == [u for u in due if u < after + bound]


def test_arrival_driven_policies_are_not_time_driven():
    assert not schedule(rp.ContentChange()).time_driven
    assert not schedule(rp.WindowClose(W2), rp.ContentChange(W1)).time_driven
    moving = {W1: ("urn:s1", WindowOperator(ds.Landmark(0)))}
    assert not Schedule(rp.Report((rp.WindowClose(),)), moving).time_driven
