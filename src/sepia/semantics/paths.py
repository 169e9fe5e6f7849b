"""Extended property paths with nSPARQL nested tests (CQELS-CEP seed 000, sections 2.3 and
3.1), evaluated as binary relations over one graph: [[exp]]_G = {(x, y) | y is reachable
from x by a path conforming to exp}.

SPARQL 1.1 paths have no nested element, so paths that hold one are evaluated here, by the
definitions: composition for ``/``, union for ``|``, transitive closure for ``+``, and
[[ [e] ]] = {(x, x) | exists y: (x, y) in [[e]]} (with y = term for ``[e term]``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import assert_never

import pyoxigraph as ox

from sepia.algebra import path as pa

Node = ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple
Relation = set[tuple[Node, Node]]


def nodes(graph: Iterable[ox.Triple]) -> set[Node]:
    """The subjects and objects of a graph: the domain of the node axes."""
    return {n for t in graph for n in (t.subject, t.object)}


def _compose(left: Relation, right: Relation) -> Relation:
    by_source: dict[Node, list[Node]] = {}
    for x, y in right:
        by_source.setdefault(x, []).append(y)
    return {(x, z) for x, y in left for z in by_source.get(y, ())}


def _closure(relation: Relation) -> Relation:
    closure = set(relation)
    while True:
        larger = closure | _compose(closure, relation)
        if larger == closure:
            return closure
        closure = larger


def evaluate_path(path: pa.Path, graph: list[ox.Triple]) -> Relation:
    """[[path]]_G as a set of (start, end) node pairs."""
    match path:
        case pa.Link(iri):
            return {(t.subject, t.object) for t in graph if t.predicate == iri}
        case pa.Inverse(inner):
            return {(y, x) for x, y in evaluate_path(inner, graph)}
        case pa.Sequence(left, right):
            return _compose(evaluate_path(left, graph), evaluate_path(right, graph))
        case pa.Alternative(left, right):
            return evaluate_path(left, graph) | evaluate_path(right, graph)
        case pa.OneOrMore(inner):
            return _closure(evaluate_path(inner, graph))
        case pa.ZeroOrMore(inner):
            return _closure(evaluate_path(inner, graph)) | {(n, n) for n in nodes(graph)}
        case pa.ZeroOrOne(inner):
            return evaluate_path(inner, graph) | {(n, n) for n in nodes(graph)}
        case pa.NegatedSet(forward, inverse):
            ahead: Relation = {
                (t.subject, t.object) for t in graph if forward and t.predicate not in forward
            }
            back: Relation = {
                (t.object, t.subject) for t in graph if inverse and t.predicate not in inverse
            }
            return ahead | back
        case pa.NestedTest(inner, term):
            reach = evaluate_path(inner, graph)
            return {(x, x) for x, y in reach if term is None or y == term}
        case _:
            assert_never(path)
