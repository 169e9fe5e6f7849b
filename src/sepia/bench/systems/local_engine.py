"""Sepia's incremental engine in-process (`sepia run --engine local`): the workload's query
over its stream files, results counted, latency from the arrival of the element that made a
result due to the result (the push loop measures both on the wall clock).

``local-paced`` answers benchmarks.md's latency target ("p99 under 10 ms at 10% of peak
rate"): it first replays the stream at full speed to learn the engine's own peak rate on
this machine and workload, then replays it from a fresh session releasing elements at
``PACE`` of that rate, each at its scheduled arrival; latency runs from that arrival, so
time spent behind schedule counts."""

from __future__ import annotations

import gc
import time
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from sepia.bench.systems.base import ResultCount, RunOutcome
from sepia.rdf.stream import StreamElement
from sepia.runtime.local.collector import sparse_collections
from sepia.workloads import Kind, Workload
from sepia.workloads.manifest import Manifest, Variant

if TYPE_CHECKING:  # the harness's parent process imports the registry, not the engine
    from sepia.engine.columnar import ColumnBatch
    from sepia.runtime.local import Session

PACE = 0.10
"""The paced replay's rate, as a share of the full-speed replay's."""
CHUNK = 1024
"""Elements the paced replay hands the session at once at most, as a live run takes its
backlog (``runtime.local.feed.CHUNK``)."""
REPLAY_CHUNK = 4096
"""Elements per batch when a columnar session replays a file at full speed. `sepia run`
pushes each block its reader cut (4 MiB of text, 10,000-40,000 elements); the bench cuts
smaller so that a result's latency, timed from its chunk's arrival, still means something.
At 1,024 the columnar core's fixed cost per step was a large share: 4,096 took W6 from
1.29 to 1.07 s, W5 1.55 to 1.11 s, W4's v-shape `;` 1.37 to 1.00 s and head-and-shoulders
`;` 2.25 to 1.56 s (medians of three, 4 December), W3 alike; 16,384 gained no more."""
PEAK_SHARE = 0.3
"""The share of the budget the paced system may spend learning the peak rate."""


SPIN_S = 0.002
"""The last part of a wait the wall clock spins instead of sleeping: a sleep overshoots by
tens of microseconds, and at a paced rate of 10,000 elements a second one sleep per
element fell behind the schedule (and every latency with it)."""


class Clock(Protocol):
    """Where the replays read the time and wait: the wall clock here, a virtual one in
    tests (so that a budget or a schedule does not depend on the machine's load)."""

    def now(self) -> float: ...

    def wait_until(self, moment: float) -> None: ...


@dataclass(frozen=True)
class WallClock:
    """``time.perf_counter`` seconds, as the harness's deadlines are."""

    def now(self) -> float:
        return time.perf_counter()

    def wait_until(self, moment: float) -> None:
        """Sleep until ``SPIN_S`` before ``moment``, then spin to it."""
        left = moment - time.perf_counter() - SPIN_S  # read once: a second read can pass it
        if left > 0:
            time.sleep(left)
        while time.perf_counter() < moment:
            pass


WALL = WallClock()


