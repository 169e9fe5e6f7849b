"""What a query can read of a stream element's RDFS closure, decided once from its patterns.

A triple pattern with a constant predicate matches only triples with that predicate, and
``?x rdf:type C`` only typings with class C: a derived triple no pattern of the query can
match changes none of its answers, so an element need not carry it (W8's
``?company a :ListedCompany`` reads one typing of the seven a deep class hierarchy derives).
A variable predicate, a variable class, a negated property set or a zero-length path (which
reads every node of the graph) reads everything: nothing is left out for such a query.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

import pyoxigraph as ox

from sepia.algebra import path as pa
from sepia.algebra import pattern as gp
from sepia.algebra import query as qa
from sepia.algebra.scope import nodes
from sepia.rdf.vocabulary import RDF

T = TypeVar("T", bound=Hashable)
U = TypeVar("U", bound=Hashable)

RDF_TYPE = ox.NamedNode(RDF + "type")


@dataclass(frozen=True, slots=True)
class Reads(Generic[T]):
    """The derived triples a query may match: those whose predicate is in ``predicates``
    and the typings ``(x, rdf:type, C)`` with C in ``classes`` (``predicates`` None:
    every triple)."""

    predicates: frozenset[T] | None
    classes: frozenset[T]

    def encoded(self, encode: Callable[[T], U]) -> Reads[U]:
        """The same reads in another representation (dictionary ids)."""
        predicates = None if self.predicates is None else frozenset(map(encode, self.predicates))
        return Reads(predicates, frozenset(map(encode, self.classes)))

    def kept(self, derived: Iterable[tuple[T, T, T]], kind: T) -> list[tuple[T, T, T]]:
        """The triples among ``derived`` the query may match (``kind``: rdf:type's term)."""
        predicates, classes = self.predicates, self.classes
        if predicates is None:
            return list(derived)
        return [t for t in derived if t[1] in predicates or (t[1] == kind and t[2] in classes)]


EVERYTHING: Reads = Reads(None, frozenset())


def reads_of(query: qa.Query) -> Reads[ox.NamedNode | ox.Literal]:
    """What ``query`` may read of a graph: the constant predicates of its triple patterns
    and paths (anywhere: events, windows, EXISTS, sub-queries, a CONSTRUCT template too),
    the constant classes of its ``rdf:type`` patterns; EVERYTHING when a pattern or path
    can match a triple whatever its predicate or class, or DESCRIBE is asked."""
    if isinstance(query.form, qa.Describe):
        return EVERYTHING
    predicates: set[ox.NamedNode | ox.Literal] = set()
    classes: set[ox.NamedNode | ox.Literal] = set()
    for triple in nodes(query, gp.TriplePattern):
        p, o = triple.predicate, triple.object
        if not isinstance(p, ox.NamedNode):
            return EVERYTHING
        if p != RDF_TYPE:
            predicates.add(p)
        elif isinstance(o, ox.NamedNode | ox.Literal):
            classes.add(o)
        else:
            predicates.add(p)  # a variable class: every typing
    for found in nodes(query, gp.PathPattern):
        links = _links(found.path)
        if links is None:
            return EVERYTHING
        predicates |= links
    return Reads(frozenset(predicates), frozenset(classes))


def _links(path: pa.Path) -> set[ox.NamedNode | ox.Literal] | None:
    """The IRIs a path steps over; None if it can step over any triple (a negated set) or
    stay on any node of the graph (a zero-length ``*`` or ``?``)."""
    match path:
        case pa.Link(iri):
            return {iri}
        case pa.Inverse(inner) | pa.OneOrMore(inner) | pa.NestedTest(inner):
            return _links(inner)
        case pa.Sequence(left, right) | pa.Alternative(left, right):
            a, b = _links(left), _links(right)
            return None if a is None or b is None else a | b
        case _:  # ZeroOrMore, ZeroOrOne, NegatedSet
            return None
