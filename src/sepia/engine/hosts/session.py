"""The push loop: elements in time order in, results out as soon as they are due.

Elements may come one at a time; those stamped with the same time are gathered and handed
to every query together once a later time shows up, a watermark passes their time (a live
input's clock: nothing stamped at or before it will come) or the input ends, because an
evaluation at t must see every element stamped t.

Results are returned by each call, given to the ``on_result`` callback as they are made,
or iterated from the readers ``attach``ed to the session (``results()``).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import wraps
from itertools import groupby
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

import numpy as np
import pyoxigraph as ox

from sepia.algebra.query import Query
from sepia.engine.background import Background, looked_up, read_by
from sepia.engine.codec import Codec
from sepia.engine.columnar import ColumnBatch
from sepia.engine.forgetting import STEP_TERMS, Forgetting
from sepia.engine.hosts.engine_path import COLUMNAR, Engine, continuous_query
from sepia.engine.hosts.network import Network
from sepia.engine.hosts.prepared import PreparedBackground, ntriples_ids
from sepia.engine.query.continuous import Snapshot
from sepia.engine.query.snapshots import read_snapshot, write_snapshot
from sepia.lang import parse_query
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement, StreamSet
from sepia.rdf.terms import Term, make_triple
from sepia.rdf.time import TimeKind

P = ParamSpec("P")
R = TypeVar("R")


def _delivering(
    method: Callable[Concatenate[Session, P], R],
) -> Callable[Concatenate[Session, P], R]:
    """A call that may advance the queries more than once: the results of its first
    advances reach the caller only when it returns, so a collection waits till then
    (``Session._forget``): one in a later advance of W3's paced batches (``push_many``)
    held results made earlier in the batch 10-20 ms, its worst latencies."""

    @wraps(method)
    def call(self: Session, /, *args: P.args, **kwargs: P.kwargs) -> R:
        self._calls += 1
        try:
            return method(self, *args, **kwargs)
        finally:
            self._calls -= 1
            if not self._calls and self._unreturned:
                self._unreturned, self.reported = False, True

    return call


class Session:
    """Queries registered over one background dataset (a store, or a
    ``PreparedBackground`` encoded once for many sessions), fed by ``push`` or by attached
    readers; ``on_result`` (if given) receives every result as it is made.

    >>> import pyoxigraph as ox
    >>> ex = "http://example.org/"
    >>> session = Session()
    >>> _ = session.register(
    ...     "PREFIX : <http://example.org/> SELECT ?x "
    ...     "FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 5] WHERE { WINDOW :w { ?x :p :o } }")
    >>> triple = ox.Triple(ox.NamedNode(ex + "a"), ox.NamedNode(ex + "p"), ox.NamedNode(ex + "o"))
    >>> session.push_graph(ex + "s", 3, [triple])   # due once time 3 is over
    []
    >>> [(r.t, r.binding["x"].value) for r in session.flush()]
    [(3, 'http://example.org/a')]
    """

    def __init__(
        self,
        background: ox.Store | PreparedBackground | None = None,
        *,
        rdfs: bool = False,
        max_runs: int | None = None,
        on_result: Callable[[Result], None] | None = None,
        forget_terms: int | None = STEP_TERMS,
        forget_when_quiet: bool = True,
        forget_after_batches: bool = False,
    ) -> None:
        if isinstance(background, PreparedBackground):  # encoded once for many sessions
            self.dictionary, self.background = background.for_session()
        else:
            self.dictionary = Codec()  # the background's triples are encoded as queries come
            self.background = Background.encode(background, self.dictionary, ntriples_ids,
                                                frozenset())
        self.forgetting = None if forget_terms is None else Forgetting(
            self.dictionary, forget_terms, waits=forget_when_quiet)
        """Terms no state holds are forgotten once ``forget_terms`` unpinned ones are held
        (and half as many again as the last collection left), preferably in a quiet advance
        (``forget_when_quiet``: up to half of ``forget_terms`` late); None keeps every term
        (a run whose dictionary rows are appended elsewhere)."""
        self.forget_after_batches = forget_after_batches
        """The caller collects once each batch of columns is gone (a Spark key: between
        ``push_columns`` slices); a collection inside ``push_columns`` would keep every id
        of the batch it advances over, and cost as much (W3's stateful task collected
        twice per slice, 6% of its time)."""
        self.queries: list[Engine] = []
        self.network = Network()
        """The queries, producers of registered streams before the queries reading them."""
        self.pending: list[StreamElement] = []
        self.pending_columns: ColumnBatch | None = None
        """``push_columns``' elements stamped with its last time, not yet released."""
        self.max_runs = max_runs
        self.rdfs = rdfs
        self.on_result = on_result
        self.horizon: int | None = None
        """The last watermark: elements stamped at or before it are late."""
        self.reads: set[str] | None = set()
        """Streams the registered queries read; None once one reads whatever it is given
        (an EP-SPARQL query without FROM STREAM)."""
        self.sources: list[Iterable[StreamElement]] = []
        self.pushed = 0
        """Elements given to ``push_graph`` (they are named after it)."""
        self.reported = False
        """Whether the results of the last advance that made any have reached the caller
        and no advance ran since (collections wait for such a quiet one)."""
        self._calls = 0
        """Nested ``_delivering`` calls running."""
        self._unreturned = False
        """Whether results made inside the running calls have not reached the caller."""

    def register(
        self, query: str | Query, name: str = "query", *,
        owns: Callable[[Term], bool] | None = None,
    ) -> Engine:
        """Add a query (text in any dialect, or compiled algebra) before pushing elements;
        ``owns``: the PARTITION BY values it keeps (a bucket of a spread query's values)."""
        compiled = parse_query(query) if isinstance(query, str) else query
        self.background.select(read_by([compiled], self.rdfs),
                               looked_up=not self.rdfs and looked_up(compiled))
        engine = continuous_query(
            compiled, name, self.dictionary, self.background, self.max_runs, self.rdfs, owns
        )
        self.network.add(engine)
        self.queries.append(engine)
        if self.forgetting is not None:
            self.forgetting.pin()
        declared = {stream.iri.value for stream in compiled.dataset.streams}
        self.reads = None if self.reads is None or not declared else self.reads | declared
        return engine

    def push(self, element: StreamElement) -> list[Result]:
        """One element (times must not decrease); the results it made due."""
        held = self.pending_columns
        if held is not None and element.time < int(held.times[-1]):
            raise ValueError(f"element at {element.time} after columns up to {held.times[-1]}")
        if held is not None and element.time == int(held.times[-1]):  # joins the held instant
            return self.push_columns(ColumnBatch.from_elements([element], self.dictionary))
        if held is not None:
            return self._emit(self._release() + self.push(element))
        if self.pending and element.time < self.pending[0].time:
            raise ValueError(
                f"element at {element.time} arrived after one at {self.pending[0].time}"
            )
        if self.horizon is not None and element.time <= self.horizon:
            raise ValueError(f"element at {element.time} came after the watermark {self.horizon}")
        results = self._release() if self.pending and element.time > self.pending[0].time else []
        self.pending.append(element)
        return self._emit(results)

    @_delivering
    def push_many(self, elements: Sequence[StreamElement]) -> list[Result]:
        """Elements given at once, in time order (a chunk of a file, a live backlog): the
        results they made due, as ``push`` one by one would give. On the columnar core
        they go in as one batch of columns: its cost per call is fixed, so instants pushed
        one at a time ran it ~10x slower than the row engine (W4, 3,000 elements)."""
        if len(elements) < 2 or not self.columnar:
            return [result for element in elements for result in self.push(element)]
        held = self.pending_columns
        last = self.pending[-1].time if self.pending else None
        last = int(held.times[-1]) if held is not None else last
        for before, element in zip([None, *elements], elements, strict=False):
            earlier = last if before is None else before.time
            if earlier is not None and element.time < earlier:
                raise ValueError(f"element at {element.time} arrived after one at {earlier}")
        given = [*self.pending, *elements]
        self.pending = []
        cut = next(i for i, e in enumerate(given) if e.time == given[-1].time)
        results = (self.push_columns(ColumnBatch.from_elements(given[:cut], self.dictionary))
                   if cut else [])  # the last instant waits as rows: a snapshot holds them
        return results + [result for element in given[cut:] for result in self.push(element)]

    def push_graph(
        self,
        stream: str,
        t: int,
        triples: Iterable[ox.Triple],
        *,
        graph: str | None = None,
        kind: TimeKind = TimeKind.ABSTRACT,
    ) -> list[Result]:
        """``push`` an element of ``stream`` stamped ``t`` holding ``triples`` (named
        ``graph``, else a fresh blank node; ``kind``: DATETIME for epoch milliseconds).

        A stream no registered query reads is a ValueError (a mistyped IRI would otherwise
        go unnoticed: its elements would change no answer)."""
        if self.reads is not None and stream not in self.reads:
            read = ", ".join(f"<{iri}>" for iri in sorted(self.reads)) or "nothing yet"
            raise ValueError(f"no registered query reads the stream <{stream}>; they read "
                             f"{read} (register the queries before pushing)")
        self.pushed += 1
        name = graph if graph is not None else f"_:e{self.pushed}"
        return self.push(StreamElement(stream, name, t, t, tuple(triples), kind))

    @property
    def columnar(self) -> bool:
        """Whether every query runs on the columnar core and none reads another's output:
        then ``push_columns`` may feed the session."""
        return bool(self.queries) and not self.network.linked and all(
            isinstance(q, COLUMNAR) for q in self.queries
        )

    def predicates(self) -> frozenset[str] | None:
        """The predicate IRIs the queries' patterns read (None: some read a variable
        predicate): a columnar reader may drop the other triples of an element."""
        found: set[str] = set()
        for q in self.queries:
            read = (q.predicates() if isinstance(q, COLUMNAR)
                    else None)
            if read is None:
                return None
            found |= read
        return frozenset(found)

    @_delivering
    def push_columns(self, batch: ColumnBatch) -> list[Result]:
        """Elements as columns (``sepia.engine.columnar``), in time order and after every
        element pushed before: the results they made due. The elements stamped with the
        batch's last time wait for the next call (more may come at that time), as
        ``push`` holds its pending elements; ``flush`` releases them."""
        if not self.columnar:
            raise ValueError("push_columns needs every query on the columnar core")
        if not len(batch):
            return []
        held, self.pending_columns = self.pending_columns, None
        results = self._release()  # elements given to ``push`` before
        if held is not None:
            batch = ColumnBatch.merged([held, batch])
        first, last = int(batch.times[0]), int(batch.times[-1])
        if self.horizon is not None and first <= self.horizon:
            raise ValueError(f"element at {first} came after the watermark {self.horizon}")
        cut = int(np.searchsorted(batch.times, last, side="left"))
        self.pending_columns = batch.slice(cut, len(batch))
        return self._emit(results + self._advance_columns(batch.slice(0, cut)))

    def _advance_columns(self, batch: ColumnBatch) -> list[Result]:
        if not len(batch):
            return []
        self.network.kind = self.network.kind or batch.kind
        made = [q.advance_columns(batch) for q in self.queries]  # type: ignore[union-attr]
        results = list(heapq.merge(*made, key=lambda r: r.t))
        if not self.forget_after_batches:
            self._forget(results)
        return results

    def watermark(self, t: int) -> list[Result]:
        """No element stamped t or earlier will arrive any more (a live input's clock): the
        results due through t. Only time-driven report policies have any between arrivals."""
        if self.horizon is not None and t <= self.horizon:
            return []
        held = self.pending_columns
        due = (self.pending and self.pending[0].time <= t) or (
            held is not None and held.times[-1] <= t
        )
        results = self._release() if due else []
        results += self.network.watermark(t)
        self.horizon = t
        return self._emit(results)

    def flush(self, until: int | None = None) -> list[Result]:
        """The input ended: every result still due (through ``until`` if given)."""
        results = self._release()
        return self._emit(results + self.network.flush(until))

    def attach(self, elements: Iterable[StreamElement]) -> None:
        """A reader of stream elements in time order (``read_stream(path, iri)``, a list):
        ``results()`` reads every attached reader, merged by time."""
        self.sources.append(elements)

    def results(self, until: int | None = None) -> Iterator[Result]:
        """Push the attached readers' elements in time order (through ``until``) and yield
        each result as it becomes due; the input ends when every reader does."""
        merged = StreamSet({str(n): source for n, source in enumerate(self.sources)}).merged()
        self.sources = []
        for element in merged:
            if until is not None and element.time > until:
                break
            yield from self.push(element)
        yield from self.flush(until)

    __iter__ = results

    def _emit(self, results: list[Result]) -> list[Result]:
        if self.on_result is not None:
            for result in results:
                self.on_result(result)
        return results

    def _release(self) -> list[Result]:
        if self.pending_columns is not None:
            held, self.pending_columns = self.pending_columns, None
            return self._advance_columns(held) + self._release()
        if not self.pending:
            return []
        t, batch = self.pending[0].time, self.pending
        self.pending = []
        made = self.network.advance(t, batch)
        self._forget(made)
        return made

    def _forget(self, made: list[Result]) -> None:
        """Between two advances (no ids in flight but the state's and the batches' a
        reader holds): the terms nothing holds any more are forgotten, when it is time,
        preferably in the first quiet advance after results have reached the caller
        (``Forgetting.due``; ``_delivering``)."""
        settled = self.reported and not made
        self.reported = bool(made) and not self._calls  # else when the calls return
        if made and self._calls:
            self._unreturned = True
        if self.forgetting is not None and self.forgetting.due(settled):
            self.forgetting.collect([self, *ColumnBatch.alive.values()],
                                    pinned=self.background.pinned())

    def state_size(self) -> dict[str, int]:
        """The engine's counters summed over queries, plus the dictionary's size."""
        total = {"dictionary_terms": len(self.dictionary), "pending_elements": len(self.pending),
                 "forgotten_terms": self.forgetting.forgotten if self.forgetting else 0}
        for q in self.queries:
            for key, value in q.state_size().items():
                total[key] = total.get(key, 0) + value
        return total

    def snapshot(self) -> dict[str, Snapshot | list[tuple]]:
        """The whole session's state as rows: dictionary, the highest id it gave (its
        terms may be forgotten: ids are never given twice), elements not yet released
        (stream, graph, start, end, time kind, s, p, o; one row without s, p, o for an
        element without triples), the watermark, each query's rows, and for a query network
        its counters and held results (``network``) and the derived and input elements its
        consumers have not been given yet (``inbox``: query, rank, arrival, element row)."""
        if self.pending_columns is not None:
            raise ValueError("a snapshot after push_columns needs flush() or a watermark first")
        pending = _rows(self.pending, self.dictionary)  # encoded before the dictionary's rows
        inbox = [
            (name, rank, arrival, *row)
            for name, rank, arrival, element in self.network.waiting()
            for row in _rows([element], self.dictionary)
        ]
        state: dict[str, Snapshot | list[tuple]] = {"dictionary": list(self.dictionary.rows())}
        state["last_id"] = [(self.dictionary.last_id,)]
        state["pending"] = pending
        state["watermark"] = [] if self.horizon is None else [(self.horizon,)]
        state["network"] = self.network.rows()
        state["inbox"] = inbox
        state.update({f"query {q.name}": q.snapshot() for q in self.queries})
        return state

    def restore(self, state: Mapping[str, Snapshot | list[tuple]]) -> None:
        """Resume from ``snapshot()``, with the same queries registered under the same names."""
        missing = [q.name for q in self.queries if f"query {q.name}" not in state]
        if missing:
            raise ValueError(f"the snapshot has no state for the queries {', '.join(missing)}")
        self.dictionary.extend(tuple(row) for row in _table(state, "dictionary"))
        for (last_id,) in _table(state, "last_id"):
            self.dictionary.reserve(last_id)  # the highest ids given may be forgotten ones
        self.pending = _elements(_table(state, "pending"), self.dictionary)
        self.horizon = next((t for (t,) in _table(state, "watermark")), None)
        for q in self.queries:
            snapshot = state[f"query {q.name}"]
            assert isinstance(snapshot, dict), f"query {q.name}: not a query's snapshot"
            q.restore(snapshot)
        waiting = []
        inbox = _table(state, "inbox")
        for (name, rank, arrival), rows in groupby(inbox, key=lambda row: tuple(row[:3])):
            (element,) = _elements([row[3:] for row in rows], self.dictionary)
            waiting.append((name, rank, arrival, element))
        self.network.restore(_table(state, "network"), waiting)

    def save(self, path: str | Path, inputs: Mapping[str, int] | None = None) -> None:
        """Write ``snapshot()`` to a file (JSON; replaced atomically, so a stop mid-write
        leaves the previous snapshot), with the count of elements taken from each input."""
        write_snapshot(path, [q.name for q in self.queries], self.snapshot(), inputs)

    def load(self, path: str | Path) -> dict[str, int]:
        """``restore`` from a file written by ``save``; the input counts saved with it."""
        saved = read_snapshot(path, [q.name for q in self.queries])
        self.restore(saved.state)
        return saved.inputs


