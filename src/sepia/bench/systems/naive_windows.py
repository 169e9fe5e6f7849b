"""The naive baseline for window workloads: what a user without an RSP engine does.

At every evaluation time the report policy asks for, the present window of each stream
(RSP-QL Definition 13: the window (o, c] with the earliest opening that holds t, cut at t) is
loaded into a pyoxigraph store, as named graphs <urn:sepia:window:NAME> (RSP-QL, CQELS) or
into the default graph (C-SPARQL), and the query's plain-SPARQL body runs over it. RStream
counts every row of every evaluation; IStream counts the rows not in the previous answer
(bag difference). The latency of an evaluation's rows is measured from the arrival of the
element that proved its time had come (the first later element, or the end of the input).
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

from sepia.bench.streamfile import parse_quads
from sepia.bench.systems.base import RunOutcome
from sepia.io.streams import read_stream
from sepia.rdf.stream import StreamElement, StreamSet
from sepia.workloads.manifest import Manifest, Variant


@dataclass(frozen=True, slots=True)
class SlidingWindow:
    """A time-based sliding window (width, slide, t0) over one stream (RSP-QL Def. 13)."""

    name: str
    stream: str
    width: int
    slide: int
    t0: int

    def present_opening(self, t: int) -> int:
        """The opening o of the earliest-opening window (o, o + width] holding t."""
        k = max(0, -((self.t0 + self.width - t) // self.slide))  # ceil((t - width - t0) / slide)
        return self.t0 + k * self.slide

    def closes_holding(self, t: int) -> Iterator[int]:
        """Close times of every window (o, o + width] that holds t."""
        opening = self.present_opening(t)
        while opening < t:
            yield opening + self.width
            opening += self.slide


class _Evaluator:
    """The store, the window buffers and the previous answer (for IStream)."""

    def __init__(self, data: Path, manifest: Manifest, variant: Variant) -> None:
        params = variant.params
        self.windows = [SlidingWindow(name, **spec) for name, spec in params["windows"].items()]
        self.sparql: str = params["sparql"]
        self.merge = bool(params.get("merge_windows", False))
        self.istream = params["operator"] == "istream"
        self.background = [
            ox.Quad(q.subject, q.predicate, q.object, ox.DefaultGraph())
            for path in variant.background for q in parse_quads(data / path)
        ]
        self.store = ox.Store()
        self.store.extend(self.background)
        self.buffers: dict[str, deque[StreamElement]] = {w.stream: deque() for w in self.windows}
        self.previous: Counter[tuple[str, ...]] = Counter()
        self.horizon = max(w.width + w.slide for w in self.windows)

    def add(self, element: StreamElement) -> None:
        buffer = self.buffers[element.stream]
        buffer.append(element)
        while buffer and buffer[0].time <= element.time - self.horizon:
            buffer.popleft()

    def _load(self, t: int) -> None:
        if self.merge:
            self.store = ox.Store()
            self.store.extend(self.background)
        for window in self.windows:
            graph = ox.DefaultGraph() if self.merge else ox.NamedNode(
                f"urn:sepia:window:{window.name}")
            if not self.merge:
                self.store.clear_graph(graph)
            opening = window.present_opening(t)
            self.store.extend(
                ox.Quad(tr.subject, tr.predicate, tr.object, graph)
                for element in self.buffers[window.stream] if opening < element.time <= t
                for tr in element.triples
            )

    def evaluate(self, t: int) -> int:
        """Rows reported at t: all of them (RStream) or the new ones (IStream)."""
        self._load(t)
        solutions = self.store.query(self.sparql)
        names = [v.value for v in solutions.variables]
        rows = Counter(tuple(str(s[n]) for n in names) for s in solutions)
        if not self.istream:
            return rows.total()
        fresh = rows - self.previous
        self.previous = rows
        return fresh.total()


def _due_times(evaluator: _Evaluator, params: dict[str, object], element: StreamElement,
               pending: set[int]) -> None:
    """Add the evaluation times ``element`` makes due under the report policy."""
    if params["report"] == "content-change":
        pending.add(element.time)
        return
    for window in evaluator.windows:
        if window.name == params["report_window"] and window.stream == element.stream:
            pending.update(window.closes_holding(element.time))


def run_windows(data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
    evaluator = _Evaluator(data, manifest, variant)
    streams = {w.stream for w in evaluator.windows}
    sources = {s.name: read_stream(data / s.path, s.name)
               for s in manifest.streams if s.name in streams}
    pending: set[int] = set()
    latencies: list[float] = []
    results = elements = triples = 0

    def fire(before: int | None, arrived: float) -> int:
        count = 0
        for t in sorted(t for t in pending if before is None or t < before):
            pending.discard(t)
            rows = evaluator.evaluate(t)
            latencies.extend([(time.perf_counter() - arrived) * 1000] * rows)
            count += rows
        return count

    for element in StreamSet(sources).merged():
        arrived = time.perf_counter()
        if arrived > deadline:
            return RunOutcome(elements, triples, results, tuple(latencies), complete=False)
        results += fire(element.time, arrived)
        evaluator.add(element)
        _due_times(evaluator, variant.params, element, pending)
        elements += 1
        triples += len(element.triples)
    results += fire(None, time.perf_counter())
    return RunOutcome(elements, triples, results, tuple(latencies))

