"""One query evaluated continuously and incrementally (RSP-QL seed 004, Definition 24).

Time advances in steps, one per distinct arrival time. The ``ContinuousQuery`` keeps what
every query has (the windows, the clock, the previous answer for IStream / DStream, the
query form) and hands each step to its kind, chosen once from the physical plan:
``WindowQuery`` (evaluated when the report policy says), ``SequenceQuery`` (a SPAseq
automaton), ``EventQuery`` (an event tree pushed as its mappings complete) or
``MatchesQuery`` (several MATCHes), the last two under a REPORT clause evaluated at its
instants instead (``ReportedEvents``). An evaluation evicts expired elements, checks NON EMPTY
on the windows it keeps, runs the physical plan, applies the query form and the streaming
operator.

All state is rows (architecture principle 3), see ``snapshot`` and ``restore``.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Sequence
from typing import assert_never

import numpy as np
import pyoxigraph as ox

from sepia.algebra import query as qa
from sepia.algebra.query import Unsupported
from sepia.algebra.scope import answers_anew
from sepia.algebra.sparql import TIMESTAMP, integer_literal
from sepia.engine.background import Background
from sepia.engine.codec import encode_triples
from sepia.engine.plan.physical import (
    EventPlan,
    MatchesPlan,
    PhysicalQuery,
    SequencePlan,
    WindowPlan,
)
from sepia.engine.plan.planner import plan
from sepia.engine.query.events import EventQuery, MatchesQuery
from sepia.engine.query.kind import QueryKind
from sepia.engine.query.reader import Reader
from sepia.engine.query.reported import ReportedEvents
from sepia.engine.query.sequence import SequenceQuery
from sepia.engine.query.windowed import WindowQuery
from sepia.engine.r2r import aggregates
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.aggregates import MaintainedGroups
from sepia.engine.r2r.delta import MaintainedAnswer, plan_of
from sepia.engine.r2r.expressions import calls
from sepia.engine.r2r.fallback import FallbackStore
from sepia.engine.r2r.paths import PathRelations
from sepia.engine.r2s import streams as r2s
from sepia.engine.r2s.forms import QueryForm
from sepia.engine.rows import HIDDEN, Row
from sepia.engine.s2r.report import Arrivals
from sepia.engine.s2r.windows import WindowState
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import Term, term_to_nt
from sepia.reasoning.elements import ElementClosure
from sepia.reasoning.reads import reads_of

Snapshot = dict[str, list[tuple]]
WindowColumns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""A window's content as columns: the shown elements' times, oldest first, then per triple
its element (an offset into those times, ascending) and its s, p, o ids."""
EVENT_CACHE = 1 << 16


