"""Paths with nested tests (CQELS-CEP nested path elements) in the engine, on hand-derived
cases: E2's all-subway path over the background map, and a path inside a window that must
not read the background. Each is checked against the reference evaluator too."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox

from sepia.algebra import path as pa
from sepia.engine import explain, plan
from sepia.engine.codec import Codec
from sepia.engine.graph import TripleIndex
from sepia.engine.r2r.operators import BackgroundGraph, Constant, NestedPath
from sepia.engine.r2r.paths import PathRelations
from sepia.engine.r2r.scan import Slot
from sepia.lang import parse_query
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.stream import StreamElement
from sepia.runtime.local import run
from sepia.semantics import evaluate

EX = "http://example.org/"
E2 = Path(__file__).parents[3] / "examples" / "e2-subway-delays"


def e2_map() -> ox.Store:
    store = ox.Store()
    store.load((E2 / "background.ttl").read_bytes(), format=ox.RdfFormat.TURTLE,
               to_graph=ox.NamedNode(EX + "transportationMap"))
    return store


def answers(text: str, streams: dict, background: ox.Store | None = None) -> set[tuple]:
    query = parse_query(text)
    got = list(run([("q", query)], streams, background))
    assert sorted(map(repr, got)) == sorted(
        map(repr, evaluate(query, streams, background, name="q"))
    )
    return {(r.t, *(v.value.removeprefix(EX) for _, v in r.binding)) for r in got}


def test_e2_all_subway_path_over_the_background():
    """From m and b an all-subway chain of connections reaches c; from h it needs conn4,
    a tram (Example 2's map), so h is not an answer."""
    text = (
        f"PREFIX : <{EX}>\nSELECT ?s FROM :transportationMap\n"
        "WHERE { ?s (^:beg/[:means :subway]/:end)+ :c }"
    )
    assert answers(text, {}, e2_map()) == {(0, "m"), (0, "b")}


def test_a_nested_path_in_a_window_reads_the_window_only():
    """The window at 10 holds a-next-b, b-ok-t and b-next-c; c-ok-t is in the background,
    not in the window, so only (a, b) passes the test [:ok]."""
    s = EX + "s"
    triples = lambda *ts: tuple(ox.Triple(*(ox.NamedNode(EX + x) for x in t)) for t in ts)  # noqa: E731
    stream = [
        StreamElement(s, EX + "g1", 1, 1, triples(("a", "next", "b"), ("b", "ok", "t"))),
        StreamElement(s, EX + "g2", 2, 2, triples(("b", "next", "c"))),
    ]
    background = ox.Store()
    background.add(ox.Quad(ox.NamedNode(EX + "c"), ox.NamedNode(EX + "ok"), ox.NamedNode(EX + "t")))
    text = (
        f"PREFIX : <{EX}>\nREGISTER RSTREAM :out AS SELECT ?x ?y\n"
        "FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 10]\n"
        "WHERE { WINDOW :w { ?x (:next/[:ok])+ ?y } }"
    )
    assert answers(text, {s: stream}, background) == {(10, "a", "b")}
    codec = Codec()
    printed = explain(plan(parse_query(text), codec), codec)
    assert "NestedPath window" in printed and "FALLBACK" not in printed


def test_the_cached_rows_are_the_nodes_own():
    """Rows are cached by the node's identity: an entry left by another node (whose id a
    new node may take once it is gone) is not read as the new node's."""
    dictionary = Dictionary()
    a, b, c, link = (dictionary.encode(ox.NamedNode(f"http://e/{n}")) for n in "abcp")
    graph = TripleIndex([(a, link, b), (b, link, c)])
    step = pa.Link(ox.NamedNode("http://e/p"))
    one = NestedPath((BackgroundGraph(None),), Slot(0), step, Constant(c))
    more = NestedPath((BackgroundGraph(None),), Slot(0), pa.OneOrMore(step), Constant(c))
    relations = PathRelations(dictionary, 1)
    assert relations.rows(one, [graph], 0) == [(b,)]
    relations._cache[id(more)] = relations._cache[id(one)]  # as if ``more`` took its id
    assert sorted(relations.rows(more, [graph], 0)) == sorted([(a,), (b,)])


def test_a_zero_length_step_relates_nodes_of_any_predicate():
    """``?s (:p/[:q])* ?o`` over a :p b, b :q t, x :r y: the zero-length step relates every
    node of the map to itself, x and y (held by :r alone, which the path does not name)
    too; one step relates a to b (b has a :q)."""
    store = ox.Store()
    store.load(b"@prefix : <http://example.org/> . :a :p :b . :b :q :t . :x :r :y .",
               format=ox.RdfFormat.TURTLE, to_graph=ox.NamedNode(EX + "g"))
    text = f"PREFIX : <{EX}>\nSELECT ?s ?o FROM :g WHERE {{ ?s (:p/[:q])* ?o }}"
    assert answers(text, {}, store) == {
        (0, "b", "a"), *((0, n, n) for n in ("a", "b", "t", "x", "y")),
    }
