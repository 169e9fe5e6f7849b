"""RSEP-QL CHRONOLOGICAL and RECENT in the engine, on hand-derived cases: RSEP-QL Example 11
(E3's stream), ties between equal intervals (served in the order of their bindings), and a
three-event chain (the nested SEQ consumes only once the whole chain matches). Each case is
checked against the reference evaluator too."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest

from sepia.io.streams import read_stream
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.runtime.local import run
from sepia.semantics import evaluate

EX = "http://example.org/"
S = EX + "s"
E3 = Path(__file__).parents[3] / "examples" / "e3-rsepql-landmark"
INTEGER = ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")


def element(name: str, t: int, *triples: tuple[str, str, object]) -> StreamElement:
    graph = tuple(
        ox.Triple(ox.NamedNode(EX + s), ox.NamedNode(EX + p), ox.Literal(str(o), datatype=INTEGER))
        for s, p, o in triples
    )
    return StreamElement(S, EX + name, t, t, graph)


def answers(text: str, streams: dict) -> list[tuple]:
    """(t, interval, bindings) of the engine's results, checked equal to the reference's."""
    query = parse_query(text)
    got = list(run([("q", query)], streams))
    assert sorted(map(repr, got)) == sorted(map(repr, evaluate(query, streams, name="q")))
    return sorted(
        (r.t, r.interval, tuple((k, v.value) for k, v in r.binding)) for r in got
    )


def e3_query(policy: str) -> str:
    text = (E3 / "query.rq").read_text()
    return text.replace("WHERE", f"EVENT POLICY {policy}\nWHERE")


@pytest.mark.parametrize(
    ("policy", "expected"),
    [("CHRONOLOGICAL", [(6, (2, 6)), (8, (4, 8))]), ("RECENT", [(6, (2, 6)), (8, (6, 8))])],
)
def test_example_11_consumes_across_evaluations(policy, expected):
    """E3's stream (RSEP-QL Figure 1): G1, G2 / G3 and G4 are consumed, so G5's (b1 :q c1)
    finds no unconsumed partner at 10; at 8, b2 :q c2 takes G2 (earliest) or G3 (latest)."""
    streams = {EX + "s": list(read_stream(E3 / "stream.trig", EX + "s"))}
    assert [(t, i) for t, i, _ in answers(e3_query(policy), streams)] == expected


def two_events(policy: str) -> str:
    return (
        f"PREFIX : <{EX}>\nSELECT * FROM NAMED WINDOW :w ON :s [LANDMARK FROM 0]\n"
        f"EVENT POLICY {policy}\n"
        "WHERE { MATCH { EVENT :w { ?x :a ?u } SEQ EVENT :w { ?x :b ?v } } }"
    )


@pytest.mark.parametrize(("policy", "chosen"), [("CHRONOLOGICAL", "1"), ("RECENT", "2")])
def test_equal_left_intervals_are_taken_in_binding_order(policy, chosen):
    """Two left events at 1: CHRONOLOGICAL takes ?u = 1 (the least binding), RECENT ?u = 2."""
    stream = [element("g1", 1, ("x", "a", 1)), element("g2", 1, ("x", "a", 2)),
              element("g3", 3, ("x", "b", 3))]
    assert answers(two_events(policy), {S: stream}) == [
        (3, (1, 3), (("u", chosen), ("v", "3"), ("x", EX + "x")))
    ]


def test_equal_right_intervals_are_served_in_binding_order():
    """Two right events at 3 and one left event: ?v = 3 is served first and takes it."""
    stream = [element("g1", 1, ("x", "a", 1)), element("g2", 3, ("x", "b", 4)),
              element("g3", 3, ("x", "b", 3))]
    for policy in ("CHRONOLOGICAL", "RECENT"):
        assert answers(two_events(policy), {S: stream}) == [
            (3, (1, 3), (("u", "1"), ("v", "3"), ("x", EX + "x")))
        ]


@pytest.mark.parametrize(("policy", "chosen"), [("CHRONOLOGICAL", "1"), ("RECENT", "2")])
def test_a_chain_of_three_consumes_when_it_completes(policy, chosen):
    """A@1, A@2, B@3, C@4, C@5: at 4 the chain takes A@1 (CHRONOLOGICAL) or A@2 (RECENT) with
    B@3 and C@4, and consumes them; at 5 B@3 is gone, so C@5 completes nothing."""
    stream = [element("g1", 1, ("x", "a", 1)), element("g2", 2, ("x", "a", 2)),
              element("g3", 3, ("x", "b", 3)), element("g4", 4, ("x", "c", 4)),
              element("g5", 5, ("x", "c", 5))]
    text = two_events(policy).replace(
        "?x :b ?v }", "?x :b ?v } SEQ EVENT :w { ?x :c ?z }"
    )
    assert answers(text, {S: stream}) == [
        (4, (int(chosen), 4), (("u", chosen), ("v", "3"), ("x", EX + "x"), ("z", "4")))
    ]


def on(stream: str, name: str, t: int, *triples: tuple[str, str, object]) -> StreamElement:
    """``element`` on another stream."""
    e = element(name, t, *triples)
    return StreamElement(stream, e.graph, t, t, e.triples)


S2 = EX + "s2"


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("CHRONOLOGICAL", [(3, (1, 3), ("1", "2", "3")), (4, (2, 4), ("1", "2", "4"))]),
        ("RECENT", [(3, (2, 3), ("1", "2", "3")), (4, (1, 4), ("1", "2", "4"))]),
    ],
)
def test_epsparql_equals_then_seq_consumes_across_streams(policy, expected):
    """{?x :a ?u} EQUALS {?x :b ?v} SEQ {?x :c ?w} over two streams with equal times: the
    EQUALS pairs are (a@1, b@1) and (a@2, b@2); C@3 takes the earliest (CHRONOLOGICAL) or
    latest (RECENT), C@4 the other, C@5 finds both consumed."""
    text = (
        f"PREFIX : <{EX}>\nSELECT *\nEVENT POLICY {policy}\n"
        "WHERE { { ?x :a ?u } EQUALS { ?x :b ?v } SEQ { ?x :c ?w } }"
    )
    streams = {
        S: [element("g1", 1, ("x", "a", 1)), element("g2", 2, ("x", "a", 1)),
            element("g3", 3, ("x", "c", 3)), element("g4", 4, ("x", "c", 4)),
            element("g5", 5, ("x", "c", 5))],
        S2: [on(S2, "h1", 1, ("x", "b", 2)), on(S2, "h2", 2, ("x", "b", 2))],
    }
    got = [(t, i, tuple(v for k, v in b if k != "x")) for t, i, b in answers(text, streams)]
    assert got == expected


@pytest.mark.parametrize("policy", ["CHRONOLOGICAL", "RECENT"])
def test_one_graph_name_on_two_streams_is_two_occurrences(policy):
    """EP-SPARQL reads every stream: s1's and s2's elements both named e1, e2 are four
    occurrences. At 2, C@2 on s1 consumes s1's e1 and e2; at 4, C@4 on s2 still takes s2's
    A@3 (graph names are unique within a stream only)."""
    text = (
        f"PREFIX : <{EX}>\nSELECT *\nEVENT POLICY {policy}\n"
        "WHERE { { ?x :a ?u } SEQ { ?x :c ?w } }"
    )
    streams = {
        S: [element("e1", 1, ("x", "a", 1)), element("e2", 2, ("x", "c", 2))],
        S2: [on(S2, "e1", 3, ("x", "a", 5)), on(S2, "e2", 4, ("x", "c", 4))],
    }
    assert [(t, i) for t, i, _ in answers(text, streams)] == [(2, (1, 2)), (4, (3, 4))]