class ContinuousQuery:
    """A registered query: its physical plan and its state."""

    def __init__(
        self,
        query: qa.Query,
        name: str,
        dictionary: Dictionary,
        background: Background,
        max_runs: int | None = None,
        rdfs: bool = False,
        partition: Term | None = None,
        physical: PhysicalQuery | None = None,
    ) -> None:
        """``physical``: the plan of ``query`` already made for this session's dictionary
        and background (PARTITION BY plans once for all its partitions)."""
        self.name = name
        self.max_runs = max_runs
        """At most this many automaton runs are kept (``--max-runs``); drops are counted."""
        self.dictionary = dictionary
        if rdfs or query.entailment is qa.Entailment.RDFS:
            background = background.entailed()
        self.background = background
        self.closure = (
            None if background.schema is None
            else ElementClosure(background.schema, dictionary, reads_of(query))
        )
        """Closes each element, keeping the derived triples ``query`` can match."""
        if background.schema is not None and calls(query.pattern, "TIMESTAMP"):
            raise Unsupported("C-SPARQL timestamp() under RDFS entailment")
        if physical is None:
            functions = {TIMESTAMP: self.timestamp}
            physical = plan(query, dictionary, background.names, functions)
        self.physical = physical
        self.member = None if partition is None else self._member(partition)
        """PARTITION BY: (slot, id) every event pattern's match must bind (one partition)."""
        self.now = 0
        """The instant being evaluated: the background graphs are read as they are then."""
        self.operator = r2s.operator_of(query)
        self.events_query = not isinstance(physical.kind, WindowPlan)
        """An event query: its answers carry the matches' intervals (pushed without a
        REPORT clause: only solutions carrying a match reported at t count at t)."""
        self.dense = self.events_query and (
            isinstance(query.form, qa.Ask) or self.operator is not qa.RStream
        )
        """Evaluated at every arrival, matches or not (as the reference): an ASK answers
        false, an IStream / DStream compares with an empty answer."""
        self.form = QueryForm(
            query, name, physical.slots, dictionary, physical.default_graph, self.events_query
        )
        self.windows = {n: WindowState(op) for n, (_, op) in physical.windows.items()}
        self.readers_of: dict[str, list[ox.NamedNode]] = {}
        """The names of the windows over each stream."""
        for window, (stream, _) in physical.windows.items():
            self.readers_of.setdefault(stream, []).append(window)
        self.declared = frozenset(s.iri.value for s in query.dataset.streams)
        """The query's streamset (FROM STREAM); empty: every stream (EP-SPARQL)."""
        self.previous: Counter[tuple] = Counter()
        self.anew = answers_anew(query)
        """Answers anew on the same data (``next_change``)."""
        self.clock: int | None = None
        """The last instant whose evaluations are done."""
        self.last_arrival: dict[str, int] = {}
        self._fallback: FallbackStore | None = None
        self._paths: PathRelations | None = None
        self.completed: list[list[Row]] = [[]]
        """The rows each MATCH gives at the instant being evaluated (by its number)."""
        self._readers: dict[int, tuple[StreamElement, Reader]] = {}
        self._event_cache: dict[tuple, list[Row]] = {}
        self.kind = self._kind()
        self.delta = self._maintained()

    def _kind(self) -> QueryKind:
        """The one dispatch on the kind of plan."""
        match self.physical.kind:
            case WindowPlan() as window:
                return WindowQuery(self, window)
            case SequencePlan() as sequence:
                return SequenceQuery(self, sequence)
            case EventPlan() as events:
                tree = EventQuery(self, events)
                if events.schedule is None:
                    return tree
                return ReportedEvents(self, events.schedule, tree)
            case MatchesPlan() as matches:
                several = MatchesQuery(self, matches)
                if matches.schedule is None:
                    return several
                return ReportedEvents(self, matches.schedule, several)
            case _:
                assert_never(self.physical.kind)

    @property
    def query(self) -> qa.Query:
        return self.physical.query

    def _member(self, value: Term) -> tuple[int, int]:
        partition = self.physical.partition
        if partition is None or partition.slot is None:
            raise ValueError(f"query {self.name} has no PARTITION BY variable to fix")
        return partition.slot, self.dictionary.encode(value)

    def partitions_of(self, element: StreamElement) -> set[int]:
        """PARTITION BY: the values (ids) some basic event pattern binds to the variable
        on this element's graph, the partitions it joins (language.md 4b)."""
        partition = self.physical.partition
        assert partition is not None
        if partition.slot is None:
            return set()
        found: set[int] = set()
        self.new_step()
        for leaf in partition.leaves:
            found |= self._new_values(leaf, element, partition.slot, found)
        return found

    def _new_values(
        self, leaf: po.PhysicalPlan, element: StreamElement, slot: int, found: set[int]
    ) -> set[int]:
        """The values a leaf binds at ``slot`` besides ``found``: its outer FILTERs (often
        reading other elements' variables, so false here) are only evaluated on rows that
        would add a value."""
        conditions = []
        while isinstance(leaf, po.Select):
            conditions.append(leaf.condition)
            leaf = leaf.inner
        rows = [r for r in self.gpm(leaf, element) if r[slot] is not None and r[slot] not in found]
        for condition in conditions:
            if rows:
                rows = [r for r, ok in zip(rows, condition.truths(rows), strict=True) if ok]
        return {v for r in rows if (v := r[slot]) is not None}

    def in_partition(self, rows: list[Row]) -> list[Row]:
        """In one partition, only the matches binding its value count."""
        if self.member is None:
            return rows
        slot, value = self.member
        return [row for row in rows if row[slot] == value]

    def in_streamset(self, elements: Sequence[StreamElement]) -> bool:
        """Whether an element of the query's streamset is among ``elements``: only those
        make an instant of its time (SPAseq's strict contiguity, WITHIN)."""
        declared = self.declared
        return any(not declared or e.stream in declared for e in elements)

    # --- time: each kind's own ----------------------------------------------------------
    def advance(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """Everything due up to t, given the elements stamped t (t after every earlier call)."""
        return self.kind.advance(t, elements)

    def watermark(self, t: int) -> list[Result]:
        """No element stamped t or earlier arrives any more (a live input's clock): fire the
        time-driven instants through t. Event queries report on arrival: nothing to do."""
        return self.kind.watermark(t)

    def pass_time(self, t: int) -> list[Result]:
        """Time reaches t on the streamset with no event of this query's own (a partition
        hearing of the others')."""
        return self.kind.pass_time(t)

    def flush(self, until: int | None = None) -> list[Result]:
        """End of input: everything due through the flush end (or ``until``)."""
        return self.kind.flush(until)

    def flush_end(self) -> int | None:
        """Where the end-of-input flush would stop now (the close of the last window
        holding the last element read): the instants up to it are in the answer whatever
        comes later. None before any element of a stream the windows read."""
        ends = [
            op.flush_end(self.last_arrival[stream])
            for stream, op in self.physical.windows.values()
            if stream in self.last_arrival
        ]
        return max(ends, default=None)

    def settled(self, through: int) -> int:
        """The time up to which no more results can come, given the input through
        ``through`` (a query network releases derived elements up to it)."""
        return self.kind.settled(through)

    # --- the windows --------------------------------------------------------------------
    def insert(
        self, t: int, elements: Sequence[StreamElement],
        encoded: Sequence[tuple[tuple[int, int, int], ...]] | None = None,
    ) -> Arrivals:
        """The elements stamped t into the windows over their streams (expired ones out
        first: what a window holds stays within one window); ``encoded``: each element's
        graph as ``element`` gives it, when the caller has it already (EP-SPARQL)."""
        windows = self.windows
        for window in windows.values():
            window.advance(t)
        admitted = set()
        readers = self.readers_of
        for number, e in enumerate(elements):
            stream = e.stream
            self.last_arrival[stream] = t
            triples = self.element(e) if encoded is None else encoded[number]
            for name in readers.get(stream, ()):
                if windows[name].insert(t, triples):
                    admitted.add(name)
        return Arrivals(frozenset(admitted))

    def element(self, element: StreamElement) -> tuple[tuple[int, int, int], ...]:
        """An element's graph as ids; under RDFS, its closure under the background schema,
        each triple expanded once by lookups (sepia.reasoning.elements): windows count
        triples per element, so a derived triple leaves with its last supporting element."""
        return self.closed(encode_triples(self.dictionary, element.triples),
                           lambda: element.graph)

    def closed(
        self, triples: Sequence[tuple[int, int, int]], named: Callable[[], str]
    ) -> tuple[tuple[int, int, int], ...]:
        """An element's encoded graph, closed under RDFS when it runs; ``named`` says
        which element it is, asked only for the error."""
        closure = self.closure
        if closure is None:
            return tuple(triples)
        if closure.foreign_schema(triples):
            raise Unsupported(f"schema triples inside stream element {named()} under RDFS")
        return closure.close(triples)

    def timestamp(self, s: Term, p: Term, o: Term) -> ox.Literal | None:
        """C-SPARQL timestamp(?s, ?p, ?o): the time of the most recent element, among the
        query's windows at the evaluation instant, that holds the triple."""
        lookup = self.dictionary.lookup
        triple = tuple(lookup(term_to_nt(x)) for x in (s, p, o))
        times = [
            next((time for time, triples in reversed(w.elements) if triple in triples), None)
            for w in self.windows.values()
        ]
        latest = max((x for x in times if x is not None), default=None)
        return None if latest is None else integer_literal(latest)

    # --- patterns over one event's graph ------------------------------------------------
    def event_rows(self, plan: po.PhysicalPlan, time: int, triples: tuple) -> list[Row]:
        """A pattern over one event graph stamped ``time``, cached: the answer depends on
        nothing else (but the versions of the background graphs in force then)."""
        key = (id(plan), self.background.state(time), triples)
        found = self._event_cache.get(key)
        if found is None:
            if len(self._event_cache) > EVENT_CACHE:
                self._event_cache.clear()
            reader = Reader.of_event(self, time, triples)
            names = self.physical.slots.names
            hidden = [i for i, n in enumerate(names) if not self.physical.slots.visible(n)]
            rows = {_without(row, hidden): None for row in po.run(plan, reader)}
            found = self._event_cache[key] = self.in_partition(list(rows))
        return found

    def new_step(self) -> None:
        """A new step: the events of the last one are no longer read."""
        self._readers = {}

    def gpm(self, plan: po.PhysicalPlan, event: StreamElement) -> list[Row]:
        """A GPM's plan over one event's graph (background graphs as they were then). The
        rows of the plan under its FILTERs are shared through ``PhysicalQuery.gpm_rows``
        (PARTITION BY matches each event in the router, then in its partitions)."""
        conditions = []
        while isinstance(plan, po.Select):
            conditions.append(plan.condition)
            plan = plan.inner
        shared = self.physical.gpm_rows
        if len(shared.rows) > shared.LIMIT:
            shared.rows.clear()
        key = (shared.plan_key(plan), self.background.state(event.time), id(event))
        found = shared.rows.get(key)
        if found is None or found[0] is not event:
            found = shared.rows[key] = (event, po.run(plan, self._event_reader(event)))
        rows = found[1]
        for condition in reversed(conditions):  # the innermost first, as run() would
            if rows:
                rows = [r for r, ok in zip(rows, condition.truths(rows), strict=True) if ok]
        return self.in_partition(list(rows))

    def _event_reader(self, event: StreamElement) -> Reader:
        """The view of one event's graph, encoded (and closed under RDFS) once for all the
        patterns matched on it in one step (``_readers`` holds the step's events)."""
        kept = self._readers.get(id(event))
        if kept is not None and kept[0] is event:
            return kept[1]
        reader = Reader.of_event(self, event.time, self.element(event))
        self._readers[id(event)] = (event, reader)
        return reader

    # --- one evaluation -----------------------------------------------------------------
    def next_change(self, t: int) -> int | None:
        """The first instant after t at which what an evaluation reads changes with nothing
        arriving: a window's oldest element leaves, or a background graph's next version
        starts. Until then an instant that streamed out nothing is followed by more such
        instants (R2S makes nothing of an answer it just made; NON EMPTY fails again), so
        the report loops leap over them: a gap in time costs nothing. A CONSTRUCT with
        blank nodes or a call to RAND(), BNODE() etc. answers anew at every instant while its
        answer is not empty (``answers_anew``)."""
        if self.anew and self.previous:
            return t + 1
        changes = [c for w in self.windows.values() if (c := w.next_eviction()) is not None]
        for graph in self.background.varying.values():
            later = bisect.bisect_right(graph.times, t)
            if later < len(graph.times):
                changes.append(graph.times[later])
        return min(changes, default=None)

    def evaluate(self, t: int) -> list[Result]:
        """The query at instant t: NON EMPTY checked, the plan run (or the maintained
        answer updated), the kind's solutions kept, the form and streaming operator applied."""
        self.now = t
        for window in self.windows.values():
            window.advance(t)
        schedule = self.physical.schedule
        if schedule is not None and not all(
            any(self.windows[w] for w in schedule.scope(c)) for c in schedule.conditions
        ):
            return []
        if self.delta is not None:
            self.previous, out = self._delta_step(Reader(self))
            return self.stream_out(t, out)
        reader = Reader(self)
        rows = self.kind.solutions(po.run(self.physical.root, reader), t)
        now = self.form.answer(rows, reader.graph)
        self.previous, out = r2s.step(self.operator, self.previous, now)
        return self.stream_out(t, out)

    def stream_out(self, t: int, bag: Counter[tuple]) -> list[Result]:
        """The bag the streaming operator lets out at t, as results."""
        return self.form.results(t, bag, "-" if self.operator is qa.DStream else "+")

    def _maintained(self) -> MaintainedAnswer | MaintainedGroups | None:
        """The answer maintained by delta evaluation (``r2r.delta``), or the GROUP BY
        maintained from the same delta (``r2r.aggregates``), where they apply."""
        physical = self.physical
        if self.background.varying:
            return None
        slots = physical.slots
        kept = [i for i, n in enumerate(slots.names) if slots.visible(n) or n in HIDDEN]
        delta = plan_of(self.query.form, physical.root, self.events_query)
        if not isinstance(delta, str):
            return MaintainedAnswer(delta, kept, len(slots.names))
        form, root = self.query.form, physical.root
        grouped = aggregates.plan_of(form, root, self.events_query, self._empty_graph)
        if isinstance(grouped, str):
            return None
        return MaintainedGroups(grouped, kept, len(slots.names), self.dictionary)

    def _empty_graph(self, ref: po.GraphRef) -> bool:
        """Whether a static background graph is empty (a C-SPARQL window merged with it is
        then the window alone)."""
        return isinstance(ref, po.BackgroundGraph) and self.background.empty(ref.name)

    def _delta_step(self, reader: Reader) -> tuple[Counter[tuple], Counter[tuple]]:
        """(state, output) of the streaming operator from the maintained answer's change."""
        delta = self.delta
        assert delta is not None
        change = delta.update(reader.graph, lambda node: po.run(node, reader))
        restored = self.operator is not qa.RStream and self.previous is not delta.answer
        if change is None or restored:  # rebuilt, or another previous answer: compare whole
            return r2s.step(self.operator, self.previous, delta.answer)
        return r2s.delta_step(self.operator, delta.answer, *change)

    def path_relations(self) -> PathRelations:
        """The nested paths' relations (a cache of the windows' rows, not state)."""
        if self._paths is None:
            self._paths = PathRelations(self.dictionary, len(self.physical.slots.names))
        return self._paths

    def fallback_store(self) -> FallbackStore:
        """pyoxigraph's store for the fallback sub-patterns (a cache, not state)."""
        if self._fallback is None:
            physical = self.physical
            self._fallback = FallbackStore(
                self.background, physical.default_graph, physical.slots, self.dictionary,
                self.query.base,
            )
        return self._fallback

    # --- state ------------------------------------------------------------------------
    def state_size(self) -> dict[str, int]:
        """The engine's own counters of what it holds (rows), for memory bounds."""
        return {
            "window_elements": sum(len(w) for w in self.windows.values()),
            "window_triples": sum(len(w.graph) for w in self.windows.values()),
            "previous_answer": sum(self.previous.values()),
            "maintained_rows": 0 if self.delta is None else len(self.delta),
            "aggregate_state": (
                self.delta.state_rows() if isinstance(self.delta, MaintainedGroups) else 0
            ),
            "runs": self.kind.runs_held(),
            "dropped_runs": self.kind.dropped,
        }

    @property
    def timed(self) -> bool:
        """Whether time alone, with no event of its own, can change what it holds (so
        ``deadline`` can be other than None)."""
        return self.kind.timed

    def deadline(self) -> int | None:
        """The first instant at which a step with no event could change the state."""
        return self.kind.deadline()

    def waiting_since(self) -> int | None:
        """The end of the oldest run that waits for the next event to complete a match."""
        return self.kind.waiting_since()

    def idle(self) -> bool:
        """Whether the query holds nothing a fresh one would not: no window content,
        previous answer or state of its kind."""
        return (
            self.kind.idle()
            and not any(len(w) for w in self.windows.values())
            and not self.previous
        )

    def snapshot(self, windows: bool = True) -> Snapshot:
        """Every piece of state, as rows of plain values (JSON or Arrow can hold them):
        window contents, the previous answer (count first), the automaton's runs and the B
        matches its guards look back at, the clock and the number of matches so far.
        ``windows=False``: no window rows (a caller taking them as ``window_columns``)."""
        kind = self.kind
        clock = [("low", kind.low), ("clock", self.clock), ("matched", kind.matched)]
        clock.append(("dropped", kind.dropped))
        own = kind.rows()
        shown = self.windows.items() if windows else ()
        return {
            "windows": [(str(n), *row) for n, w in shown for row in w.rows()],
            "previous": [(count, *key) for key, count in self.previous.items()],
            "runs": own.get("runs", []),
            "history": own.get("history", []),
            "clock": clock + [(f"arrival {s}", t) for s, t in self.last_arrival.items()],
            "consumption": own.get("consumption", []),
            "occurrences": own.get("occurrences", []),
            "starts": own.get("starts", []),
        }

    def window_columns(self) -> dict[str, WindowColumns]:
        """Each window's content (``snapshot``'s window rows) as columns, by name: a live
        Spark step stores a window in time chunks and writes those that changed, without a
        Python row per triple."""
        return {str(n): w.columns() for n, w in self.windows.items()}

    def restore(self, snapshot: Snapshot) -> None:
        """Resume from ``snapshot()`` rows (the dictionary is restored by its owner)."""
        for name, (_, op) in self.physical.windows.items():
            rows = [row[1:] for row in snapshot["windows"] if row[0] == str(name)]
            self.windows[name] = WindowState.from_rows(op, rows)
        self.previous = Counter({tuple(key): count for count, *key in snapshot["previous"]})
        clock = dict(snapshot["clock"])
        low, self.clock, matched, dropped = (
            clock.pop(k) for k in ("low", "clock", "matched", "dropped")
        )
        self.last_arrival = {k.removeprefix("arrival "): t for k, t in clock.items()}
        self.kind.restore(snapshot, low, matched, dropped)
        self._fallback = None
        self._paths = None


def _without(row: Row, slots: list[int]) -> Row:
    """A row with ``slots`` unbound (an event mapping binds only the query's variables)."""
    return tuple(None if i in slots else v for i, v in enumerate(row))
