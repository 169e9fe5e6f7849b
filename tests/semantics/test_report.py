"""Evaluation instants of report policies (RSP-QL Definition 23, semantics.md), by hand.

Timeline (RSP-QL Examples 6-10):
  nearby : 2 diana-a, eve-b | 5 carl-a | 7 eve-a | 12 diana-b   w1 = (5, 2, t0 1)
  coupons: 8 alice | 15 bob                                      w2 = (2, 2, t0 0)
w1 closes at 6, 8, ..., w2 at 2, 4, .... Each window is flushed to the close of its last
window holding its stream's last element: w1 holds 12 up to (11, 16], w2 holds 15 in
(14, 16]; the input flushes to 16.
"""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from sepia.algebra import dataset as ds
from sepia.algebra import report as rp
from sepia.semantics.dataset import window_input
from sepia.semantics.report import evaluation_instants, input_span

from .support import element, iri

W1, W2 = iri("w1"), iri("w2")
COUPONS = [element(8, ("alice", "offers", "c10")), element(15, ("bob", "offers", "coffee"))]


@pytest.fixture
def windows(nearby):
    return [
        window_input(ds.WindowDecl(W1, iri("nearby"), ds.Sliding(5, 2, 1)), nearby),
        window_input(ds.WindowDecl(W2, iri("coupons"), ds.Sliding(2, 2, 0)), COUPONS),
    ]


@pytest.mark.parametrize(
    ("strategies", "expected"),
    [
        # RSP-QL Example 10: the evaluation occurs at time 8 and 16
        ((rp.WindowClose(W2), rp.NonEmpty(W2)), [8, 16]),
        ((rp.ContentChange(W1),), [2, 5, 7, 12]),
        ((rp.ContentChange(),), [2, 5, 7, 8, 12, 15]),
        ((rp.WindowClose(W1),), [6, 8, 10, 12, 14, 16]),
        ((rp.WindowClose(W1), rp.ContentChange(W1)), [12]),
        ((rp.WindowClose(W1), rp.NonEmpty(W1)), [6, 8, 10, 12, 14, 16]),  # 12 is in (9, 14]
        ((rp.Periodic(5),), [5, 10, 15]),
        ((rp.NonEmpty(W2),), [8, 15]),  # a condition alone: checked at content changes
    ],
)
def test_instants(windows, strategies, expected):
    assert evaluation_instants(rp.Report(strategies), windows) == expected


def test_until_cuts_or_extends_the_flush(windows):
    assert evaluation_instants(rp.Report((rp.WindowClose(W2),)), windows, until=9) == [2, 4, 6, 8]
    assert input_span(windows, None) == (2, 16)
    assert input_span(windows, 30) == (2, 30)


def test_unknown_window_and_empty_input(windows):
    with pytest.raises(ValueError, match="unknown window"):
        evaluation_instants(rp.Report((rp.WindowClose(ox.NamedNode("urn:x")),)), windows)
    empty = [window_input(ds.WindowDecl(W1, iri("nearby"), ds.Sliding(5, 2, 1)), [])]
    assert evaluation_instants(rp.Report((rp.WindowClose(),)), empty) == []


@pytest.mark.parametrize(
    ("spec", "closes", "flush"),
    [
        # a landmark window closes at every arrival from its t0 on (elements before t0 never
        # enter it)
        (ds.Landmark(1), [2, 5, 7, 12], 12),
        (ds.Landmark(5), [5, 7, 12], 12),
        (ds.Now(), [2, 5, 7, 12], 12),
        (ds.CountBased(2), [2, 5, 7, 12], 12),
        (ds.Interval(3, 6), [6], 12),
    ],
)
def test_other_windows(nearby, spec, closes, flush):
    window = window_input(ds.WindowDecl(W1, iri("nearby"), spec), nearby)
    assert list(window.closes(0, 20)) == closes
    assert window.flush(12) == flush
