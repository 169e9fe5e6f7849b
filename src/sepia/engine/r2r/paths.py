"""Property paths with nested tests (CQELS-CEP nested path elements, nSPARQL) in the engine.

pyoxigraph has no nested element, so such a path is a binary relation computed by the
reference's own definition (:func:`sepia.semantics.paths.evaluate_path`) over the decoded
union of the graphs it reads, and turned into rows. The relation depends on nothing but those
graphs, so the rows are cached by the graphs' versions: over background data they are
computed once; over a window, again only when the window changed since the last evaluation.
The cache is not state: dropping it changes nothing but speed.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import pyoxigraph as ox

from sepia.engine.graph import TripleIndex
from sepia.engine.r2r.operators import Constant, NestedPath, Position
from sepia.engine.rows import Row
from sepia.rdf.dictionary import Dictionary
from sepia.semantics.paths import evaluate_path


class PathRelations:
    """The solutions of a query's nested paths, one cache entry per path node."""

    def __init__(self, dictionary: Dictionary, width: int) -> None:
        self.dictionary = dictionary
        self.width = width
        self._cache: dict[NestedPath, tuple[Hashable, list[Row]]] = {}

    def rows(self, node: NestedPath, graphs: Sequence[TripleIndex], version: Hashable) -> list[Row]:
        """The node's solutions over ``graphs``, whose contents ``version`` identifies."""
        cached = self._cache.get(node)
        if cached is not None and cached[0] == version:
            return cached[1]
        decode, encode = self.dictionary.decode, self.dictionary.encode
        triples = {t for g in graphs for t in g.match(None, None, None)}
        graph = [ox.Triple(*map(decode, t)) for t in triples]  # type: ignore[misc]
        pairs = {(encode(x), encode(y)) for x, y in evaluate_path(node.path, graph)}
        rows = solutions(pairs, node.subject, node.object, self.width)
        self._cache[node] = (version, rows)
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
