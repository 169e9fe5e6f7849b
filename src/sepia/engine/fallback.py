"""pyoxigraph for the sub-patterns the engine has no native operator for yet.

A ``Fallback`` node is printed back to SPARQL (``sepia.semantics.sparql``) and run on a
pyoxigraph store holding the background data and, in named graphs, the windows it reads;
a window graph is written whole once, then kept up to date from its journal (the triples
that entered or left since the last evaluation). The store is a cache of the windows' rows,
not state: it is rebuilt from them on demand (a restored window is a new graph).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pyoxigraph as ox

from sepia.engine.graph import EncodedTriple, Journal, TripleIndex
from sepia.engine.operators import Fallback, GraphRef, WindowGraph
from sepia.engine.rows import Row, Slots
from sepia.engine.windows import WindowState
from sepia.rdf.dictionary import Dictionary
from sepia.semantics.sparql import select_text, window_graph

Quads = dict[EncodedTriple, ox.Quad]


class FallbackStore:
    """The store one query's fallback nodes read."""

    def __init__(
        self,
        background: ox.Store,
        default_graph: tuple[GraphRef, ...],
        slots: Slots,
        dictionary: Dictionary,
    ) -> None:
        self.store = ox.Store()
        self.store.extend(background.quads_for_pattern(None, None, None, None))
        self.default_graph = [
            window_graph(g.name) if isinstance(g, WindowGraph) else g.name or ox.DefaultGraph()
            for g in default_graph
        ]
        self.slots = slots
        self.dictionary = dictionary
        self.written: dict[
            ox.NamedNode, tuple[TripleIndex, Journal, Quads, set[tuple[int, int]]]
        ] = {}
        """Per window: the graph written, its journal, the quads written (to remove), and
        where the store merged two of them (``_write``)."""
        self._texts: dict[int, str] = {}

    def rows(self, node: Fallback, windows: Mapping[ox.NamedNode, WindowState]) -> list[Row]:
        """The solutions of the node's pattern over the current window contents."""
        for name in node.windows:
            self._refresh(name, windows[name])
        text = self._texts.get(id(node))
        if text is None:
            text = self._texts[id(node)] = select_text(node.pattern)
        solutions = self.store.query(text, default_graph=self.default_graph)
        assert isinstance(solutions, ox.QuerySolutions)
        columns = [
            (v.value, self.slots.index(v.value))
            for v in solutions.variables
            if v.value in self.slots.names
        ]
        encode = self.dictionary.encode
        out = []
        for solution in solutions:
            row: list[int | None] = [None] * len(self.slots.names)
            for name, slot in columns:
                term = solution[name]
                row[slot] = None if term is None else encode(term)
            out.append(tuple(row))
        return out

    def _refresh(self, name: ox.NamedNode, window: WindowState) -> None:
        graph = window_graph(name)
        written = self.written.get(name)
        if written is None or written[0] is not window.graph:
            if self.store.contains_named_graph(graph):
                self.store.remove_graph(graph)
            merged: set[tuple[int, int]] = set()
            quads = self._write(window.graph.match(None, None, None), graph, merged)
            self.written[name] = (window.graph, window.graph.watch(), quads, merged)
            return
        _, journal, quads, merged = written
        gone = [t for t, sign in journal.items() if sign < 0]
        for triple in gone:
            self.store.remove(quads.pop(triple))
        quads.update(self._write((t for t, sign in journal.items() if sign > 0), graph, merged))
        journal.clear()
        again = [(s, p) for s, p, _ in gone if (s, p) in merged]
        for s, p in again:  # pyoxigraph's store keeps one of two equal literals: see _write
            self.store.extend([quads[t] for t in window.graph.match(s, p, None)])

    def _write(
        self, triples: Iterable[EncodedTriple], graph: ox.NamedNode, merged: set[tuple[int, int]]
    ) -> Quads:
        """Write the triples' quads. pyoxigraph's store keeps one of two literals of equal
        value ("3" and "03"^^xsd:integer, "3"^^xsd:int), so removing one removes the
        other: the (subject, predicate) of a quad the store already holds go to ``merged``,
        and the window's triples there are written again when one of them leaves."""
        quads = self._quads(triples, graph)
        store = self.store
        for (s, p, _), quad in quads.items():
            if quad in store:
                merged.add((s, p))
            else:
                store.add(quad)
        return quads

    def _quads(
        self, triples: Iterable[EncodedTriple], graph: ox.NamedNode
    ) -> Quads:
        decode = self.dictionary.decode
        return {
            (s, p, o): ox.Quad(decode(s), decode(p), decode(o), graph)  # type: ignore[arg-type]
            for s, p, o in triples
        }
