"""RDFS entailment as semantics.md fixes it for ``--entailment rdfs``.

Every graph a query reads (each window's instantaneous graph, each event graph, the default
and named background graphs) is read as its closure under the schema triples
(rdfs:subClassOf, rdfs:subPropertyOf, rdfs:domain, rdfs:range) of the background data and of
the graph itself, by the RDFS rules rdfs2, rdfs3, rdfs5, rdfs7, rdfs9 and rdfs11. Only the
graph's own triples are closed: a type asserted in the background never appears inside a
window, and a derived triple leaves a window with the triples that support it.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import pyoxigraph as ox

from sepia.rdf.vocabulary import RDF, RDFS

RDF_TYPE = ox.NamedNode(f"{RDF}type")
SUB_CLASS, SUB_PROPERTY = ox.NamedNode(RDFS + "subClassOf"), ox.NamedNode(RDFS + "subPropertyOf")
DOMAIN, RANGE = ox.NamedNode(RDFS + "domain"), ox.NamedNode(RDFS + "range")
SCHEMA = frozenset({SUB_CLASS, SUB_PROPERTY, DOMAIN, RANGE})


def schema_of(triples: Iterable[ox.Triple]) -> set[ox.Triple]:
    """The schema triples among ``triples``."""
    return {t for t in triples if t.predicate in SCHEMA}


Node = ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple
Ancestors = dict[Node, set[Node]]
Pairs = list[tuple[Node, Node]]


def _transitive(pairs: set[tuple[Node, Node]]) -> Ancestors:
    """Each node's strict ancestors under a transitive relation (rdfs5, rdfs11)."""
    above: Ancestors = {}
    for a, b in pairs:
        above.setdefault(a, set()).add(b)
    changed = True
    while changed:
        changed = False
        for ancestors in above.values():
            extra = set().union(*(above.get(b, set()) for b in ancestors)) - ancestors
            if extra:
                ancestors |= extra
                changed = True
    return above


@lru_cache(maxsize=16)
def _rules(rules: frozenset[ox.Triple]) -> tuple[Ancestors, Ancestors, Pairs, Pairs]:
    """The class and property hierarchies (each node's ancestors), domains and ranges of a
    schema: the same schema closes every element graph of a run, so it is worked out once
    (the results are only read). A pure function, cached process-wide keyed by the schema's
    value and bounded: it holds no query and cannot grow with the queries a process runs."""
    classes = _transitive({(t.subject, t.object) for t in rules if t.predicate == SUB_CLASS})
    properties = _transitive({(t.subject, t.object) for t in rules if t.predicate == SUB_PROPERTY})
    domains: Pairs = [(t.subject, t.object) for t in rules if t.predicate == DOMAIN]
    ranges: Pairs = [(t.subject, t.object) for t in rules if t.predicate == RANGE]
    return classes, properties, domains, ranges


def rdfs_closure(graph: Iterable[ox.Triple], schema: Iterable[ox.Triple]) -> set[ox.Triple]:
    """The graph with every triple the RDFS rules derive from it and the schema."""
    closed = set(graph)
    classes, properties, domains, ranges = _rules(frozenset(schema_of(closed) | set(schema)))
    for t in schema_of(closed):  # rdfs5, rdfs11 for the graph's own hierarchy triples
        above = classes if t.predicate == SUB_CLASS else properties
        if t.predicate in (SUB_CLASS, SUB_PROPERTY):
            closed |= {ox.Triple(t.subject, t.predicate, x) for x in above.get(t.object, ())}
    while True:  # until nothing new: derived triples may trigger rules of their own
        before = len(closed)
        for t in list(closed):  # rdfs7: a triple holds for every super-property (an IRI)
            closed |= {
                ox.Triple(t.subject, q, t.object)
                for q in properties.get(t.predicate, ())
                if isinstance(q, ox.NamedNode)
            }
        for t in list(closed):  # rdfs2, rdfs3: domains and ranges type the ends
            closed |= {ox.Triple(t.subject, RDF_TYPE, c) for p, c in domains if p == t.predicate}
            if not isinstance(t.object, ox.Literal):
                closed |= {ox.Triple(t.object, RDF_TYPE, c) for p, c in ranges if p == t.predicate}
        for t in list(closed):  # rdfs9: a type holds for every super-class
            if t.predicate == RDF_TYPE:
                closed |= {ox.Triple(t.subject, RDF_TYPE, d) for d in classes.get(t.object, ())}
        if len(closed) == before:
            return closed
