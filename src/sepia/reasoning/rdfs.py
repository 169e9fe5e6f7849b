"""What one triple entails under a closed schema, and the closure of a graph.

With the schema fixed, every rule semantics.md names has one instance premise, so the closure
of a graph is the union of what each triple entails: a window's closure can be maintained
triple by triple (:mod:`sepia.reasoning.support`), and a derived triple is supported by the
triples whose expansion holds it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sepia.reasoning.schema import EMPTY, Schema, T, Triple


def consequences(triple: Triple, schema: Schema[T]) -> Iterator[Triple]:
    """One step of the rules from ``triple``, with the schema's closures already applied:
    rdfs7 to every super-property, rdfs2 / rdfs3 to every inherited domain / range and its
    super-classes, rdfs9 to every super-class of a type, rdfs5 / rdfs11 up a hierarchy."""
    s, p, o = triple
    v = schema.vocabulary
    above = schema.super_properties.get(p, EMPTY)
    for q in above:
        yield s, q, o
    for cls in schema.subject_types.get(p, EMPTY):
        yield s, v.type, cls
    if not v.is_literal(o):
        for cls in schema.object_types.get(p, EMPTY):
            yield o, v.type, cls
    if p == v.type or v.type in above:
        for cls in schema.super_classes.get(o, EMPTY):
            yield s, v.type, cls
    if p == v.sub_class or v.sub_class in above:
        for cls in schema.super_classes.get(o, EMPTY):
            yield s, v.sub_class, cls
    if p == v.sub_property or v.sub_property in above:
        for prop in schema.super_properties.get(o, EMPTY):
            yield s, v.sub_property, prop


def _saturate(found: set[Triple], todo: list[Triple], schema: Schema[T]) -> set[Triple]:
    """Add to ``found`` everything the rules derive from ``todo`` (a fixpoint: a derived
    triple is expanded again only when its predicate has rules of its own; the one-step
    consequences already hold the transitive closures)."""
    expanding = schema.expanding
    while todo:
        for derived in consequences(todo.pop(), schema):
            if derived not in found:
                found.add(derived)
                if derived[1] in expanding:
                    todo.append(derived)
    return found


def entailed(triple: Triple, schema: Schema[T]) -> frozenset[Triple]:
    """The triple and every triple the rules derive from it under ``schema``."""
    return frozenset(_saturate({triple}, [triple], schema))


def closure(triples: Iterable[Triple], schema: Schema[T]) -> set[Triple]:
    """The closure of a graph under a fixed schema (the union of what each triple entails)."""
    found = set(triples)
    return _saturate(found, list(found), schema)


def graph_closure(triples: Iterable[Triple], background: Schema[T]) -> set[Triple]:
    """semantics.md's closure of one graph: under the background's schema and the graph's
    own schema triples; nothing of another graph's instance triples enters it."""
    graph = list(triples)
    return closure(graph, background.extended(graph))
