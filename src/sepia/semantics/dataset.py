"""The RSP-QL / RSEP-QL dataset over a finite input (RSP-QL seed 004, Definition 14; RSEP-QL
seed 001, Definition 4): background graphs, streams, and named windows over them.

Everything lives in one pyoxigraph store: the background graphs (a time-varying one,
:mod:`sepia.rdf.background`, holds G(t)), every stream element as its own named graph
(so a basic event pattern can be matched against each event graph alone), and each window's
instantaneous graph in a named graph; ``at(t)`` refills the windows and the time-varying
graphs for the evaluation time t. The query's FROM / FROM NAMED clauses pick the graphs it
sees, as SPARQL 1.1 section 13.2 says. SPARQL text produced by
:mod:`sepia.algebra.sparql` then runs against it. With RDFS entailment on, every graph is
stored as its closure (:mod:`sepia.reasoning.entailment`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import assert_never

import pyoxigraph as ox

from sepia.algebra import dataset as ds
from sepia.algebra.sparql import (
    OWN_GRAPHS,
    TIMESTAMP,
    integer_literal,
    table_text,
    window_graph,
)
from sepia.rdf.aggregates import custom
from sepia.rdf.background import Background
from sepia.rdf.order import term_key
from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import canonical
from sepia.reasoning.entailment import rdfs_closure, schema_of
from sepia.semantics import windows as wf
from sepia.semantics.mappings import Mu, Term
from sepia.semantics.report import WindowInput


def window_input(decl: ds.WindowDecl, elements: Sequence[StreamElement]) -> WindowInput:
    """The window function, closing instants and flush end of a declared window."""
    match decl.spec:
        case ds.Sliding(width, slide, t0):
            return WindowInput(
                decl.name,
                elements,
                wf.sliding(width, slide, t0),
                lambda low, high: ds.close_times(width, slide, t0, low, high),
                lambda t: _or_itself(ds.last_close_holding(t, width, slide, t0), t),
                t0,
            )
        case ds.Landmark(t0):
            entering = [e for e in elements if e.time >= t0]
            return WindowInput(
                decl.name, elements, wf.landmark(t0), _arrivals(entering), _itself, t0
            )
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


def _itself(t: int) -> int:
    return t


def _or_itself(close: int | None, t: int) -> int:
    """A sliding window's flush end; t itself when no window holds t (a gap)."""
    return t if close is None else close


def _arrivals(elements: Sequence[StreamElement]) -> Callable[[int, int], Sequence[int]]:
    """Windows that move with every element (landmark, NOW, count-based) close at every
    arrival: each arrival ends one extent of the window and starts the next (docs/semantics.md,
    "Landmark windows close at every arrival")."""
    times = sorted({e.time for e in elements})
    return lambda low, high: _Between(times, low, high)


class _Between(Sequence[int]):
    """The sorted ``times`` in [low, high], as a view (asked often: no copy)."""

    def __init__(self, times: list[int], low: int, high: int) -> None:
        self.times = times
        self.start = bisect.bisect_left(times, low)
        self.stop = max(self.start, bisect.bisect_right(times, high))

    def __len__(self) -> int:
        return self.stop - self.start

    def __getitem__(self, index):
        if isinstance(index, int) and 0 <= index < len(self):
            return self.times[self.start + index]  # the common case: [0]
        return self.times[self.start:self.stop][index]


ELEMENT = "__g"
"""The hidden variable that names the element graph a basic event pattern matched in."""
GraphName = ox.NamedNode | ox.BlankNode | ox.DefaultGraph


