"""Window functions against RSP-QL Examples 6-7 and RSEP-QL section 3.2, by hand.

Timeline of S_nearby (RSP-QL Example 6):  2: diana-a, eve-b | 5: carl-a | 7: eve-a | 12: diana-b
W1 = (alpha 5, beta 2, t0 1): (1,6] (3,8] (5,10] (7,12] (9,14] (11,16] ...
"""

from __future__ import annotations

import pytest

from sepia.algebra import dataset as wd
from sepia.semantics import windows as w


@pytest.mark.parametrize(
    ("t", "width", "slide", "t0", "expected"),
    [
        (9, 5, 2, 1, [(5, 10), (7, 12)]),  # Example 7: present window W3 = (5, 10]
        (8, 5, 2, 1, [(3, 8), (5, 10), (7, 12)]),  # a close time: (3, 8] closes at 8
        (6, 5, 2, 1, [(1, 6), (3, 8), (5, 10)]),  # the first window (1, 6] is (o, c]: 6 in it
        (1, 5, 2, 1, []),  # t0 itself: windows are open at o, none holds 1
        (2, 5, 2, 1, [(1, 6)]),
        (4, 2, 2, 0, [(2, 4)]),  # tumbling: exactly one window
        (5, 2, 2, 0, [(4, 6)]),
        (3, 1, 3, 0, []),  # hopping with gaps (width 1, slide 3): 3 is in no window
        (4, 1, 3, 0, [(3, 4)]),
    ],
)
def test_windows_for(t, width, slide, t0, expected):
    assert wd.windows_for(t, width, slide, t0) == expected


def test_present_window_is_earliest_opening():
    assert wd.present_window(9, 5, 2, 1) == (5, 10)
    assert wd.present_window(1, 5, 2, 1) is None


def test_close_times_and_flush():
    assert list(wd.close_times(2, 2, 0, 3, 16)) == [4, 6, 8, 10, 12, 14, 16]
    assert list(wd.close_times(5, 2, 1, 0, 11)) == [6, 8, 10]
    # the last window holding 15 is (13, 18]: the flush after an element at 15 goes to 18
    assert wd.last_close_holding(15, 5, 2, 1) == 18
    assert wd.last_close_holding(1, 5, 2, 1) is None


def test_invalid_parameters():
    with pytest.raises(ValueError, match="positive"):
        wd.windows_for(3, 0, 1)
    with pytest.raises(ValueError, match="positive count"):
        w.count_based(0)


def subjects(elements):
    return [e.triples[0].subject.value.rsplit("/", 1)[1] for e in elements]


@pytest.mark.parametrize(
    ("window", "t", "expected"),
    [
        (w.sliding(5, 2, 1), 9, ["eve"]),  # Example 7: W3 at 9 shows (5, 9]: eve-a@7
        (w.sliding(5, 2, 1), 8, ["carl", "eve"]),  # (3, 8]: carl@5, eve@7
        (w.sliding(5, 2, 1), 6, ["diana", "eve", "carl"]),  # (1, 6]: first window, both @2
        (w.sliding(5, 2, 1), 16, ["diana"]),  # (11, 16]: diana-b@12
        # (7, 12]: eve@7 sits on the opening o = 7 and is out; diana@12 at t = c is in
        (w.sliding(5, 2, 1), 12, ["diana"]),
        (w.sliding(2, 2, 0), 7, ["eve"]),  # tumbling (6, 8] at 7 shows (6, 7]
        (w.landmark(5), 12, ["carl", "eve", "diana"]),  # [5, 12]: 5 included
        (w.landmark(), 4, ["diana", "eve"]),
        (w.landmark(), 7, ["diana", "eve", "carl", "eve"]),  # [ALL]: the identity window
        (w.now(), 2, ["diana", "eve"]),  # equal timestamps: both elements at 2
        (w.now(), 3, []),
        (w.interval(5, 7), 12, ["carl", "eve"]),
        (w.interval(5, 7), 6, ["carl"]),  # nothing from the future
        (w.count_based(2), 7, ["carl", "eve"]),
        (w.count_based(2), 30, ["eve", "diana"]),
        # equal timestamps: the last element in arrival order, eve-b, not diana-a (both @2)
        (w.count_based(1), 2, ["eve"]),
        # nesting: W^sqcup[0, 6] . W^lambda(1) shows [1, 6] (RSEP-QL's W^sqcup[0, t3 - 1] . W)
        (w.nest(w.interval(0, 6), w.landmark(1)), 12, ["diana", "eve", "carl"]),
        # count over a time window: the last 1 of (3, 8]
        (w.nest(w.count_based(1), w.sliding(5, 2, 1)), 8, ["eve"]),
        # time over count: the last 3 elements by 12, of which those in (11, 12]
        (w.nest(w.sliding(1, 1), w.count_based(3)), 12, ["diana"]),
    ],
)
def test_window_functions(nearby, window, t, expected):
    assert subjects(window(nearby, t)) == expected
