"""The background data's RDFS closure, computed once when a run starts.

semantics.md: each background graph (the default one and every named one) is read as its
closure under the schema triples of the whole background data (a named graph's own schema
is part of it); the closure of one graph never adds another graph's instance triples.

The closure is computed with the schema-closure approach of :mod:`sepia.reasoning.schema`
rather than a rule engine: the ``reasonable`` package (Rust) is an OWL 2 RL reasoner, and its
output is not the spec's RDFS closure (it types every resource owl:Thing, and it applies the
OWL vocabulary's rules); ``sepia.reasoning.bench.background_timings`` compares the two.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyoxigraph as ox

from sepia.reasoning.rdfs import closure
from sepia.reasoning.schema import Schema, Vocabulary

GraphName = ox.NamedNode | ox.BlankNode | ox.DefaultGraph
Node = ox.NamedNode | ox.BlankNode
OxTriple = tuple[Node, ox.NamedNode, Node | ox.Literal]


def as_tuple(triple: ox.Triple | ox.Quad) -> OxTriple:
    """A pyoxigraph triple or quad as the (s, p, o) tuple the reasoning module works on."""
    return triple.subject, triple.predicate, triple.object  # type: ignore[return-value]


def background_schema(store: ox.Store) -> Schema[ox.NamedNode]:
    """The closed schema of every schema triple of the background data, in any graph."""
    quads = store.quads_for_pattern(None, None, None, None)
    return Schema.of(map(as_tuple, quads), Vocabulary.terms())


def close_background(store: ox.Store) -> tuple[ox.Store, Schema[ox.NamedNode]]:
    """A new store holding each graph of ``store`` as its RDFS closure, and the schema that
    the windows of the run are closed under."""
    schema = background_schema(store)
    graphs: dict[GraphName, list[OxTriple]] = {}
    for quad in store.quads_for_pattern(None, None, None, None):
        graphs.setdefault(quad.graph_name, []).append(as_tuple(quad))
    closed = ox.Store()
    for name, triples in graphs.items():
        closed.extend(_quads(closure(triples, schema), name))
    return closed, schema


def _quads(triples: Iterable[OxTriple], graph: GraphName) -> Iterable[ox.Quad]:
    return (ox.Quad(s, p, o, graph) for s, p, o in triples)
