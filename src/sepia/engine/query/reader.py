"""The plan's view of one query's data at an evaluation instant (``operators.Context``).

Windows are read as they are now, background graphs as they were at the instant read (their
versions in force then), the event graph as the event being matched holds it (empty outside
event matching), a MATCH as the rows its event pattern gives at this instant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sepia.engine.graph import TripleIndex
from sepia.engine.r2r import operators as po
from sepia.engine.rows import Row

if TYPE_CHECKING:
    from sepia.engine.query.continuous import ContinuousQuery

NO_EVENT = TripleIndex()
"""The event graph outside event matching: empty (a reader made per evaluation shares it;
event readers replace it, nothing adds to it)."""


class Reader:
    """What a physical plan reads of one continuous query at one instant."""

    def __init__(self, engine: ContinuousQuery, time: int | None = None) -> None:
        self.engine = engine
        self.time = engine.now if time is None else time
        self.width = len(engine.physical.slots.names)
        self.event_graph = NO_EVENT
        self.event_triples: tuple = ()
        """The event graph's triples: what a nested path over it depends on."""

    @classmethod
    def of_event(cls, engine: ContinuousQuery, time: int, triples: tuple) -> Reader:
        """The view of one event's graph (``triples``, encoded) stamped ``time``."""
        reader = cls(engine, time)
        reader.event_triples, reader.event_graph = triples, TripleIndex(triples)
        return reader

    def matches(self, number: int) -> list[Row]:
        return self.engine.completed[number]

    def graph(self, ref: po.GraphRef) -> TripleIndex:
        if isinstance(ref, po.EventGraph):
            return self.event_graph
        if isinstance(ref, po.WindowGraph):
            return self.engine.windows[ref.name].graph
        return self.engine.background.graph(ref.name, self.time)

    def path(self, node: po.NestedPath) -> list[Row]:
        engine = self.engine
        graphs = [self.graph(g) for g in node.graphs]
        version = tuple(
            engine.windows[g.name].version
            if isinstance(g, po.WindowGraph)
            else self.event_triples
            if isinstance(g, po.EventGraph)
            else engine.background.version(g.name, self.time)
            for g in node.graphs
        )
        return engine.path_relations().rows(node, graphs, version)

    def fallback(self, node: po.Fallback) -> list[Row]:
        store = self.engine.fallback_store()
        return store.rows(node, self.engine.windows, self.event_triples, self.time)