class LocalEngine:
    name = "local"
    description = "Sepia, local runtime (--engine local)"

    def unavailable(self) -> str | None:
        return None

    def cannot_express(self, workload: Workload, variant: Variant) -> str | None:
        """Only queries without one; a query the engine refuses fails its row with the
        engine's reason (the query text lives with the generated data, not known here)."""
        return "no query" if workload.kind is Kind.INGEST or variant.query is None else None

    def counts_differ(self, workload: Workload, variant: Variant) -> str | None:
        return None

    def run(self, data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
        loading = _load_reader()
        deadline += loading
        session = _session(data, manifest, variant)
        with sparse_collections():  # as `sepia run` replays a file (runtime.local.collector)
            if session.columnar:
                streams = manifest.streams_of(variant)
                elements = sum(s.elements for s in streams)
                triples = sum(s.triples for s in streams)
                batches = _columns(session, data, manifest, variant)
                outcome = replay_columns(session, batches, elements, triples, deadline)
            else:
                outcome = replay(session, _stream(data, manifest, variant), deadline)
        return replace(outcome, startup_s=loading)


class PacedLocalEngine(LocalEngine):
    name = "local-paced"
    description = f"Sepia, local runtime, elements released at {PACE:.0%} of its peak rate"
    opt_in = True  # it spends the whole budget waiting by design

    def __init__(self, clock: Clock = WALL) -> None:
        self.clock = clock

    def run(self, data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
        """The budget runs from after the stream is read: reading 100,000 elements took
        most of a 60 s budget on a loaded machine, and the peak rate was then learnt in
        the few seconds left (2 elements/s on W4). The reading is reported as start-up."""
        read_from = self.clock.now()
        budget = deadline - read_from
        elements = _elements(data, manifest, variant)
        gc.freeze()  # a live source holds no such list: Python's collections of its oldest
        try:  # generation walked it (0.1-0.4 s at 100,000 elements) inside the paced run
            started = self.clock.now()
            full = replay(_session(data, manifest, variant), elements,
                          started + budget * PEAK_SHARE, clock=self.clock)  # fmt: skip
            rate = full.elements / max(self.clock.now() - started, 1e-9)
            session = _session(data, manifest, variant)
            gc.collect()
            gc.freeze()
            paced = replay(session, elements, started + budget, rate * PACE, self.clock)
        finally:
            gc.unfreeze()
        return replace(paced, startup_s=started - read_from)


def _load_reader() -> float:
    """Import the columnar reader's library (polars), returning the seconds it took: it
    is reported as start-up, as the floor's and the baselines' parser (pyoxigraph) is
    imported before their clock starts; 0.15-0.4 s here, a fifth of a 100k W1 run."""
    started = time.perf_counter()
    import sepia.engine.columnar.frontend  # noqa: F401

    return time.perf_counter() - started


def _session(data: Path, manifest: Manifest, variant: Variant) -> Session:
    """A fresh session with the variant's background and query registered (the query is
    compiled first: the background is read for its predicates, as `sepia run` reads it)."""
    from sepia.engine.background import loaded_for
    from sepia.io.background import load_background
    from sepia.lang import parse_query
    from sepia.runtime.local import Session

    assert variant.query is not None
    query = parse_query((data / variant.query).read_text(encoding="utf-8"))
    graphs = manifest.background_of(variant)
    background = load_background([(g, data / p) for g, p in graphs],
                                 loaded_for([query], variant.rdfs)) or None  # fmt: skip
    session = Session(background, rdfs=variant.rdfs)
    session.register(query, variant.name)
    return session


def _elements(data: Path, manifest: Manifest, variant: Variant) -> list[StreamElement]:
    """The variant's streams merged in time order, read whole before a paced replay's
    clock starts."""
    return list(_stream(data, manifest, variant))


def _stream(data: Path, manifest: Manifest, variant: Variant) -> Iterator[StreamElement]:
    """The variant's streams merged in time order, each file read as `sepia run` reads it
    (``feed.file_elements``), as the replay consumes them: a list of 100,000 elements held
    through the run was walked by Python's collector, 15% of W8's replay, which `sepia
    run` and the naive baseline, streaming their files, never pay."""
    from sepia.rdf.stream import StreamSet
    from sepia.runtime.inputs import ReadOptions
    from sepia.runtime.local.feed import file_elements

    streams = manifest.streams_of(variant)
    read = ReadOptions()
    return iter(StreamSet({s.iri: file_elements(data / s.path, s.iri, read)
                           for s in streams}).merged())


def _columns(
    session: Session, data: Path, manifest: Manifest, variant: Variant
) -> Iterator[ColumnBatch]:
    """The variant's streams as batches of columns in time order, each file read by the
    columnar reader (only the predicates the query reads) where it takes the file's
    shape, else by the row one; read as they are consumed, so memory stays bounded."""
    from sepia.engine.columnar.batch import interleaved
    from sepia.engine.columnar.frontend import stream_columns

    predicates = session.predicates()
    return interleaved([
        stream_columns(data / s.path, s.iri, session.dictionary, predicates)
        for s in manifest.streams_of(variant)
    ])


def replay_columns(
    session: Session, batches: Iterator[ColumnBatch], elements: int, triples: int,
    deadline: float,
) -> RunOutcome:
    """Push the batches ``REPLAY_CHUNK`` elements at a time (a chunk arrives at once:
    each result's latency runs from its chunk's arrival). ``elements``, ``triples``: the
    files' (the batches hold only the triples of the predicates the query reads)."""
    counted, latencies, done = ResultCount(), [], 0
    for batch in batches:
        for start in range(0, len(batch), REPLAY_CHUNK):
            arrived = time.perf_counter()
            end = min(start + REPLAY_CHUNK, len(batch))
            due = session.push_columns(batch.slice(start, end))
            finished = time.perf_counter()
            latencies += [(finished - arrived) * 1000] * len(due)
            counted.add(due)
            done += end - start
            if finished > deadline and done < elements:
                share = round(triples * done / elements)
                return RunOutcome(done, share, counted.total, tuple(latencies), False)
    counted.add(session.flush())
    return RunOutcome(done, triples, counted.total, tuple(latencies))


def replay(
    session: Session, elements: Iterable[StreamElement], deadline: float,
    rate: float | None = None, clock: Clock = WALL,
) -> RunOutcome:
    """Push the elements, at full speed or released ``rate`` per second (``paced``); each
    result's latency runs from the (scheduled) arrival of the element that made it due."""
    if rate is not None:
        return paced(session, list(elements), deadline, rate, clock)
    triples = pushed = 0
    counted, latencies = ResultCount(), list[float]()
    for number, element in enumerate(elements):
        pushed = number + 1
        arrived = clock.now()
        due = session.push(element)
        done = clock.now()
        latencies += [(done - arrived) * 1000] * len(due)
        counted.add(due)
        triples += len(element.triples)
        if done > deadline:
            return RunOutcome(number + 1, triples, counted.total, tuple(latencies), False)
    counted.add(session.flush())
    return RunOutcome(pushed, triples, counted.total, tuple(latencies))


def paced(
    session: Session, elements: Sequence[StreamElement], deadline: float, rate: float,
    clock: Clock = WALL,
) -> RunOutcome:
    """Release the elements ``rate`` per second, the n-th at ``n / rate`` s after the start.
    The elements that have arrived when the engine is free go in together
    (``Session.push_many``, up to ``CHUNK``), as a live run takes its backlog
    (``runtime.local.feed``): one stall (a collection, the process descheduled) then costs
    one late step, where pushing each element behind it in turn made a late step per
    element, every result they released late. A result's latency runs from the arrival of
    the first element after its time, the one that made it due."""
    triples = taken = 0
    counted, latencies = ResultCount(), list[float]()
    started = clock.now()
    while taken < len(elements):
        if started + taken / rate > deadline:
            return RunOutcome(taken, triples, counted.total, tuple(latencies), False)
        clock.wait_until(started + taken / rate)
        now, end = clock.now(), taken + 1
        limit = min(len(elements), taken + CHUNK)
        while end < limit and started + end / rate <= min(now, deadline):
            end += 1
        batch = elements[taken:end]
        due = session.push_many(batch)
        done = clock.now()
        times = [element.time for element in batch]
        for result in due:
            made_by = bisect_right(times, result.t) % len(batch)  # none after it: the first
            latencies.append((done - (started + (taken + made_by) / rate)) * 1000)
        counted.add(due)
        triples += sum(len(element.triples) for element in batch)
        taken = end
        if done > deadline:
            return RunOutcome(taken, triples, counted.total, tuple(latencies), False)
    counted.add(session.flush())
    return RunOutcome(taken, triples, counted.total, tuple(latencies))
