"""Background data, dictionary-encoded once and indexed, shared by every query of a run.

The pyoxigraph store is kept as well: ``Fallback`` sub-patterns are evaluated over it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyoxigraph as ox

from sepia.engine.graph import TripleIndex
from sepia.engine.planner import Unsupported
from sepia.rdf.dictionary import Dictionary

GENERATED_AT = ox.NamedNode("http://www.w3.org/ns/prov#generatedAtTime")
"""Background graphs stamped with this are versioned (semantics/background.py)."""


@dataclass(slots=True)
class Background:
    """Background graphs by name (None: the default graph) as triple indexes."""

    store: ox.Store
    graphs: dict[ox.NamedNode | None, TripleIndex] = field(default_factory=dict)

    @classmethod
    def encode(cls, store: ox.Store | None, dictionary: Dictionary) -> Background:
        """Encode every quad of ``store`` (none when there is no background data)."""
        store = store if store is not None else ox.Store()
        background = cls(store)
        encode = dictionary.encode
        if next(store.quads_for_pattern(None, GENERATED_AT, None, None), None) is not None:
            raise Unsupported("time-varying background graphs (prov:generatedAtTime versions)")
        for quad in store.quads_for_pattern(None, None, None, None):
            name = None if isinstance(quad.graph_name, ox.DefaultGraph) else quad.graph_name
            index = background.graphs.setdefault(name, TripleIndex())  # type: ignore[arg-type]
            index.add((encode(quad.subject), encode(quad.predicate), encode(quad.object)))
        return background

    def graph(self, name: ox.NamedNode | None) -> TripleIndex:
        """A background graph (an empty one when there is no such graph)."""
        return self.graphs.get(name) or TripleIndex()