def _rows(elements: Iterable[StreamElement], dictionary: Dictionary) -> list[tuple]:
    """Stream elements as rows: stream, graph, start, end, time kind, s, p, o (one row per
    triple; one without s, p, o for an element without triples)."""
    encode = dictionary.encode
    return [
        (e.stream, e.graph, e.start, e.end, e.kind.value, *(encode(x) for x in (t or ())))
        for e in elements
        for t in (e.triples or (None,))
    ]


def _table(state: Mapping[str, Snapshot | list[tuple]], name: str) -> list[tuple]:
    """One of the session's own tables in a snapshot (none: empty)."""
    rows = state.get(name, [])
    assert isinstance(rows, list), f"{name}: not a table of rows"
    return rows


def _elements(rows: Sequence[Sequence], dictionary: Dictionary) -> list[StreamElement]:
    """Stream elements back from snapshot rows (consecutive rows of one element)."""
    decode = dictionary.decode
    elements = []
    for (stream, graph, start, end, kind), group in groupby(rows, key=lambda row: tuple(row[:5])):
        triples = tuple(make_triple(*map(decode, row[5:])) for row in group if len(row) > 5)
        elements.append(StreamElement(stream, graph, start, end, triples, TimeKind(kind)))
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
    ``max_runs`` bounds each event automaton's runs; ``Session.state_size()`` counts drops.

    >>> from sepia import load_background, read_stream
    >>> e1, ex = "examples/e1-shops-coupons/", "http://example.org/"
    >>> streams = {ex + s: read_stream(f"{e1}stream-{s}.trig", ex + s)
    ...            for s in ("nearby", "coupons")}
    >>> results = run([("offers", open(e1 + "query.rq").read())], streams,
    ...               load_background(e1 + "background.ttl"))
    >>> sorted((r.query, r.t, r.binding["shopper"].value.removeprefix(ex)) for r in results)
    [('offers', 8, 'carl'), ('offers', 8, 'eve'), ('offers', 16, 'diana')]
    """
    session = Session(background, rdfs=rdfs, max_runs=max_runs)
    for name, query in queries:
        session.register(query, name)
    session.attach(StreamSet(streams).merged())
    yield from session.results(until)
