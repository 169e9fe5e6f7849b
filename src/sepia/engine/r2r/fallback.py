"""pyoxigraph for the sub-patterns the engine has no native operator for yet.

A ``Fallback`` node is printed back to SPARQL (``sepia.algebra.sparql``) and run on a
pyoxigraph store holding the background data and, in named graphs, the windows it reads;
a window graph is written whole once, then kept up to date from its journal (the triples
that entered or left since the last evaluation). The store is a cache of the windows' rows,
not state: it is rebuilt from them on demand (a restored window is a new graph).

Time-varying background graphs (``prov:generatedAtTime`` versions) hold G(t) for the time
t being read (an evaluation instant, or the time of the event being matched), rewritten
when the versions in force change, as the reference's store does; the version graphs
themselves are not in the store.

Inside an event pattern (an EVENT's or a GPM's graph pattern: a property path, EXISTS, an
aggregate over one event's graph) the sub-pattern reads the graph of the event being
matched: it is wrapped in ``GRAPH <EVENT_GRAPH>``, and that graph holds the event's triples
(as the reference's ``GRAPH ?element { P }`` does; a ``GRAPH <kb>`` inside still reads the
background), rewritten when another event is matched.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pyoxigraph as ox

from sepia.algebra import pattern as gp
from sepia.algebra.sparql import select_text, window_graph
from sepia.engine.background import Background
from sepia.engine.graph import EncodedTriple, Journal, TripleIndex
from sepia.engine.r2r.operators import EventGraph, Fallback, GraphRef, WindowGraph
from sepia.engine.rows import Row, Slots
from sepia.engine.s2r.windows import WindowState
from sepia.rdf.aggregates import custom
from sepia.rdf.background import Background as Versions
from sepia.rdf.dictionary import Dictionary

Quads = dict[EncodedTriple, ox.Quad]
EVENT_GRAPH = ox.NamedNode("urn:sepia:event-graph")
"""Where the event being matched is written for a fallback inside an event pattern."""


def _stored_graph(ref: GraphRef) -> ox.NamedNode | ox.DefaultGraph:
    """Where a graph the pattern reads is written in the fallback's store."""
    if isinstance(ref, WindowGraph):
        return window_graph(ref.name)
    if isinstance(ref, EventGraph):
        return EVENT_GRAPH
    return ref.name or ox.DefaultGraph()


class FallbackStore:
    """The store one query's fallback nodes read."""

    def __init__(
        self,
        background: Background,
        default_graph: tuple[GraphRef, ...],
        slots: Slots,
        dictionary: Dictionary,
        base: str | None = None,
    ) -> None:
        self.store = ox.Store()
        self.base = base
        """The query's BASE (IRI() of a relative IRI)."""
        self.background = background
        quads: Iterable[ox.Quad] = background.store.quads_for_pattern(None, None, None, None)
        if background.varying and background.schema is None:  # leave the version graphs out
            static = Versions.of(background.store).static
            quads = (
                ox.Quad(t.subject, t.predicate, t.object, g)
                for g, triples in static.items() for t in triples
            )
        self.store.extend(quads)  # (the entailed store holds the static graphs' closure only)
        self.shown: tuple[int, ...] | None = None
        """The versions of the time-varying graphs written in the store."""
        self.default_graph: list[ox.NamedNode | ox.BlankNode | ox.DefaultGraph] = [
            _stored_graph(g) for g in default_graph
        ]
        self.slots = slots
        self.dictionary = dictionary
        self.written: dict[
            ox.NamedNode, tuple[TripleIndex, Journal, Quads, set[tuple[int, int]]]
        ] = {}
        """Per window: the graph written, its journal, the quads written (to remove), and
        where the store merged two of them (``_write``)."""
        self._texts: dict[int, str] = {}
        self.event: tuple[EncodedTriple, ...] | None = None
        """The event graph written in ``EVENT_GRAPH``."""

    def rows(
        self,
        node: Fallback,
        windows: Mapping[ox.NamedNode, WindowState],
        event: tuple[EncodedTriple, ...] = (),
        time: int = 0,
    ) -> list[Row]:
        """The solutions of the node's pattern over the current window contents (and, in an
        event pattern, over ``event``'s graph), the background as it is at ``time``."""
        self._show_versions(time)
        for window in node.windows:
            self._refresh(window, windows[window])
        if isinstance(node.pattern, gp.Graph) and node.pattern.name == EVENT_GRAPH:
            self._show_event(event)
        text = self._texts.get(id(node))
        if text is None:
            text = self._texts[id(node)] = select_text(node.pattern)
        solutions = self.store.query(
            text,
            default_graph=self.default_graph,
            base_iri=self.base,
            custom_aggregate_functions=custom(text),
        )
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

    def _show_versions(self, time: int) -> None:
        """Each time-varying graph G holds G(time) (those whose version changed)."""
        state = self.background.state(time)
        if state == self.shown:
            return
        for n, name in enumerate(self.background.varying):
            if self.shown is not None and self.shown[n] == state[n]:
                continue
            graph = ox.DefaultGraph() if name is None else name
            self.store.clear_graph(graph)
            triples = self.background.graph(name, time).match(None, None, None)
            self.store.extend(self._quads(triples, graph).values())
        self.shown = state

    def _show_event(self, event: tuple[EncodedTriple, ...]) -> None:
        if event == self.event:
            return
        if self.store.contains_named_graph(EVENT_GRAPH):
            self.store.remove_graph(EVENT_GRAPH)
        self.store.extend(self._quads(event, EVENT_GRAPH).values())
        self.event = event

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
        self, triples: Iterable[EncodedTriple], graph: ox.NamedNode | ox.DefaultGraph
    ) -> Quads:
        decode = self.dictionary.decode
        return {
            (s, p, o): ox.Quad(decode(s), decode(p), decode(o), graph)  # type: ignore[arg-type]
            for s, p, o in triples
        }
