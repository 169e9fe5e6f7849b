"""Property paths with nested tests (CQELS-CEP nested path elements, nSPARQL) in the engine.

pyoxigraph has no nested element, so such a path is a binary relation over term ids
(``relation``: composition for ``/``, union for ``|``, reachability for ``+``, and [[ [e] ]] =
{(x, x) | exists y: (x, y) in [[e]]}, with y = term for ``[e term]``) computed over the union
of the graphs it reads, and turned into rows. The relation depends on nothing but those
graphs, so the rows are cached by the graphs' versions: over background data they are
computed once; over a window, again only when the window changed since the last evaluation.
The cache is not state: dropping it changes nothing but speed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import assert_never

import pyoxigraph as ox

from sepia.algebra import path as pa
from sepia.engine.graph import EncodedTriple, TripleIndex
from sepia.engine.r2r.operators import Constant, NestedPath, Position
from sepia.engine.rows import Row
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.terms import Term, term_to_nt
from sepia.reasoning.schema import ancestors

Pairs = set[tuple[int, int]]


class PathRelations:
    """The solutions of a query's nested paths, one cache entry per path node."""

    def __init__(self, dictionary: Dictionary, width: int) -> None:
        self.dictionary = dictionary
        self.width = width
        self._cache: dict[int, tuple[NestedPath, Hashable, list[Row]]] = {}
        """By the node's identity (hashing its path tree cost more than the look-up, asked
        at every evaluation of a CQELS-CEP match), the node kept to check it."""

    def rows(self, node: NestedPath, graphs: Sequence[TripleIndex], version: Hashable) -> list[Row]:
        """The node's solutions over ``graphs``, whose contents ``version`` identifies."""
        cached = self._cache.get(id(node))
        if cached is not None and cached[0] is node and cached[1] == version:
            return cached[2]
        lookup = self.dictionary.lookup
        triples = list({t for g in graphs for t in g.match(None, None, None)})
        pairs = relation(node.path, triples, lambda term: lookup(term_to_nt(term)))
        rows = solutions(pairs, node.subject, node.object, self.width)
        self._cache[id(node)] = (node, version, rows)
        return rows


def solutions(
    pairs: set[tuple[int, int]], subject: Position, obj: Position, width: int
) -> list[Row]:
    """The distinct solutions of ``subject path object`` from the pairs the path relates:
    constants filter, variables bind (one variable at both ends needs x = y)."""
    rows = set()
    for x, y in pairs:
        row: list[int | None] = [None] * width
        ok = True
        for position, value in ((subject, x), (obj, y)):
            if isinstance(position, Constant):
                ok = ok and position.id == value
            elif row[position.index] not in (None, value):
                ok = False
            else:
                row[position.index] = value
        if ok:
            rows.add(tuple(row))
    return list(rows)


def relation(
    path: pa.Path, triples: list[EncodedTriple], lookup: Callable[[Term], int | None]
) -> Pairs:
    """[[path]] over ``triples`` as (start, end) id pairs; ``lookup`` gives a constant's id
    (None: no triple holds it, so it matches nothing)."""
    match path:
        case pa.Link(iri):
            p = lookup(iri)
            return {(s, o) for s, q, o in triples if q == p}
        case pa.Inverse(inner):
            return {(y, x) for x, y in relation(inner, triples, lookup)}
        case pa.Sequence(left, right):
            return _then(relation(left, triples, lookup), relation(right, triples, lookup))
        case pa.Alternative(left, right):
            return relation(left, triples, lookup) | relation(right, triples, lookup)
        case pa.OneOrMore(inner):
            return _reachable(relation(inner, triples, lookup))
        case pa.ZeroOrMore(inner):
            return _reachable(relation(inner, triples, lookup)) | _identity(triples)
        case pa.ZeroOrOne(inner):
            return relation(inner, triples, lookup) | _identity(triples)
        case pa.NegatedSet(forward, inverse):
            ahead, back = {lookup(i) for i in forward}, {lookup(i) for i in inverse}
            pairs = {(s, o) for s, p, o in triples if forward and p not in ahead}
            return pairs | {(o, s) for s, p, o in triples if inverse and p not in back}
        case pa.NestedTest(inner, term):
            if isinstance(term, ox.Variable):  # (the parser gives a constant: no node is one)
                return set()
            reach = relation(inner, triples, lookup)
            if term is None:
                return {(x, x) for x, _ in reach}
            wanted = lookup(term)
            return {(x, x) for x, y in reach if y == wanted}
        case _:
            assert_never(path)


def _successors(pairs: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    successors: dict[int, list[int]] = {}
    for x, y in pairs:
        successors.setdefault(x, []).append(y)
    return successors


def _then(left: Pairs, right: Pairs) -> Pairs:
    """(x, z) for x -left-> y -right-> z."""
    successors = _successors(right)
    return {(x, z) for x, y in left for z in successors.get(y, ())}


def _reachable(pairs: Pairs) -> Pairs:
    """The transitive closure: every (x, z) joined by one or more steps."""
    return {(x, z) for x, above in ancestors(pairs).items() for z in above}


def _identity(triples: list[EncodedTriple]) -> Pairs:
    """(n, n) for every subject and object: the zero-length path."""
    return {(n, n) for s, _, o in triples for n in (s, o)}
