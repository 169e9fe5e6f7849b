"""The RDFS schema, closed once: what every instance triple entails is then a few lookups.

semantics.md reads every graph as its closure under the rules rdfs2, rdfs3, rdfs5, rdfs7,
rdfs9 and rdfs11 and the schema triples (rdfs:subClassOf, rdfs:subPropertyOf, rdfs:domain,
rdfs:range) of the background and of the graph itself. With the schema fixed, rdfs5 and
rdfs11 are the transitive closures of the two hierarchies, and rdfs2, rdfs3, rdfs7 and rdfs9
each have a single instance premise: so the schema is closed once here (super-classes,
super-properties, and the classes a predicate types its subject and object with, domains and
ranges inherited down the property hierarchy and up the class hierarchy), and the closure of
a graph is the union of what each of its triples entails (:mod:`sepia.reasoning.rdfs`).

Terms are any hashable values, so the same code serves pyoxigraph terms (the reference
side, the background) and dictionary ids (the engine): a :class:`Vocabulary` says which
values are the RDF / RDFS IRIs and which are literals (rdfs3 never types a literal).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

import pyoxigraph as ox

from sepia.rdf.dictionary import Dictionary
from sepia.rdf.vocabulary import RDF, RDFS

T = TypeVar("T", bound=Hashable)
Triple = tuple[T, T, T]


@dataclass(frozen=True, slots=True)
class Vocabulary(Generic[T]):
    """The RDF / RDFS terms the rules mention, in a given term representation."""

    type: T
    sub_class: T
    sub_property: T
    domain: T
    range: T
    is_literal: Callable[[T], bool]

    @property
    def schema_predicates(self) -> frozenset[T]:
        return frozenset((self.sub_class, self.sub_property, self.domain, self.range))

    @classmethod
    def terms(cls) -> Vocabulary[ox.NamedNode]:
        """The vocabulary as pyoxigraph terms."""
        return _vocabulary(_IRIS, lambda term: isinstance(term, ox.Literal))

    @classmethod
    def encoded(cls, dictionary: Dictionary) -> Vocabulary[int]:
        """The vocabulary as ids of ``dictionary`` (the ids are allocated if new)."""
        ids = [dictionary.encode(term) for term in _IRIS]
        return _vocabulary(ids, lambda i: dictionary.decode_text(i).startswith('"'))


_IRIS = [
    ox.NamedNode(RDF + "type"),
    ox.NamedNode(RDFS + "subClassOf"),
    ox.NamedNode(RDFS + "subPropertyOf"),
    ox.NamedNode(RDFS + "domain"),
    ox.NamedNode(RDFS + "range"),
]


def _vocabulary(terms: list[T], is_literal: Callable[[T], bool]) -> Vocabulary[T]:
    """``terms``: rdf:type and the four schema predicates, in ``_IRIS``'s order."""
    kind, sub_class, sub_property, domain, range_ = terms
    return Vocabulary(kind, sub_class, sub_property, domain, range_, is_literal)


def ancestors(pairs: Iterable[tuple[T, T]]) -> dict[T, frozenset[T]]:
    """Each node's strict ancestors under a transitive relation (rdfs5, rdfs11); a node on a
    cycle is its own ancestor, as transitivity derives."""
    parents: dict[T, set[T]] = {}
    for child, parent in pairs:
        parents.setdefault(child, set()).add(parent)
    closed: dict[T, frozenset[T]] = {}
    for node in parents:
        seen: set[T] = set()
        todo = list(parents[node])
        while todo:
            above = todo.pop()
            if above not in seen:
                seen.add(above)
                todo.extend(parents.get(above, ()))
        closed[node] = frozenset(seen)
    return closed


EMPTY: frozenset = frozenset()


@dataclass(frozen=True, slots=True)
class Schema(Generic[T]):
    """Schema triples closed once: the lookups that expand an instance triple."""

    vocabulary: Vocabulary[T]
    triples: frozenset[Triple]
    super_classes: Mapping[T, frozenset[T]]
    super_properties: Mapping[T, frozenset[T]]
    subject_types: Mapping[T, frozenset[T]]
    """predicate -> every class its subject gets: rdfs7 then rdfs2 then rdfs9."""
    object_types: Mapping[T, frozenset[T]]
    """predicate -> every class its (non-literal) object gets: rdfs7 then rdfs3 then rdfs9."""
    expanding: frozenset[T]
    """Predicates with rules of their own (a super-property, a domain or a range): a triple
    derived with one of them must be expanded in turn (e.g. rdf:type with a range)."""

    @classmethod
    def of(cls, triples: Iterable[Triple], vocabulary: Vocabulary[T]) -> Schema[T]:
        """The closed schema of the schema triples among ``triples`` (others are ignored)."""
        v = vocabulary
        own = frozenset(t for t in triples if t[1] in v.schema_predicates)
        classes = ancestors((s, o) for s, p, o in own if p == v.sub_class)
        properties = ancestors((s, o) for s, p, o in own if p == v.sub_property)
        typing = _Typing(classes, properties)
        subject_types = typing.inherited({(s, o) for s, p, o in own if p == v.domain})
        object_types = typing.inherited({(s, o) for s, p, o in own if p == v.range})
        expanding = frozenset(properties.keys() | subject_types.keys() | object_types.keys())
        return cls(v, own, classes, properties, subject_types, object_types, expanding)

    def extended(self, triples: Iterable[Triple]) -> Schema[T]:
        """This schema with a graph's own schema triples added (semantics.md: a graph is
        closed under the background's schema and its own)."""
        more = {t for t in triples if t[1] in self.vocabulary.schema_predicates}
        return self if more <= self.triples else Schema.of(self.triples | more, self.vocabulary)

    def classes_of(self, cls: T) -> frozenset[T]:
        """The class and its super-classes: what ``x rdf:type cls`` makes x (rdfs9)."""
        return self.super_classes.get(cls, EMPTY) | {cls}


@dataclass(frozen=True, slots=True)
class _Typing(Generic[T]):
    classes: Mapping[T, frozenset[T]]
    properties: Mapping[T, frozenset[T]]

    def inherited(self, declared: set[tuple[T, T]]) -> dict[T, frozenset[T]]:
        """predicate -> the classes declared for it or a super-property, and their
        super-classes (a domain or range holds for every sub-property, rdfs7)."""
        direct: dict[T, set[T]] = {}
        for prop, cls in declared:
            direct.setdefault(prop, set()).add(cls)
        result: dict[T, frozenset[T]] = {}
        for prop in direct.keys() | self.properties.keys():
            found = set(direct.get(prop, ()))
            for above in self.properties.get(prop, ()):
                found |= direct.get(above, set())
            for cls in list(found):
                found |= self.classes.get(cls, EMPTY)
            if found:
                result[prop] = frozenset(found)
        return result
