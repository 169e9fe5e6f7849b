"""Background data, dictionary-encoded once and indexed, shared by every query of a run.

The pyoxigraph store is kept as well: ``Fallback`` sub-patterns are evaluated over it. Under
RDFS entailment (semantics.md) every graph is read as its own closure under the background's
schema: ``entailed()`` gives that view once, with the schema for closing stream elements.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pyoxigraph as ox

from sepia.engine.graph import TripleIndex
from sepia.engine.planner import Unsupported
from sepia.rdf.dictionary import Dictionary
from sepia.semantics.entailment import rdfs_closure, schema_of

GENERATED_AT = ox.NamedNode("http://www.w3.org/ns/prov#generatedAtTime")
"""Background graphs stamped with this are versioned (semantics/background.py)."""

GraphName = ox.NamedNode | None


@dataclass(slots=True)
class Background:
    """Background graphs by name (None: the default graph) as triple indexes."""

    store: ox.Store
    dictionary: Dictionary
    graphs: dict[GraphName, TripleIndex] = field(default_factory=dict)
    schema: frozenset[ox.Triple] | None = None
    """The RDFS schema every graph is closed under (None: no entailment)."""
    _entailed: Background | None = None

    @classmethod
    def encode(cls, store: ox.Store | None, dictionary: Dictionary) -> Background:
        """Encode every quad of ``store`` (none when there is no background data)."""
        store = store if store is not None else ox.Store()
        if next(store.quads_for_pattern(None, GENERATED_AT, None, None), None) is not None:
            raise Unsupported("time-varying background graphs (prov:generatedAtTime versions)")
        background = cls(store, dictionary)
        background._index(_graphs(store))
        return background

    def _index(self, graphs: dict[GraphName, list[ox.Triple]]) -> None:
        for name, triples in graphs.items():
            self.graphs[name] = TripleIndex(self.encode_triples(triples))

    def encode_triples(self, triples: Iterable[ox.Triple]) -> list[tuple[int, int, int]]:
        """Triples as ids, closed under the schema first when entailment is on."""
        if self.schema is not None:
            triples = rdfs_closure(triples, self.schema)
        encode = self.dictionary.encode
        return [(encode(t.subject), encode(t.predicate), encode(t.object)) for t in triples]

    def entailed(self) -> Background:
        """The same background read under RDFS entailment (built once)."""
        if self.schema is not None:
            return self
        if self._entailed is None:
            graphs = _graphs(self.store)
            schema = frozenset(schema_of(t for ts in graphs.values() for t in ts))
            closed = Background(ox.Store(), self.dictionary, schema=schema)
            closed._index(graphs)
            closed.store.extend(
                ox.Quad(t.subject, t.predicate, t.object, ox.DefaultGraph() if g is None else g)
                for g, ts in graphs.items()
                for t in rdfs_closure(ts, schema)
            )
            self._entailed = closed
        return self._entailed

    def graph(self, name: GraphName) -> TripleIndex:
        """A background graph (an empty one when there is no such graph)."""
        return self.graphs.get(name) or TripleIndex()


def _graphs(store: ox.Store) -> dict[GraphName, list[ox.Triple]]:
    graphs: dict[GraphName, list[ox.Triple]] = {}
    for quad in store.quads_for_pattern(None, None, None, None):
        name = None if isinstance(quad.graph_name, ox.DefaultGraph) else quad.graph_name
        graphs.setdefault(name, []).append(quad.triple)  # type: ignore[arg-type]
    return graphs
