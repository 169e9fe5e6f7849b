"""EP-SPARQL's triple occurrences fed by batches of columns ("EP-SPARQL: A Unified Language
for Event Processing and Stream Reasoning", Anicic, Fodor, Rudolph, Stojanovic).

An EP-SPARQL query reads every element of every stream as triple occurrences; the row
engine's ``EventQuery`` keeps them (``cep.occurrences.OccurrenceHistory``, with the chain
of range-indexed SEQs that answers W8's drop-then-rise) and, at each instant, reports the
mappings ending then through the query's graph pattern and form. On the push path each
element is an object, encoded one term at a time, walked through the session's
per-element steps and put into windows such a query never reads: that path, not the
occurrences, was most of W8's time.

Here a batch of columns (the columnar reader's ids, only the predicates the patterns read
unless RDFS may derive them) is cut into instants, each instant's elements become id
triples (closed under RDFS as the row engine closes them) and go straight to the row
engine's own occurrence step (``EventQuery.occurred``): the state, the answers and their
order are the row engine's, and so are the snapshot rows. Only the way in is new.

What it covers (``occurrences_uncovered`` says why not): a pushed (no REPORT clause)
EP-SPARQL SELECT with RSTREAM over triple occurrences only (no window), without PARTITION
BY or a consuming policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from itertools import pairwise

import numpy as np

from sepia.engine.cep.event_trees import consumes
from sepia.engine.codec import Codec
from sepia.engine.columnar.batch import ColumnBatch
from sepia.engine.columnar.pushed import Pushed, pushed_uncovered
from sepia.engine.plan.physical import EventPlan, PhysicalQuery
from sepia.engine.query.continuous import ContinuousQuery, Snapshot
from sepia.engine.query.events import EventQuery
from sepia.engine.r2r import operators as po
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind, format_time

Graph = tuple[tuple[int, int, int], ...]


def plan_occurrences_uncovered(physical: PhysicalQuery) -> str | None:
    """Why an EP-SPARQL plan stays on the push path (run options aside), or None."""
    kind = physical.kind
    if not isinstance(kind, EventPlan) or not kind.occurrences:
        return "not an EP-SPARQL pattern over triple occurrences"
    if physical.windows:
        return "triple occurrences beside windows"
    if consumes(kind.tree):
        return "a consuming policy (CHRONOLOGICAL / RECENT)"
    return pushed_uncovered(physical)


def occurrences_uncovered(engine: ContinuousQuery) -> str | None:
    """Why a planned EP-SPARQL query stays on the push path, or None when this module runs
    it."""
    if not isinstance(engine.dictionary, Codec):
        return "a dictionary without a codec"
    return plan_occurrences_uncovered(engine.physical)


class PushedOccurrences(Pushed):
    """An EP-SPARQL query fed by columns (see the module docstring), with the registered
    query interface of the columnar core; its host's ``EventQuery`` holds the state."""

    def __init__(self, host: ContinuousQuery) -> None:
        self.host = host
        self.name = host.name
        assert isinstance(host.kind, EventQuery) and host.kind.occurrences is not None
        self.events: EventQuery = host.kind
        kind = host.physical.kind
        assert isinstance(kind, EventPlan)
        self.plans = [plan for leaf in kind.occurrences for plan in leaf.patterns]

    def event_plans(self) -> list[po.PhysicalPlan]:
        return self.plans

    def predicates(self) -> frozenset[str] | None:
        """The predicates the occurrence patterns read (None under RDFS: a triple of
        another predicate may entail one they read)."""
        return None if self.host.closure is not None else super().predicates()

    def advance(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """The elements stamped t (the push path): the row engine's own step."""
        return self.events.advance(t, elements)

    def advance_columns(self, batch: ColumnBatch) -> list[Result]:
        """The mappings the batch's elements (points, in time order) complete, instant by
        instant."""
        if not len(batch):
            return []
        clock = self.host.clock
        if clock is not None and batch.times[0] <= clock:
            raise ValueError(f"time went back: {int(batch.times[0])} after {clock}")
        graphs = self._graphs(batch)
        times = batch.times.tolist()
        cuts = [0, *(np.flatnonzero(np.diff(batch.times)) + 1).tolist(), len(times)]
        results: list[Result] = []
        occurred, kind = self.events.occurred, batch.kind
        for low, high in pairwise(cuts):
            t = times[low]
            results += occurred(t, [(t, t, graphs[n]) for n in range(low, high)], kind)
        return results

    def _graphs(self, batch: ColumnBatch) -> list[Graph]:
        """Each element's triples as id tuples, closed under RDFS when it runs."""
        spo = list(zip(batch.s.tolist(), batch.p.tolist(), batch.o.tolist(), strict=True))
        bounds = np.searchsorted(batch.element, np.arange(len(batch) + 1)).tolist()
        graphs = [tuple(spo[a:b]) for a, b in pairwise(bounds)]
        if self.host.closure is None:
            return graphs
        closed, named = self.host.closed, self._named
        names, times = batch.graph.tolist(), batch.times.tolist()
        return [
            closed(g, partial(named, names[n], times[n], batch.kind))
            for n, g in enumerate(graphs)
        ]

    def _named(self, graph: int, t: int, kind: TimeKind) -> str:
        """An element for an error: its graph name where the reader encoded it, else its
        time as results print it."""
        if graph:
            return self.dictionary.decode_text(graph)
        return f"stamped {format_time(t, kind)}"

    def state_size(self) -> dict[str, int]:
        return self.host.state_size()

    def snapshot(self) -> Snapshot:
        """The row engine's own rows (the occurrences; the kept operands are rebuilt from
        them on restore)."""
        return self.host.snapshot()

    def restore(self, snapshot: Snapshot) -> None:
        self.host.restore(snapshot)
