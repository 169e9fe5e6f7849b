"""The engine's background: graphs encoded in bulk from their N-Triples text give the ids
that encoding each of the store's terms one by one gives, whatever the block cuts."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from sepia.engine import background as module
from sepia.engine.background import Background
from sepia.engine.codec import Codec
from sepia.engine.hosts.prepared import ntriples_ids

E = "http://example.org/"
G = ox.NamedNode(E + "g")
TURTLE = f"""@prefix : <{E}> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:a :p :b ; :name "Anna Smith" ; :label "chat"@fr ; :n "01"^^xsd:integer ; :d "2.50"^^xsd:decimal .
:b :p :c ; :note "two words" ; :n 7 ; :when "2020-01-01T00:00:00Z"^^xsd:dateTime .
:c :p <{E}caf%C3%A9> ; :name "café" .
"""


def _store(text: str, graph: ox.NamedNode | None = None) -> ox.Store:
    store = ox.Store()
    store.load(text.encode(), format=ox.RdfFormat.TURTLE, to_graph=graph)
    return store


def _one_by_one(store: ox.Store, graph: ox.NamedNode | ox.DefaultGraph) -> set[tuple]:
    """The graph's triples encoded term by term into a dictionary of their own."""
    codec = Codec()
    return {
        (codec.encode(q.subject), codec.encode(q.predicate), codec.encode(q.object))
        for q in store.quads_for_pattern(None, None, None, graph)
    }, codec


def _decoded(background: Background, name: ox.NamedNode | None) -> set[tuple]:
    s, p, o = background.triples(name)
    decode = background.dictionary.decode
    return {(decode(a), decode(b), decode(c)) for a, b, c in zip(s.tolist(), p.tolist(),
                                                                 o.tolist(), strict=True)}


@pytest.mark.parametrize("block", [1 << 22, 1, 120])
def test_bulk_encoded_graphs_hold_the_stores_triples(
    block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(module, "TEXT_BLOCK", block)  # one block, a line each, a few lines
    monkeypatch.setattr(Background, "encode_triples", None)  # no term objects on this path
    store = _store(TURTLE, G)
    store.add(ox.Quad(ox.NamedNode(E + "x"), ox.NamedNode(E + "p"), ox.Literal("default")))
    background = Background.encode(store, Codec(), ntriples_ids)
    assert set(background.columns) == {G, None}
    expected, codec = _one_by_one(store, G)
    assert len(background.triples(G)[0]) == len(expected) == 11
    assert _decoded(background, G) == {tuple(codec.decode(i) for i in t) for t in expected}
    # the same ids as encoding each term: a stream's term meets the background's id
    ids = {tuple(background.dictionary.encode(codec.decode(i)) for i in t) for t in expected}
    assert set(zip(*(c.tolist() for c in background.triples(G)), strict=True)) == ids
    assert set(background.graph(G).triples()) == ids  # indexed when first read
    assert _decoded(background, None) == {
        (ox.NamedNode(E + "x"), ox.NamedNode(E + "p"), ox.Literal("default"))}


@pytest.mark.parametrize("turtle", [
    f"@prefix : <{E}> . :a :p [ :q :b ] . _:n :q :c .",
    f'@prefix : <{E}> . :a :p :b ; :note "line\\nbreak \\"quoted\\"" ; :q "tab\\t" .',
])
def test_blank_nodes_and_escapes_are_encoded_from_pyoxigraphs_terms(turtle: str) -> None:
    store = _store(turtle, G)
    background = Background.encode(store, Codec(), ntriples_ids)
    expected, codec = _one_by_one(store, G)
    assert _decoded(background, G) == {tuple(codec.decode(i) for i in t) for t in expected}
    assert len(background.graph(G)) == 3 == len(expected)


def test_empty_and_missing_graphs() -> None:
    background = Background.encode(_store(f"<{E}a> <{E}p> <{E}b> .", G), Codec(), ntriples_ids)
    assert not background.empty(G)
    assert background.empty(None) and background.empty(ox.NamedNode(E + "other"))
    assert background.names == (G,)
    assert len(background.triples(None)[0]) == 0 and len(background.graph(None)) == 0
