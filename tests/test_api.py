"""The flat public API runs the docstring's embedding example on a worked example."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest

import sepia

E3 = Path(__file__).parents[1] / "examples" / "e3-rsepql-landmark"


def test_embedding_a_session_gives_the_reference_answer() -> None:
    session = sepia.Session()
    session.register((E3 / "query.rq").read_text(), "query")
    results = []
    for element in sepia.read_stream(E3 / "stream.trig", "http://example.org/s"):
        results += session.push(element)
    results += session.flush()
    query = sepia.parse_query((E3 / "query.rq").read_text())
    streams = {
        "http://example.org/s": list(sepia.read_stream(E3 / "stream.trig", "http://example.org/s"))
    }
    reference = sepia.evaluate_reference(query, streams)
    key = lambda r: (r.t, r.interval, r.binding)  # noqa: E731
    assert sorted(results, key=key) == sorted(reference, key=key)
    assert len(results) == 4


EX = "http://example.org/"
E1 = Path(__file__).parents[1] / "examples" / "e1-shops-coupons"


def test_load_background_takes_str_paths_and_graph_pairs() -> None:
    """e1's background.ttl holds 2 triples (Alice owns A, Bob owns B)."""
    assert len(sepia.load_background(str(E1 / "background.ttl"))) == 2
    assert len(sepia.load_background(E1 / "background.ttl")) == 2
    store = sepia.load_background([(EX + "shops", str(E1 / "background.ttl"))])
    assert {quad.graph_name for quad in store} == {ox.NamedNode(EX + "shops")}


def test_a_binding_reads_as_a_mapping_and_as_the_pairs_it_was() -> None:
    a, b = ox.NamedNode(EX + "a"), ox.NamedNode(EX + "b")
    row = sepia.Result("q", 1, binding={"y": b, "x": a})
    assert row.binding["x"] == a and row.binding.get("z") is None
    assert "y" in row.binding and "z" not in row.binding
    assert dict(row.binding) == {"x": a, "y": b} and row.binding == {"x": a, "y": b}
    assert list(row.binding.keys()) == ["x", "y"]
    # the tuple of (name, term) pairs, sorted by name, that tests and callers used
    assert row.binding == (("x", a), ("y", b)) and row.binding[0] == ("x", a)
    assert [name for name, _ in row.binding] == ["x", "y"]
    assert row == sepia.Result("q", 1, binding=(("y", b), ("x", a)))
    assert hash(row) == hash(sepia.Result("q", 1, binding={"x": a, "y": b}))
    with pytest.raises(KeyError):
        row.binding["z"]


def test_push_graph_to_a_stream_no_query_reads_is_an_error() -> None:
    session = sepia.Session()
    triple = ox.Triple(ox.NamedNode(EX + "a"), ox.NamedNode(EX + "p"), ox.NamedNode(EX + "o"))
    with pytest.raises(ValueError, match=r"they read nothing yet \(register the"):
        session.push_graph(EX + "s", 1, [triple])
    session.register((E1 / "query.rq").read_text(), "offers")
    with pytest.raises(ValueError, match=r"no registered query reads the stream "
                       r"<http://example.org/nearbi>; they read <http://example.org/coupons>"):
        session.push_graph(EX + "nearbi", 1, [triple])
    assert session.push_graph(EX + "nearby", 1, [triple]) == []


def test_push_graph_is_free_for_a_query_that_reads_every_stream() -> None:
    """An EP-SPARQL query without FROM STREAM reads whatever it is given."""
    session = sepia.Session()
    session.register("PREFIX : <http://example.org/> SELECT ?x WHERE { ?x :p ?y }", "any")
    triple = ox.Triple(ox.NamedNode(EX + "a"), ox.NamedNode(EX + "p"), ox.NamedNode(EX + "o"))
    session.push_graph(EX + "whatever", 1, [triple])
