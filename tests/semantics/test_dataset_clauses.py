"""FROM / FROM NAMED pick the background graphs a query sees (SPARQL 1.1 section 13.2), and a
GRAPH variable never ranges over the evaluator's own graphs (windows, stream elements).

Background: default graph {a :p 1}, named :g1 {b :p 2}, named :g2 {c :p 3}.
Stream :s: one element {d :p 4} at 1 (present in every run, so its element graph exists).
"""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from sepia.lang import parse_query
from sepia.semantics import evaluate

from .support import EX, element, iri

PREFIX = "PREFIX : <http://example.org/>\n"
STREAM = {EX + "s": [element(1, ("d", "p", "v4"), stream=EX + "s")]}


def background() -> ox.Store:
    store = ox.Store()
    store.add(ox.Quad(iri("a"), iri("p"), iri("v1")))
    store.add(ox.Quad(iri("b"), iri("p"), iri("v2"), iri("g1")))
    store.add(ox.Quad(iri("c"), iri("p"), iri("v3"), iri("g2")))
    return store


def run(text: str) -> list[tuple[int, dict[str, str]]]:
    results = evaluate(parse_query(PREFIX + text), STREAM, background())
    rows = [(r.t, {k: v.value.removeprefix(EX) for k, v in r.values.items()}) for r in results]
    return sorted(rows, key=str)


BOTH = "SELECT ?g ?x ?y {clauses} WHERE {{ {{ GRAPH ?g {{ ?x :p ?o }} }} UNION {{ ?y :p ?o }} }}"


@pytest.mark.parametrize(
    ("clauses", "expected"),
    [
        # no dataset clause: the background's default graph and all its named graphs, but
        # not the element graph of d
        ("", [{"g": "g1", "x": "b"}, {"g": "g2", "x": "c"}, {"y": "a"}]),
        # FROM NAMED alone: that named graph, and an empty default graph
        ("FROM NAMED :g1", [{"g": "g1", "x": "b"}]),
        # FROM alone: the default graph is its merge, and there is no named graph
        ("FROM :g2", [{"y": "c"}]),
        ("FROM :g2 FROM NAMED :g1", [{"g": "g1", "x": "b"}, {"y": "c"}]),
        ("FROM :g1 FROM :g2", [{"y": "b"}, {"y": "c"}]),
    ],
)
def test_dataset_clauses_pick_the_graphs(clauses, expected):
    found = run(BOTH.format(clauses=clauses))
    assert [t for t, _ in found] == [0] * len(expected)  # a one-time query, reported at 0
    assert sorted((b for _, b in found), key=str) == sorted(expected, key=str)


def test_a_graph_not_named_is_not_readable_by_its_iri():
    assert run("SELECT ?x FROM NAMED :g1 WHERE { GRAPH :g2 { ?x :p ?o } }") == []
    assert run("SELECT ?x FROM NAMED :g1 WHERE { GRAPH :g1 { ?x :p ?o } }") == [(0, {"x": "b"})]


def test_windows_stay_readable_and_hidden_from_graph_variables():
    # CQELS named window (content change, IStream): at 1 the window holds d; GRAPH ?g sees
    # only :g1, neither the window's graph nor the element's
    text = (
        "SELECT ?x ?g ?y FROM NAMED :g1 FROM NAMED WINDOW :w ON :s [RANGE 10] "
        "WHERE { WINDOW :w { ?x :p ?o } GRAPH ?g { ?y :p ?o2 } }"
    )
    assert run(text) == [(1, {"x": "d", "g": "g1", "y": "b"})]
