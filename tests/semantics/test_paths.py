"""Nested path expressions (CQELS-CEP seed 000, Examples 2 and 5) over the network plan.

conn1 m->b subway, conn2 b->c subway, conn3 h->g subway, conn4 g->c tram.
"""

from __future__ import annotations

import pyoxigraph as ox

from sepia.algebra import path as pa
from sepia.semantics.paths import evaluate_path

from .support import iri

PLAN = [
    ox.Triple(iri(c), iri(p), iri(o))
    for c, beg, end, means in [
        ("conn1", "m", "b", "subway"),
        ("conn2", "b", "c", "subway"),
        ("conn3", "h", "g", "subway"),
        ("conn4", "g", "c", "tram"),
    ]
    for p, o in (("beg", beg), ("end", end), ("means", means))
]

BEG, END, MEANS = (pa.Link(iri(n)) for n in ("beg", "end", "means"))
HOP = pa.Sequence(pa.Inverse(BEG), END)
SUBWAY_HOP = pa.Sequence(pa.Sequence(pa.Inverse(BEG), pa.NestedTest(MEANS, iri("subway"))), END)


def names(relation):
    return {(x.value[19:], y.value[19:]) for x, y in relation}


def test_example_5_subway_reachability():
    # (^:beg/[:means :subway]/:end)+: m reaches b and c; h reaches g only (conn4 is a tram)
    assert names(evaluate_path(pa.OneOrMore(SUBWAY_HOP), PLAN)) == {
        ("m", "b"),
        ("m", "c"),
        ("b", "c"),
        ("h", "g"),
    }


def test_without_the_nested_test_the_tram_counts():
    assert ("h", "c") in names(evaluate_path(pa.OneOrMore(HOP), PLAN))


def test_nested_test_without_term_and_other_axes():
    # [:means] holds at every connection: it stays put
    assert names(evaluate_path(pa.NestedTest(MEANS), PLAN)) == {
        (f"conn{i}", f"conn{i}") for i in range(1, 5)
    }
    assert names(evaluate_path(pa.Alternative(BEG, END), PLAN)) >= {("conn1", "m"), ("conn1", "b")}
    assert ("m", "m") in names(evaluate_path(pa.ZeroOrMore(HOP), PLAN))
    assert ("m", "c") not in names(evaluate_path(pa.ZeroOrOne(HOP), PLAN))
    negated = names(evaluate_path(pa.NegatedSet((BEG.iri, END.iri), ()), PLAN))
    assert negated == {
        (f"conn{i}", m) for i, m in zip(range(1, 5), ["subway"] * 3 + ["tram"], strict=True)
    }
