"""Properties checked against brute force on random inputs (hypothesis)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from sepia.algebra import dataset as wd
from sepia.semantics import spaseq as sq
from sepia.semantics.mappings import EventMapping, Mu
from sepia.semantics.r2s import dstream, istream

from .support import iri

times = st.integers(min_value=-20, max_value=60)
sizes = st.integers(min_value=1, max_value=12)


@given(t=times, width=sizes, slide=sizes, t0=st.integers(min_value=-10, max_value=10))
def test_windows_for_is_every_window_holding_t(t, width, slide, t0):
    brute = [(t0 + k * slide, t0 + k * slide + width) for k in range(0, 200)]
    assert wd.windows_for(t, width, slide, t0) == [(o, c) for o, c in brute if o < t <= c]


@given(width=sizes, slide=sizes, t0=st.integers(min_value=-10, max_value=10), low=times, span=sizes)
def test_close_times_are_the_closes_in_range(width, slide, t0, low, span):
    high = low + span * 3
    brute = [t0 + k * slide + width for k in range(0, 200)]
    closes = wd.close_times(width, slide, t0, low, high)
    assert list(closes) == [c for c in brute if low <= c <= high]


bags = st.lists(st.text(alphabet="abc", max_size=4).map(Counter), min_size=1, max_size=6)


@given(bags)
def test_istream_and_dstream_rebuild_each_answer(answers):
    previous: Counter[str] = Counter()
    for now in answers:
        assert previous + istream(now, previous) - dstream(now, previous) == now
        previous = now


# SPAseq Definitions 10-12, written as the paper's set comprehensions, against the matcher
events = st.lists(
    st.tuples(st.integers(min_value=0, max_value=12), st.sampled_from("AB"), st.sampled_from("xy")),
    min_size=1,
    max_size=9,
)


def _mappings(timeline, label):
    return {
        EventMapping(Mu({"v": iri(value)}), t, t, frozenset({("s", f"{label}{t}{value}")}))
        for t, lab, value in timeline
        if lab == label
    }


def _definition(operator, a_set, b_set, all_times):
    pairs = set()
    for a in a_set:
        for b in b_set:
            if not (a.end < b.end and a.compatible(b)):
                continue
            if operator == ";" and any(a.end < z.end < b.end and a.compatible(z) for z in b_set):
                continue
            if operator == "," and any(a.end < t < b.end for t in all_times):
                continue
            pairs.add((a.end, b.end, a.mu["v"]))
    return pairs


@given(events, st.sampled_from([":", ";", ","]))
def test_spaseq_sequences_follow_definitions_10_to_12(timeline, operator):
    a_set, b_set = _mappings(timeline, "A"), _mappings(timeline, "B")
    times = tuple(sorted({t for t, _, _ in timeline}))
    elements = [
        sq.Element(frozenset(a_set), None, "", frozenset({"v"})),
        sq.Element(frozenset(b_set), operator, "", frozenset({"v"})),
    ]
    found = {
        (m.start, m.end, m.common["v"]) for m in sq.sequence(elements, sq.Bounds(times, times[-1]))
    }
    assert found == _definition(operator, a_set, b_set, times)