class StreamingDataset:
    """Background data, stream elements and windows of one query, in one pyoxigraph store."""

    def __init__(
        self,
        declared: ds.Dataset,
        streams: Mapping[str, Sequence[StreamElement]],
        background: ox.Store | None,
        rdfs: bool = False,
        base: str | None = None,
    ) -> None:
        self.declared = declared
        self.base = base
        self.store = ox.Store()
        self.background = Background.of(background)
        self.schema = schema_of(self.background.schema_source()) if rdfs else None
        for name, triples in self.background.static.items():
            self.add(triples, name)
        self.shown: tuple[int, ...] | None = None
        self.streams = {iri: list(elements) for iri, elements in streams.items()}
        self.graphs: dict[int, ox.NamedNode] = {}
        self.elements: dict[ox.NamedNode, StreamElement] = {}
        for e in (e for elements in self.streams.values() for e in elements):
            graph = ox.NamedNode(f"{OWN_GRAPHS}element:{len(self.elements)}")
            self.graphs[id(e)], self.elements[graph] = graph, e
            self.add(e.triples, graph)
        self.tables: list[ox.NamedNode] = []
        """Graphs holding the blank nodes of ``table`` blocks (dropped at the next instant)."""
        self.t = 0
        self.windows = {
            w.name: window_input(w, self.stream(w.stream.value)) for w in declared.windows
        }
        self.show_background(0)

    def add(self, triples: Iterable[ox.Triple], graph: GraphName) -> None:
        """Put a graph in the store, as its RDFS closure when entailment is on, its triples
        in the total order on terms (``rdf.order``), so that what SPARQL leaves to the
        order of solutions (GROUP_CONCAT's) does not follow a set's order from run to
        run."""
        if self.schema is not None:
            triples = rdfs_closure(triples, self.schema)
        ordered = sorted(triples, key=lambda t: tuple(map(term_key, t)))
        self.store.extend(ox.Quad(t.subject, t.predicate, t.object, graph) for t in ordered)

    @property
    def functions(self) -> dict[ox.NamedNode, Callable[..., Term | None]]:
        return {TIMESTAMP: self.timestamp}

    def timestamp(self, s: object, p: object, o: object) -> ox.Literal | None:
        """C-SPARQL timestamp(?s, ?p, ?o): the time of the most recent element of the
        query's windows at the evaluation time that holds the triple (unbound if none)."""
        triple = ox.Triple(s, p, o)  # type: ignore[arg-type]  # terms as the store holds them
        times = [
            e.time
            for w in self.windows.values()
            for e in w.content(self.t)
            if any(_canonical(held) == triple for held in e.triples)
        ]
        return integer_literal(max(times)) if times else None

    def stream(self, iri: str) -> list[StreamElement]:
        """The elements of a stream (none when the run was given no such stream)."""
        return self.streams.get(iri, [])

    def show_background(self, t: int) -> None:
        """Make every time-varying background graph G hold G(t) (only those that changed)."""
        state = self.background.state(t)
        for n, (name, graph) in enumerate(self.background.varying.items()):
            if self.shown is None or self.shown[n] != state[n]:
                self.store.clear_graph(name)
                self.add(graph.at(t), name)
        self.shown = state

    def at(self, t: int) -> None:
        """Make every window graph and every time-varying background graph its
        instantaneous graph at time t."""
        self.t = t
        for graph in self.tables:
            self.store.remove_graph(graph)
        self.tables = []
        self.show_background(t)
        for name, window in self.windows.items():
            graph = window_graph(name)
            if self.store.contains_named_graph(graph):
                self.store.remove_graph(graph)
            self.add({tr for e in window.content(t) for tr in e.triples}, graph)

    def table(self, variables: list[str], rows: list[list[Term | None]]) -> str:
        """Rows as an inline table a query of this dataset can read (``table_text``: their
        blank nodes in a graph of the store)."""
        graph = ox.NamedNode(f"{OWN_GRAPHS}table:{len(self.tables)}")
        text, quads = table_text(variables, rows, graph)
        if quads:
            self.store.extend(quads)
            self.tables.append(graph)
        return text

    def has_dataset_clause(self) -> bool:
        """Whether the query says which background graphs it reads (FROM / FROM NAMED)."""
        return bool(self.declared.default_graphs or self.declared.named_graphs)

    def default_graph(self) -> list[GraphName]:
        """The merge of the FROM graphs (SPARQL 1.1 section 13.2: empty when the query has
        FROM NAMED but no FROM; the background default graph without dataset clause), plus
        the windows C-SPARQL merges into the default graph (``FROM STREAM``)."""
        graphs: list[GraphName] = list(self.declared.default_graphs)
        if not self.has_dataset_clause():
            graphs = [ox.DefaultGraph()]
        return graphs + [window_graph(w.name) for w in self.declared.windows if w.into_default]

    def outgoing(self, node: ox.NamedNode | ox.BlankNode) -> set[tuple]:
        """The triples with ``node`` as subject that DESCRIBE reads: in the default graph
        and in every window's instantaneous graph (at the time of ``at``)."""
        windows = [window_graph(w.name) for w in self.declared.windows if not w.into_default]
        return {
            (q.subject, q.predicate, q.object)
            for g in [*self.default_graph(), *windows]
            for q in self.store.quads_for_pattern(node, None, None, g)
        }

    def named_graphs(self) -> list[ox.NamedNode | ox.BlankNode] | None:
        """The graphs GRAPH may read: with a dataset clause, the FROM NAMED ones (none with
        FROM alone) and the evaluator's own element and window graphs; without one, every
        graph (None)."""
        if not self.has_dataset_clause():
            return None
        own = [window_graph(w.name) for w in self.declared.windows]
        return [*self.declared.named_graphs, *self.elements, *own, *self.tables]

    def visible_named_graphs(self) -> list[ox.NamedNode]:
        """The named graphs of the query's dataset, the ones a GRAPH variable ranges over:
        the FROM NAMED graphs, else (with FROM alone) none, else every background graph (a
        time-varying one even while it is empty: whether pyoxigraph still lists a graph it
        emptied must not decide it)."""
        if self.has_dataset_clause():
            return list(self.declared.named_graphs)
        varying = [g for g in self.background.varying if isinstance(g, ox.NamedNode)]
        graphs = dict.fromkeys([*self.store.named_graphs(), *varying])
        return [g for g in graphs if not g.value.startswith(OWN_GRAPHS)]  # type: ignore[misc]

    def _query(
        self, query: str, default_graph: Sequence[ox.NamedNode] | None = None
    ) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        return self.store.query(
            query,
            default_graph=self.default_graph() if default_graph is None else [*default_graph],
            named_graphs=self.named_graphs(),
            custom_functions=self.functions,
            custom_aggregate_functions=custom(query),
            base_iri=self.base,
        )

    def select(self, query: str) -> list[Mu]:
        """The solutions of a SELECT query over the dataset, unbound variables left out."""
        solutions = self._query(query)
        assert isinstance(solutions, ox.QuerySolutions), query
        names = [v.value for v in solutions.variables]
        return [
            Mu({n: v for n, v in zip(names, s, strict=True) if v is not None}) for s in solutions
        ]

    def ask(self, query: str, events: list[ox.NamedNode] | None = None, t: int = 0) -> bool:
        """The answer of an ASK query over the dataset, or with ``events`` over those event
        graphs as its default graph, the background as it was at their time ``t``."""
        if events is None:
            return bool(self._query(query))
        self.show_background(t)
        try:
            return bool(self._query(query, events))
        finally:
            self.show_background(self.t)

    def per_element(
        self, body: str, elements: Sequence[StreamElement], separately: bool = False
    ) -> list[tuple[StreamElement, Mu]]:
        """[[P]]_G_k for each element graph G_k of ``elements``: P (SPARQL group body) is
        matched against each event graph on its own, as a BEP / GPM is. A GRAPH over
        background data inside P (SPAseq Definition 15) reads it as it was at the event's
        time, so elements are matched in groups that see the same background. With
        ``separately`` (P holds a sub-SELECT), each element is read through its own
        ``GRAPH <element>``: pyoxigraph evaluates a sub-SELECT inside ``GRAPH ?g`` over
        every named graph at once, then joins on ?g, where SPARQL 1.1 section 18.6
        evaluates P in each graph (tests/semantics/test_rsepql.py)."""
        groups: dict[tuple[int, ...], list[StreamElement]] = {}
        for e in elements:
            groups.setdefault(self.background.state(e.time), []).append(e)
        found = []
        for members in groups.values():
            self.show_background(members[0].time)
            found += self._per_element(body, members, separately)
        self.show_background(self.t)
        return found

    def _per_element(
        self, body: str, elements: Sequence[StreamElement], separately: bool
    ) -> list[tuple[StreamElement, Mu]]:
        graphs = [self.graphs[id(e)] for e in elements]
        if separately:
            if not graphs:
                return []
            where = " UNION ".join(
                f"{{ VALUES ?{ELEMENT} {{ {g} }} GRAPH {g} {{ {body} }} }}" for g in graphs
            )
        else:
            names = " ".join(map(str, graphs))
            where = f"VALUES ?{ELEMENT} {{ {names} }} GRAPH ?{ELEMENT} {{ {body} }}"
        rows = self.select(f"SELECT * WHERE {{ {where} }}")
        return [
            (self.elements[r[ELEMENT]], Mu((k, v) for k, v in r.items() if k != ELEMENT))  # type: ignore[index]
            for r in rows
        ]

    def triples(self, graphs: Sequence[GraphName]) -> list[ox.Triple]:
        """The triples of the union of ``graphs`` (for the nested path evaluator)."""
        return list(
            {
                ox.Triple(q.subject, q.predicate, q.object)
                for g in graphs
                for q in self.store.quads_for_pattern(None, None, None, g)
            }
        )


def _canonical(triple: ox.Triple) -> ox.Triple:
    """The triple as the store holds it (``canonical``: only a literal object changes)."""
    return ox.Triple(triple.subject, triple.predicate, canonical(triple.object))
