"""RDFS entailment for streams (``--entailment rdfs``): the schema closed once, each triple
expanded once, a window's derived triples kept by support counts (docs/reasoning.md)."""

from sepia.reasoning.background import close_background
from sepia.reasoning.rdfs import closure, entailed, graph_closure
from sepia.reasoning.schema import Schema, Vocabulary
from sepia.reasoning.support import SupportCounter

__all__ = [
    "Schema",
    "SupportCounter",
    "Vocabulary",
    "close_background",
    "closure",
    "entailed",
    "graph_closure",
]
