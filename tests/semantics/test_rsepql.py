"""RSEP-QL event patterns (seed 001, Examples 7-11) on the stream of semantics.md's E3.

Timeline: 2 G1{a1 p b1} | 4 G2{a2 p b2} | 6 G3{b1 q c1, a2 p b2} | 8 G4{b2 q c2, a3 p b3}
| 10 G5{b1 q c1}.  E1 = EVENT w1 {?x :p ?y},  E2 = EVENT w2 {?y :q ?z}.
"""

from __future__ import annotations

import pytest

from sepia.semantics import rsepql as r
from sepia.semantics.mappings import EventMapping, Mu

from .support import element, em, iri

STREAM = [
    element(2, ("a1", "p", "b1")),
    element(4, ("a2", "p", "b2")),
    element(6, ("b1", "q", "c1"), ("a2", "p", "b2")),
    element(8, ("b2", "q", "c2"), ("a3", "p", "b3")),
    element(10, ("b1", "q", "c1")),
]


def matcher(predicate: str, subject: str, obj: str):
    """[[?subject :predicate ?obj]] over one element's graph."""

    def matches(e):
        return [
            Mu({subject: t.subject, obj: t.object})
            for t in e.triples
            if t.predicate == iri(predicate)
        ]

    return matches


def e1(upto: int) -> set[EventMapping]:
    return r.event("w1", [e for e in STREAM if 1 <= e.time <= upto], matcher("p", "x", "y"))


def e2(upto: int) -> set[EventMapping]:
    return r.event("w2", [e for e in STREAM if upto - 5 < e.time <= upto], matcher("q", "y", "z"))


def xyz(start, end, i, j=None):
    j = j or i
    return em(start, end, x=f"a{i}", y=f"b{i}", z=f"c{j}")


def test_example_7_event():
    assert e2(8) == {em(6, 6, y="b1", z="c1"), em(8, 8, y="b2", z="c2")}
    assert {m.support for m in e2(8)} == {
        frozenset({(6, 6, "w2", "s", "g6-b1")}),
        frozenset({(8, 8, "w2", "s", "g8-b2")}),
    }


def test_example_8_unrestricted_seq():
    assert r.seq(e1(8), e2(8)) == {xyz(2, 6, 1), xyz(4, 8, 2), xyz(6, 8, 2)}
    assert r.seq(e1(10), e2(10)) == {xyz(2, 6, 1), xyz(4, 8, 2), xyz(6, 8, 2), xyz(2, 10, 1)}


def test_seq_equal_timestamps_do_not_sequence():
    # G3 holds both b1 :q c1 and a2 :p b2 at 6; (a2 :p b2)@6 cannot precede (b2 :q ...)@6
    same_time = {em(6, 6, y="b2", z="c9")}
    assert r.seq(e1(6), same_time) == {em(4, 6, x="a2", y="b2", z="c9")}


def test_first_and_last():
    assert r.first(e1(10)) == {em(2, 2, x="a1", y="b1")}
    assert r.last(e1(10)) == {em(8, 8, x="a3", y="b3")}
    ties = {em(3, 3, x="a"), em(3, 3, x="b"), em(1, 3, x="c")}
    assert r.last(ties) == {em(3, 3, x="a"), em(3, 3, x="b")}
    assert r.first(set()) == set()


def test_naive_takes_the_latest_of_each_side():
    # at 8: LAST(E1) = a3 p b3 @8, LAST(E2) = b2 q c2 @8: not before, incompatible -> nothing
    assert r.seq_naive(e1(8), e2(8)) == set()
    # at 6: LAST(E1) = a2 p b2 @6 (G3), LAST(E2) = b1 q c1 @6 -> nothing either
    assert r.seq_naive(e1(6), e2(6)) == set()
    left = {em(1, 1, x="a"), em(2, 2, x="b")}
    assert r.seq_naive(left, {em(5, 5, x="b", z="z")}) == {em(2, 5, x="b", z="z")}
    assert r.seq_naive(left, {em(5, 5, x="a", z="z")}) == set()


@pytest.mark.parametrize(
    ("recent", "expected_per_time"),
    [
        # Example 11: chronological consumes G1, G2, G3; at 10 nothing is left for b1 q c1
        (False, {6: {xyz(2, 6, 1)}, 8: {xyz(4, 8, 2)}, 10: set()}),
        (True, {6: {xyz(2, 6, 1)}, 8: {xyz(6, 8, 2)}, 10: set()}),
    ],
)
def test_consumption_across_evaluations(recent, expected_per_time):
    consumed: frozenset = frozenset()
    for t, expected in expected_per_time.items():
        found, consumed = r.seq_consuming(e1(t), e2(t), consumed, recent)
        assert found == expected, t


def test_consumption_within_one_evaluation():
    left = {em(1, 1, "l1", x="a"), em(2, 2, "l2", x="a")}
    right = {em(5, 5, "r1", x="a", z="z1"), em(6, 6, "r2", x="a", z="z2")}
    found, consumed = r.seq_consuming(left, right, frozenset(), recent=False)
    assert found == {em(1, 5, x="a", z="z1"), em(2, 6, x="a", z="z2")}
    assert consumed == {("w", n) for n in ("l1", "l2", "r1", "r2")}
    found, _ = r.seq_consuming(left, right, frozenset(), recent=True)
    assert found == {em(2, 5, x="a", z="z1"), em(1, 6, x="a", z="z2")}
    assert r.seq_consuming(left, right, frozenset({("w", "l1"), ("w", "l2")}), False)[0] == set()


def test_event_keeps_intervals():
    interval = element(3, ("a1", "p", "b1"), end=5)
    assert r.event("w", [interval], matcher("p", "x", "y")) == {em(3, 5, x="a1", y="b1")}


def test_a_sub_select_inside_an_event_reads_the_event_graph_alone():
    """A sub-SELECT counting ?x's :p objects inside EVENT: per event, 2 at 1 ({a p b, a p c})
    and 1 at 2 ({a p d}). pyoxigraph evaluated it inside GRAPH ?element over every named
    graph at once (every event's, the window's, the background's :kb): 6 at 1, 7 at 2."""
    import pyoxigraph as ox

    from sepia.lang import parse_query
    from sepia.semantics import evaluate

    from .support import EX

    stream = [element(1, ("a", "p", "b"), ("a", "p", "c")), element(2, ("a", "p", "d"))]
    background = ox.Store()
    background.add(ox.Quad(iri("a"), iri("p"), iri("z"), iri("kb")))
    query = parse_query(
        f"PREFIX : <{EX}>\nSELECT ?x ?n FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 1]\n"
        "WHERE { MATCH { EVENT :w { { SELECT ?x (COUNT(?y) AS ?n) WHERE { ?x :p ?y }"
        " GROUP BY ?x } } } }"
    )
    results = evaluate(query, {EX + "s": stream}, background)
    assert [(r.t, r.interval, r.values["x"], int(r.values["n"].value)) for r in results] == [
        (1, (1, 1), iri("a"), 2), (2, (2, 2), iri("a"), 1)
    ]  # fmt: skip
