"""The RSP-QL / RSEP-QL dataset over a finite input (RSP-QL seed 004, Definition 14; RSEP-QL
seed 001, Definition 4): background graphs, streams, and named windows over them.

Everything lives in one pyoxigraph store: the background graphs as given, every stream
element as its own named graph (so a basic event pattern can be matched against each event
graph alone), and each window's instantaneous graph in a named graph that ``at(t)`` refills
for the evaluation time t. SPARQL text produced by :mod:`sepia.semantics.sparql` then runs
against it. With RDFS entailment on, every graph is stored as its closure
(:mod:`sepia.semantics.entailment`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import assert_never

import pyoxigraph as ox

from sepia.algebra import dataset as ds
from sepia.rdf.stream import StreamElement
from sepia.semantics import windows as wf
from sepia.semantics.entailment import rdfs_closure, schema_of
from sepia.semantics.mappings import Mu
from sepia.semantics.report import WindowInput
from sepia.semantics.sparql import TIMESTAMP, integer_literal, window_graph


def window_input(decl: ds.WindowDecl, elements: Sequence[StreamElement]) -> WindowInput:
    """The window function, closing instants and flush end of a declared window."""
    match decl.spec:
        case ds.Sliding(width, slide, t0):
            return WindowInput(
                decl.name,
                elements,
                wf.sliding(width, slide, t0),
                lambda low, high: wf.close_times(width, slide, t0, low, high),
                lambda t: _or_itself(wf.last_close_holding(t, width, slide, t0), t),
                t0,
            )
        case ds.Landmark(t0):
            return WindowInput(decl.name, elements, wf.landmark(t0), _never, _itself, t0)
        case ds.Now():
            return WindowInput(decl.name, elements, wf.now(), _arrivals(elements), _itself)
        case ds.CountBased(count):
            return WindowInput(
                decl.name, elements, wf.count_based(count), _arrivals(elements), _itself
            )
        case ds.Interval(start, end):
            closes = lambda low, high: [end] if low <= end <= high else []  # noqa: E731
            return WindowInput(decl.name, elements, wf.interval(start, end), closes, _itself, start)
        case _:
            assert_never(decl.spec)


def _never(low: int, high: int) -> list[int]:
    return []


def _itself(t: int) -> int:
    return t


def _or_itself(close: int | None, t: int) -> int:
    """A sliding window's flush end; t itself when no window holds t (a gap)."""
    return t if close is None else close


def _arrivals(elements: Sequence[StreamElement]) -> Callable[[int, int], list[int]]:
    """Windows that move with every element close at every arrival."""
    return lambda low, high: sorted({e.time for e in elements if low <= e.time <= high})


ELEMENT = "__g"
"""The hidden variable that names the element graph a basic event pattern matched in."""


