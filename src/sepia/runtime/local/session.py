"""The push loop: elements in time order in, results out as soon as they are due.

Elements may come one at a time; those stamped with the same time are gathered and handed
to every query together once a later time shows up (or the input ends), because an
evaluation at t must see every element stamped t.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import groupby

import pyoxigraph as ox

from sepia.algebra.query import Query
from sepia.engine.background import Background
from sepia.engine.codec import Codec
from sepia.engine.continuous import ContinuousQuery, Snapshot
from sepia.io.results import Result
from sepia.lang import parse_query
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.stream import StreamElement, StreamSet
from sepia.rdf.time import TimeKind


class Session:
    """Queries registered over one background dataset, fed by ``push``."""

    def __init__(
        self,
        background: ox.Store | None = None,
        *,
        rdfs: bool = False,
        max_runs: int | None = None,
    ) -> None:
        self.dictionary = Codec()
        self.background = Background.encode(background, self.dictionary)
        self.queries: list[ContinuousQuery] = []
        self.pending: list[StreamElement] = []
        self.max_runs = max_runs
        self.rdfs = rdfs

    def register(self, query: str | Query, name: str = "query") -> ContinuousQuery:
        """Add a query (text in any dialect, or compiled algebra) before pushing elements."""
        compiled = parse_query(query) if isinstance(query, str) else query
        engine = ContinuousQuery(
            compiled, name, self.dictionary, self.background, self.max_runs, self.rdfs
        )
        self.queries.append(engine)
        return engine

    def push(self, element: StreamElement) -> list[Result]:
        """One element (times must not decrease); the results it made due."""
        if self.pending and element.time < self.pending[0].time:
            raise ValueError(
                f"element at {element.time} arrived after one at {self.pending[0].time}"
            )
        results = self._release() if self.pending and element.time > self.pending[0].time else []
        self.pending.append(element)
        return results

    def flush(self, until: int | None = None) -> list[Result]:
        """The input ended: every result still due (through ``until`` if given)."""
        results = self._release()
        return results + [r for q in self.queries for r in q.flush(until)]

    def _release(self) -> list[Result]:
        if not self.pending:
            return []
        t, batch = self.pending[0].time, self.pending
        self.pending = []
        return [r for q in self.queries for r in q.advance(t, batch)]

    def state_size(self) -> dict[str, int]:
        """The engine's counters summed over queries, plus the dictionary's size."""
        total = {"dictionary_terms": len(self.dictionary), "pending_elements": len(self.pending)}
        for q in self.queries:
            for key, value in q.state_size().items():
                total[key] = total.get(key, 0) + value
        return total

    def snapshot(self) -> dict[str, Snapshot | list[tuple]]:
        """The whole session's state as rows: dictionary, elements not yet released
        (stream, graph, start, end, time kind, s, p, o; one row without s, p, o for an
        element without triples), and
        each query's rows."""
        encode = self.dictionary.encode
        pending = [
            (e.stream, e.graph, e.start, e.end, e.kind.value, *(encode(x) for x in (t or ())))
            for e in self.pending
            for t in (e.triples or (None,))
        ]
        state: dict[str, Snapshot | list[tuple]] = {"dictionary": list(self.dictionary.rows())}
        state["pending"] = pending
        state.update({f"query {q.name}": q.snapshot() for q in self.queries})
        return state

    def restore(self, state: Mapping[str, Snapshot | list[tuple]]) -> None:
        """Resume from ``snapshot()``, with the same queries registered under the same names."""
        self.dictionary.extend(tuple(row) for row in state["dictionary"])  # type: ignore[misc]
        self.pending = _elements(state["pending"], self.dictionary)  # type: ignore[arg-type]
        for q in self.queries:
            q.restore(state[f"query {q.name}"])  # type: ignore[arg-type]


def _elements(rows: list[tuple], dictionary: Dictionary) -> list[StreamElement]:
    """Stream elements back from snapshot rows (consecutive rows of one element)."""
    decode = dictionary.decode
    elements = []
    for (stream, graph, start, end, kind), group in groupby(rows, key=lambda row: tuple(row[:5])):
        triples = tuple(ox.Triple(*map(decode, row[5:])) for row in group if len(row) > 5)
        elements.append(StreamElement(stream, graph, start, end, triples, TimeKind(kind)))  # type: ignore[arg-type]
    return elements


def run(
    queries: Iterable[tuple[str, str | Query]],
    streams: Mapping[str, Iterable[StreamElement]],
    background: ox.Store | None = None,
    *,
    until: int | None = None,
    rdfs: bool = False,
    max_runs: int | None = None,
) -> Iterator[Result]:
    """Replay finite ``streams`` (IRI -> elements in time order) through the (name, query)
    pairs at full speed; results come out in time order per query as they become due.
    ``max_runs`` bounds each event automaton's runs; ``Session.state_size()`` counts drops."""
    session = Session(background, rdfs=rdfs, max_runs=max_runs)
    for name, query in queries:
        session.register(query, name)
    for element in StreamSet(streams).merged():
        if until is not None and element.time > until:
            break
        yield from session.push(element)
    yield from session.flush(until)
