"""Stream elements closed on arrival, in the engine's dictionary ids, by schema lookups.

Under a fixed schema the closure of a graph is the union of what each of its triples entails
(:mod:`sepia.reasoning.rdfs`), so a window's closure is the union of its elements' closures.
The engine closes each element once, when it arrives, and inserts the closed element into
the windows that admit it: a window's graph is reference-counted per element
(``sepia.engine.graph.TripleIndex``), so a derived triple is counted once per element whose
expansion holds it and leaves the window with the last of them: the support count of
:class:`sepia.reasoning.SupportCounter`, kept by the window itself. Nothing is re-derived
when a window moves or a query evaluates.

Each distinct triple is expanded once: its expansion is cached (a bounded cache, cleared
when full, as the expansion is a pure function of the triple). An expansion keeps only the
derived triples the query can match (:mod:`sepia.reasoning.reads`): an element carries its
own triples and those, so windows, occurrences and the dictionary's collection hold no
typing no pattern reads.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

import pyoxigraph as ox

from sepia.rdf.dictionary import Dictionary
from sepia.reasoning.rdfs import entailed
from sepia.reasoning.reads import EVERYTHING, Reads
from sepia.reasoning.schema import Schema, Triple, Vocabulary

EXPANSION_CACHE = 1 << 16


class ElementClosure:
    """Closes encoded triples under the background's schema (``schema``: pyoxigraph schema
    triples, closed here once into id lookups), keeping of the derived triples those
    ``reads`` names (``sepia.reasoning.reads.reads_of`` the query)."""

    def __init__(
        self, schema: Iterable[ox.Triple], dictionary: Dictionary, reads: Reads = EVERYTHING
    ) -> None:
        encode = dictionary.encode
        ids = [(encode(t.subject), encode(t.predicate), encode(t.object)) for t in schema]
        self.schema: Schema[int] = Schema.of(ids, Vocabulary.encoded(dictionary))
        self.reads: Reads[int] = reads.encoded(encode)
        self._expansions: dict[Triple[int], Collection[Triple[int]]] = {}
        v = self.schema.vocabulary
        self.ruled = self.schema.expanding | {v.type, v.sub_class, v.sub_property}
        """Predicates some rule reads: a triple with any other entails only itself (a
        price, most often: new at nearly every element, so it is seldom in the cache)."""
        self.schema_predicates = v.schema_predicates
        """rdfs:subClassOf and the like (made once, not per element)."""

    def foreign_schema(self, triples: Iterable[Triple[int]]) -> list[Triple[int]]:
        """The schema triples among ``triples`` that the background's schema lacks: they
        would change the rules for every graph they enter (semantics.md)."""
        predicates, known = self.schema_predicates, self.schema.triples
        return [t for t in triples if t[1] in predicates and t not in known]

    def close(self, triples: Iterable[Triple[int]]) -> tuple[Triple[int], ...]:
        """The triples and everything they entail, each triple once."""
        closed: set[Triple[int]] = set()
        expansions = self._expansions
        for triple in triples:
            found = expansions.get(triple)
            closed.update(self.expansion(triple) if found is None else found)
        return tuple(closed)

    def expansion(self, triple: Triple[int]) -> Collection[Triple[int]]:
        """The triple and what it entails that the query can read, computed on its first
        arrival (by the rules only where its predicate has some: ``ruled``)."""
        found = self._expansions.get(triple)
        if found is None:
            if len(self._expansions) >= EXPANSION_CACHE:
                self._expansions.clear()
            found = self._expansions[triple] = (
                (triple, *self.reads.kept(self._derived(triple), self.schema.vocabulary.type))
                if triple[1] in self.ruled else (triple,)
            )
        return found

    def _derived(self, triple: Triple[int]) -> list[Triple[int]]:
        """What ``triple`` entails besides itself."""
        return [t for t in entailed(triple, self.schema) if t != triple]