class StreamingDataset:
    """Background data, stream elements and windows of one query, in one pyoxigraph store."""

    def __init__(
        self,
        declared: ds.Dataset,
        streams: Mapping[str, Sequence[StreamElement]],
        background: ox.Store | None,
        rdfs: bool = False,
    ) -> None:
        self.declared = declared
        self.store = ox.Store()
        quads = (
            [] if background is None else list(background.quads_for_pattern(None, None, None, None))
        )
        self.schema = schema_of(q.triple for q in quads) if rdfs else None
        graphs: dict[ox.NamedNode | ox.DefaultGraph, list[ox.Triple]] = {}
        for q in quads:
            graphs.setdefault(q.graph_name, []).append(q.triple)
        for name, triples in graphs.items():
            self.add(triples, name)
        self.streams = {iri: list(elements) for iri, elements in streams.items()}
        self.graphs: dict[int, ox.NamedNode] = {}
        self.elements: dict[ox.NamedNode, StreamElement] = {}
        for e in (e for elements in self.streams.values() for e in elements):
            graph = ox.NamedNode(f"urn:sepia:element:{len(self.elements)}")
            self.graphs[id(e)], self.elements[graph] = graph, e
            self.add(e.triples, graph)
        self.t = 0
        self.windows = {
            w.name: window_input(w, self.stream(w.stream.value)) for w in declared.windows
        }

    def add(self, triples: Iterable[ox.Triple], graph: ox.NamedNode | ox.DefaultGraph) -> None:
        """Put a graph in the store, as its RDFS closure when entailment is on."""
        if self.schema is not None:
            triples = rdfs_closure(triples, self.schema)
        self.store.extend(ox.Quad(t.subject, t.predicate, t.object, graph) for t in triples)

    @property
    def functions(self) -> dict[ox.NamedNode, Callable[..., ox.Literal | None]]:
        return {TIMESTAMP: self.timestamp}

    def timestamp(self, s: object, p: object, o: object) -> ox.Literal | None:
        """C-SPARQL timestamp(?s, ?p, ?o): the time of the most recent element of the
        query's windows at the evaluation time that holds the triple (unbound if none)."""
        triple = ox.Triple(s, p, o)  # type: ignore[arg-type]
        times = [
            e.time for w in self.windows.values() for e in w.content(self.t) if triple in e.triples
        ]
        return integer_literal(max(times)) if times else None

    def stream(self, iri: str) -> list[StreamElement]:
        """The elements of a stream (none when the run was given no such stream)."""
        return self.streams.get(iri, [])

    def at(self, t: int) -> None:
        """Make every window graph the window's instantaneous graph at time t."""
        self.t = t
        for name, window in self.windows.items():
            graph = window_graph(name)
            if self.store.contains_named_graph(graph):
                self.store.remove_graph(graph)
            self.add({tr for e in window.content(t) for tr in e.triples}, graph)

    def default_graph(self) -> list[ox.NamedNode | ox.DefaultGraph]:
        """FROM graphs (else the background default graph), plus the windows C-SPARQL merges
        into the default graph (``FROM STREAM``)."""
        graphs: list[ox.NamedNode | ox.DefaultGraph] = list(self.declared.default_graphs)
        graphs = graphs or [ox.DefaultGraph()]
        return graphs + [window_graph(w.name) for w in self.declared.windows if w.into_default]

    def select(self, query: str) -> list[Mu]:
        """The solutions of a SELECT query over the dataset, unbound variables left out."""
        solutions = self.store.query(
            query, default_graph=self.default_graph(), custom_functions=self.functions
        )
        assert isinstance(solutions, ox.QuerySolutions), query
        names = [v.value for v in solutions.variables]
        return [Mu((n, s[n]) for n in names if s[n] is not None) for s in solutions]

    def ask(self, query: str) -> bool:
        """The answer of an ASK query over the dataset."""
        return bool(
            self.store.query(
                query, default_graph=self.default_graph(), custom_functions=self.functions
            )
        )

    def per_element(
        self, body: str, elements: Sequence[StreamElement]
    ) -> list[tuple[StreamElement, Mu]]:
        """[[P]]_G_k for each element graph G_k of ``elements``: P (SPARQL group body) is
        matched against each event graph on its own, as a BEP / GPM is."""
        if not elements:
            return []
        names = " ".join(str(self.graphs[id(e)]) for e in elements)
        query = (
            f"SELECT * WHERE {{ VALUES ?{ELEMENT} {{ {names} }} GRAPH ?{ELEMENT} {{ {body} }} }}"
        )
        rows = self.select(query)
        return [
            (self.elements[r[ELEMENT]], Mu((k, v) for k, v in r.items() if k != ELEMENT))
            for r in rows
        ]

    def triples(self, graphs: Sequence[ox.NamedNode | ox.DefaultGraph]) -> list[ox.Triple]:
        """The triples of the union of ``graphs`` (for the nested path evaluator)."""
        return list(
            {
                ox.Triple(q.subject, q.predicate, q.object)
                for g in graphs
                for q in self.store.quads_for_pattern(None, None, None, g)
            }
        )
