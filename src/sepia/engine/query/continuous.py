"""One query evaluated continuously and incrementally (RSP-QL seed 004, Definition 24).

Time advances in steps, one per distinct arrival time: ``advance(t, elements)`` first fires
the evaluations due strictly before t (nothing arrives there, so only time-driven report
policies have any), then inserts the elements stamped t into the windows that admit them,
then fires t itself if the policy says so. ``flush`` ends a finite input the way
semantics.md says: time runs on to the close of the last window holding the last element
(or to ``until``). Each evaluation evicts expired elements, checks NON EMPTY on the windows
it keeps, runs the physical plan, applies the query form and the streaming operator.

All state is rows (architecture principle 3), see ``snapshot`` and ``restore``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from weakref import WeakKeyDictionary

import pyoxigraph as ox

from sepia.algebra import query as qa
from sepia.engine.background import Background
from sepia.engine.cep.automaton import Automaton, matches
from sepia.engine.cep.epsparql import batches
from sepia.engine.cep.events import (
    Consumption,
    EventMapping,
    Inputs,
    Notes,
    OccurrenceHistory,
    completed,
    consumes,
    current,
    interval_filter,
)
from sepia.engine.cep.runs import (
    Batch,
    Completed,
    Run,
    at_end_of_input,
    bounded,
    initial,
    row_run,
    run_row,
    step,
)
from sepia.engine.codec import Codec, encode_triples
from sepia.engine.graph import TripleIndex
from sepia.engine.plan.planner import PhysicalQuery, Unsupported, plan
from sepia.engine.r2r import aggregates
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.aggregates import MaintainedGroups
from sepia.engine.r2r.delta import MaintainedAnswer, plan_of
from sepia.engine.r2r.expressions import calls
from sepia.engine.r2r.fallback import FallbackStore
from sepia.engine.r2r.paths import PathRelations
from sepia.engine.r2s import streams as r2s
from sepia.engine.r2s.construct import fresh_blank
from sepia.engine.rows import FROM, HIDDEN, MATCH, TO, Row, interval_slots, merge
from sepia.engine.s2r.report import Arrivals
from sepia.engine.s2r.windows import WindowState
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.order import ordered
from sepia.rdf.results import Op, Result
from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import Term, term_to_nt
from sepia.rdf.time import TimeKind
from sepia.reasoning.elements import ElementClosure
from sepia.semantics.describe import bounded_description
from sepia.semantics.sparql import TIMESTAMP, integer_literal

Snapshot = dict[str, list[tuple]]
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
    ) -> None:
        self.name = name
        self.max_runs = max_runs
        """At most this many automaton runs are kept (``--max-runs``); drops are counted."""
        self.dropped = 0
        self.dictionary = dictionary
        if rdfs or query.entailment is qa.Entailment.RDFS:
            background = background.entailed()
        self.background = background
        self._closure = (
            None if background.schema is None else ElementClosure(background.schema, dictionary)
        )
        named = background.names
        if background.schema is not None and calls(query.pattern, "TIMESTAMP"):
            raise Unsupported("C-SPARQL timestamp() under RDFS entailment")
        functions = {TIMESTAMP: self._timestamp}
        self.physical: PhysicalQuery = _planned(query, dictionary, named, functions)
        self.member = None if partition is None else self._member(partition)
        """PARTITION BY: (slot, id) every event pattern's match must bind (one partition)."""
        self.now = 0
        """The instant being evaluated: the background graphs are read as they are then."""
        self.operator = r2s.operator_of(query)
        self.events_query = bool(self.physical.automaton or self.physical.events)
        """Push-based: only solutions carrying a match reported at t count at t."""
        self.dense = self.events_query and (
            isinstance(query.form, qa.Ask) or self.operator is not qa.RStream
        )
        """Evaluated at every arrival, matches or not (as the reference): an ASK answers
        false, an IStream / DStream compares with an empty answer."""
        automaton = self.physical.automaton
        if self.dense and automaton is not None and automaton.states[-1].negated:
            raise Unsupported(
                "ASK, IStream or DStream over a SPAseq sequence ending in a negation (its "
                "matches are reported at a horizon, after that instant was evaluated)"
            )
        self.windows = {n: WindowState(op) for n, (_, op) in self.physical.windows.items()}
        self._readers_of: dict[str, list[ox.NamedNode]] = {}
        """The names of the windows over each stream."""
        for name, (stream, _) in self.physical.windows.items():
            self._readers_of.setdefault(stream, []).append(name)
        self._streams = frozenset(self._readers_of)
        """The streams the query's windows read."""
        self._declared = frozenset(s.iri.value for s in query.dataset.streams)
        """The query's streamset (FROM STREAM); empty: every stream (EP-SPARQL)."""
        self.previous: Counter[tuple] = Counter()
        self.low: int | None = None
        """The first arrival on a stream the query's windows read: no instant before it."""
        self.clock: int | None = None
        """The last instant whose evaluations are done."""
        self.last_arrival: dict[str, int] = {}
        self._fallback: FallbackStore | None = None
        self._paths: PathRelations | None = None
        automaton = self.physical.automaton
        width = len(self.physical.slots.names)
        self.permanent = frozenset() if automaton is None else initial(automaton, width)
        self.runs: set[Run] = set(self.permanent)
        self.matched = 0
        """How many matches the automaton completed (numbers them)."""
        self.history: dict[int, list[tuple[int, Row]]] = {}
        """Matches of negated elements, by state, for the guards that look back at them."""
        self._completed: list[list[Row]] = [[]]
        """The rows each MATCH gives at the instant being evaluated (by its number)."""
        self._readers: dict[int, tuple[StreamElement, _Reader]] = {}
        self._event_cache: dict[tuple, list[Row]] = {}
        events = self.physical.events
        leaves = self.physical.occurrences
        self.consumption = (
            Consumption(self._serve_key, leaves)
            if events is not None and consumes(events) else None
        )
        """CHRONOLOGICAL / RECENT: the occurrences consumed so far (and EP-SPARQL's)."""
        self.occurrences = (
            None if events is None or not leaves or self.consumption is not None
            else OccurrenceHistory(events, leaves, self.physical.horizon)
        )
        """EP-SPARQL: every element so far, and what the pattern's operands made of them."""
        self.starts = Notes(lambda e: e.start)
        """Event patterns over windows: where each element shown starts (its interval)."""
        self._delta = self._maintained()
        self._quiet: tuple[int, int | None] = (0, 0)
        """(a, q): the report policy makes nothing due in (a, q) (q None: nothing after a).
        A fact about the schedule alone, so it survives a restore."""

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
        self._readers = {}
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
        rows = [r for r in self._gpm(leaf, element) if r[slot] is not None and r[slot] not in found]
        for condition in conditions:
            if rows:
                rows = [r for r, ok in zip(rows, condition.truths(rows), strict=True) if ok]
        return {r[slot] for r in rows}

    def _in_partition(self, rows: list[Row]) -> list[Row]:
        """In one partition, only the matches binding its value count."""
        if self.member is None:
            return rows
        slot, value = self.member
        return [row for row in rows if row[slot] == value]

    def in_streamset(self, elements: Sequence[StreamElement]) -> bool:
        """Whether an element of the query's streamset is among ``elements``: only those
        make an instant of its time (SPAseq's strict contiguity, WITHIN)."""
        declared = self._declared
        return any(not declared or e.stream in declared for e in elements)

    # --- time -------------------------------------------------------------------------
    def advance(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """Everything due up to t, given the elements stamped t (t after every earlier call).

        Only elements of the streams the query's windows read move the query's clock: an
        instant after the last of them may lie past the end-of-input flush, so it waits
        for the next such element (which proves it does not) or for ``flush``.
        """
        if self.physical.automaton is not None:
            if not self.in_streamset(elements):
                return []  # not an instant of the query's streamset: its time stays
            return self._match(t, elements)
        if self.physical.trees:
            return self._several(t, elements)
        if self.physical.events is not None:
            return self._push(t, elements)
        streams = self._streams
        relevant = [e for e in elements if e.stream in streams]
        results = self._once()
        if not relevant:
            return results
        if self.clock is not None and t <= self.clock:
            raise ValueError(f"time went back: {t} after {self.clock}")
        if self.low is None:
            self.low = t
        results += self._between(t)
        arrived = self._insert(t, relevant)
        if self._due_at(t, arrived):
            results += self._evaluate(t)
        self.clock = t
        return results

    def watermark(self, t: int) -> list[Result]:
        """No element stamped t or earlier arrives any more (a live input's clock): fire the
        time-driven instants through t. Event queries report on arrival: nothing to do."""
        if self.physical.automaton is not None or self.physical.events is not None:
            return []
        results = self._once()
        if self.low is None or (self.clock is not None and t <= self.clock):
            return results
        results += self._between(t + 1)
        self.clock = t
        return results

    # --- event automata ---------------------------------------------------------------
    def _match(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """Push-based: feed the automaton the events stamped t; report what completes."""
        automaton = self.physical.automaton
        assert automaton is not None
        streamset_event = self.in_streamset(elements)
        self._readers = {}
        candidates = [list(matches(s.bop, elements, self._gpm)) for s in automaton.states]
        batch = Batch(t, candidates, streamset_event, self.history)
        runs, completed = step(automaton, self.runs, batch, self.physical.within)
        self.runs, dropped = bounded(runs, self.permanent, self.max_runs)
        self.dropped += dropped
        self._remember(t, candidates)
        if streamset_event:
            self.clock = t
        return self._report(completed, t)

    def pass_time(self, t: int) -> list[Result]:
        """Time reaches t on the streamset with no event of this query's own (a partition
        hearing of the others'): a tail negation may complete at its horizon, and the input
        now ends no earlier than t. Strict contiguity does not count such instants.
        EP-SPARQL under a horizon: occurrences past it are forgotten, all at once."""
        expiry = None if self.occurrences is None else self.occurrences.expiry()
        if expiry is not None and t >= expiry:
            self.occurrences.clear()  # type: ignore[union-attr]
        if self.physical.automaton is None or (self.clock is not None and t <= self.clock):
            return []
        results = self._match(t, [])
        self.clock = t
        return results

    def _push(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """Event patterns: after the elements stamped t enter the windows (EP-SPARQL: the
        occurrences), report the event mappings that end at t."""
        tree = self.physical.events
        assert tree is not None
        streams = {stream for stream, _ in self.physical.windows.values()}
        relevant = [e for e in elements if e.stream in streams]
        by_window = {n: stream for n, (stream, _) in self.physical.windows.items()}
        if self.occurrences is not None and elements:  # EP-SPARQL reads every stream
            relevant = list(elements)
            batch = [(e.start, e.end, self._element(e)) for e in relevant]
            self.occurrences.add(batch, elements[0].kind, self._inputs(t, elements[0].kind))
        if self.consumption is not None:  # re-evaluated at every instant, as the reference
            self._insert(t, relevant)
            for window in self.windows.values():
                window.advance(t)
            self.starts.admit(self.windows, by_window, relevant)
            named = [
                (e.start, e.end, e.stream, e.graph, self._element(e))
                for e in (elements if self.physical.occurrences else ())
            ]
            self.consumption.admit(self.windows, by_window, relevant, named, self._event_rows)
            kind = elements[0].kind if elements else TimeKind.ABSTRACT
            found = self.consumption.completed(tree, self._inputs(t, kind))
        elif not relevant:
            found = set()
        else:
            self._insert(t, relevant)
            self.starts.admit(self.windows, by_window, relevant)
            found = completed(tree, self._inputs(t, relevant[0].kind))
        self.clock = t
        self._completed = [self._stamped(found, 0)]
        results = self._evaluate(t) if found or self.dense else []
        self._completed = [[]]
        return results

    def _several(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """Several MATCHes: after the elements stamped t enter the windows, every match
        each MATCH has at t, in its own interval slots; a solution is pushed at t when the
        last match it holds ends at t (``_combined``), as the reference's."""
        trees = self.physical.trees
        streams = {stream for stream, _ in self.physical.windows.values()}
        relevant = [e for e in elements if e.stream in streams]
        every: list[set[EventMapping]] = [set() for _ in trees]
        if relevant:
            self._insert(t, relevant)
            by_window = {n: stream for n, (stream, _) in self.physical.windows.items()}
            self.starts.admit(self.windows, by_window, relevant)
            inputs = self._inputs(t, relevant[0].kind)
            every = [current(tree, inputs) for tree in trees]
        self.clock = t
        if not self.dense and not any(m[2] == t for found in every for m in found):
            return []
        self._completed = [self._stamped(found, k) for k, found in enumerate(every)]
        results = self._evaluate(t)
        self._completed = [[]]
        return results

    def _stamped(self, found: set[EventMapping], number: int) -> list[Row]:
        """Event mappings as rows of the ``number``-th MATCH, the interval in its slots;
        by interval, then mapping: the order of results at t does not vary between runs."""
        slots = self.physical.slots
        start, end = (slots.index(n) for n in interval_slots(number))
        return [
            tuple(a if i == start else b if i == end else v for i, v in enumerate(row))
            for row, a, b in sorted(found, key=lambda m: (m[1], m[2], _row_key(m[0])))
        ]

    def _combined(self, rows: list[Row], t: int) -> list[Row]:
        """Several MATCHes: each solution as one match, its interval covering those of the
        matches it holds, kept when the last of them ends at t (pushed once, when its last
        event arrives)."""
        slots = self.physical.slots
        pairs = [
            tuple(slots.index(n) for n in interval_slots(k))
            for k in range(len(self.physical.trees))
        ]
        start, end = slots.index(FROM), slots.index(TO)
        kept = []
        for row in rows:
            held = [(row[a], row[b]) for a, b in pairs if row[b] is not None]
            if not held or max(b for _, b in held) != t:
                continue
            values = list(row)
            for a, b in pairs:
                values[a] = values[b] = None
            values[start], values[end] = min(a for a, _ in held), t
            kept.append(tuple(values))
        return kept

    def _inputs(self, t: int, kind: TimeKind) -> Inputs:
        """What an event pattern reads at t (filters see times of ``kind``)."""
        keep = interval_filter(self.physical.slots, self.dictionary, kind)
        return Inputs(
            t, self.windows, self._event_rows, self.occurrences, keep, self.starts,
            self.consumption,
        )

    def _event_rows(self, plan: po.PhysicalPlan, time: int, triples: tuple) -> list[Row]:
        """A pattern over one event graph stamped ``time``, cached: the answer depends on
        nothing else (but the versions of the background graphs in force then)."""
        key = (id(plan), self.background.state(time), triples)
        found = self._event_cache.get(key)
        if found is None:
            if len(self._event_cache) > EVENT_CACHE:
                self._event_cache.clear()
            reader = _Reader(self, time)
            reader.event_graph, reader.event_triples = TripleIndex(triples), triples
            names = self.physical.slots.names
            hidden = [i for i, n in enumerate(names) if not self.physical.slots.visible(n)]
            rows = {_without(row, hidden): None for row in po.run(plan, reader)}
            found = self._event_cache[key] = self._in_partition(list(rows))
        return found

    def _timestamp(self, s: Term, p: Term, o: Term) -> ox.Literal | None:
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

    def _serve_key(self, m: EventMapping) -> tuple:
        """``sepia.semantics.rsepql.serve_key`` on an encoded derivation: the order
        consumption serves them in (interval, then bindings by variable name and N-Triples
        text, then support, earliest occurrences first)."""
        row, start, end, support = m  # type: ignore[misc]
        names, decode = self.physical.slots.names, self.dictionary.decode
        bound = tuple((names[i], str(decode(v))) for i, v in enumerate(row) if v is not None)
        return (end, start, bound, tuple(sorted(support)))

    def _gpm(self, plan: po.PhysicalPlan, event: StreamElement) -> list[Row]:
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
        return self._in_partition(list(rows))

    def _event_reader(self, event: StreamElement) -> _Reader:
        """The view of one event's graph, encoded (and closed under RDFS) once for all the
        patterns matched on it in one step (``_readers`` holds the step's events)."""
        kept = self._readers.get(id(event))
        if kept is not None and kept[0] is event:
            return kept[1]
        reader = _Reader(self, event.time)
        reader.event_triples = self._element(event)
        reader.event_graph = TripleIndex(reader.event_triples)
        self._readers[id(event)] = (event, reader)
        return reader

    def _remember(self, t: int, candidates: list[list[Row]]) -> None:
        """Keep the B matches a ``; !B ;`` guard may look back at, for as long as WITHIN
        lets it (without WITHIN, as long as the input)."""
        automaton, within = self.physical.automaton, self.physical.within
        assert automaton is not None
        for i, state in enumerate(automaton.states):
            if state.negated and i < len(automaton) - 1:
                seen = self.history.setdefault(i, [])
                seen += [(t, row) for row in candidates[i]]
                if within is not None:
                    self.history[i] = [(s, r) for s, r in seen if s >= t - within.width - 1]

    def _report(self, completed: list[Completed], now: int | None = None) -> list[Result]:
        """Evaluate the query over the matches completed, per report time, in time order
        (and at ``now`` with none, when the answer is not empty without a match: ``dense``)."""
        results: list[Result] = []
        times = {c.reported_at for c in completed}
        if self.dense and now is not None:
            times.add(now)
        for reported_at in sorted(times):
            due = sorted((c for c in completed if c.reported_at == reported_at), key=self._order)
            self._completed = [[row for c in due for row in self._rows(c)]]
            results += self._evaluate(reported_at)
        self._completed = [[]]
        return results

    def _order(self, match: Completed) -> tuple:
        """Matches reported at one instant are numbered by start, mapping, then iterations,
        the mappings compared by their terms' text: ids depend on the order terms were
        first seen, which a run resumed from a snapshot does not repeat (it numbered two
        matches the other way round: tests/engine/test_local_runtime.py)."""
        text = self.dictionary.decode_text

        def key(row: Row) -> tuple[str, ...]:
            return tuple("" if v is None else text(v) for v in row)

        return (match.start, key(match.mu), tuple(key(it) for it in match.iterations))

    def _horizons(self, automaton: Automaton) -> list[Completed]:
        if self.clock is None:
            return []
        done = at_end_of_input(automaton, self.runs, self.clock, self.physical.within)
        self.runs = set(self.permanent)
        return done

    def _rows(self, match: Completed) -> list[Row]:
        """One row per Kleene iteration (numbered as one match), else the match's row."""
        self.matched += 1
        slots = self.physical.slots
        hidden = [slots.index(h) for h in (FROM, TO, MATCH)]

        def row(mu: Row, number: int | None) -> Row:
            values = list(mu)
            for i, v in zip(hidden, (match.start, match.end, number), strict=True):
                values[i] = v
            return tuple(values)

        if match.iterations:
            return [row(merge(match.mu, it), self.matched) for it in match.iterations]
        return [row(match.mu, None)]

    def flush(self, until: int | None = None) -> list[Result]:
        """End of input: fire everything due through the flush end (or ``until``); a tail
        negation's runs complete at the last event time (or their WITHIN horizon)."""
        automaton = self.physical.automaton
        if automaton is not None:
            return self._report(self._horizons(automaton))
        if self.physical.events is not None:
            return []  # pushed as they complete: nothing waits for the end
        results = self._once()
        if self.low is None:
            return results
        end = until if until is not None else self.flush_end()
        assert end is not None  # a window admitted an element (``low``)
        results += self._between(end + 1)
        self.clock = max(end, self.clock or end)
        return results

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

    def _once(self) -> list[Result]:
        """A query without a report policy is evaluated once, at 0 (the reference's choice)."""
        if self.physical.schedule is not None or self.clock is not None:
            return []
        self.clock = 0
        return self._evaluate(0)

    def _between(self, before: int) -> list[Result]:
        """The due instants after the clock and before ``before``, where nothing arrives."""
        schedule = self.physical.schedule
        if schedule is None or self.low is None:
            return []
        after = self.low - 1 if self.clock is None else max(self.clock, self.low - 1)
        quiet_from, quiet_until = self._quiet
        if quiet_from <= after and (quiet_until is None or before <= quiet_until):
            return []  # asked at every arrival: nothing is due until the next window close
        results = []
        while (due := schedule.next_due(after, before)) is not None and due < before:
            results += self._evaluate(due)
            after = due
        self._quiet = (after, due)
        return results

    def _due_at(self, t: int, arrived: Arrivals) -> bool:
        """Whether the arrival instant t is due (after ``_between(t)``: time-driven
        policies are then known quiet up to their next due instant)."""
        schedule = self.physical.schedule
        if schedule is None:
            return False
        quiet_from, quiet_until = self._quiet
        if schedule.time_driven and quiet_from < t and (quiet_until is None or t < quiet_until):
            return False
        return schedule.due_at(t, arrived)

    def _insert(self, t: int, elements: Sequence[StreamElement]) -> Arrivals:
        windows = self.windows
        for window in windows.values():
            window.advance(t)  # expire first: what a window holds stays within one window
        admitted = set()
        readers = self._readers_of
        for e in elements:
            stream = e.stream
            self.last_arrival[stream] = t
            triples = self._element(e)
            for name in readers.get(stream, ()):
                if windows[name].insert(t, triples):
                    admitted.add(name)
        return Arrivals(frozenset(admitted))

    def _element(self, element: StreamElement) -> tuple[tuple[int, int, int], ...]:
        """An element's graph as ids; under RDFS, its closure under the background schema,
        each triple expanded once by lookups (sepia.reasoning.elements): windows count
        triples per element, so a derived triple leaves with its last supporting element."""
        triples = encode_triples(self.dictionary, element.triples)
        closure = self._closure
        if closure is None:
            return tuple(triples)
        if closure.foreign_schema(triples):
            raise Unsupported(f"schema triples inside stream element {element.graph} under RDFS")
        return closure.close(triples)

    # --- one evaluation ---------------------------------------------------------------
    def _evaluate(self, t: int) -> list[Result]:
        self.now = t
        for window in self.windows.values():
            window.advance(t)
        schedule = self.physical.schedule
        if schedule is not None and not all(
            any(self.windows[w] for w in schedule.scope(c)) for c in schedule.conditions
        ):
            return []
        if self._delta is not None:
            self.previous, out = self._delta_step(_Reader(self))
            return self._results(t, out)
        reader = _Reader(self)
        rows = po.run(self.physical.root, reader)
        if self.physical.trees:
            rows = self._combined(rows, t)
        elif self.events_query:  # a solution without a match at t is not pushed at t
            matched = self.physical.slots.index(TO)
            rows = [r for r in rows if r[matched] is not None]
        now = self._answer(rows, reader)
        self.previous, out = r2s.step(self.operator, self.previous, now)
        return self._results(t, out)

    def _maintained(self) -> MaintainedAnswer | MaintainedGroups | None:
        """The answer maintained by delta evaluation (``engine.delta``), or the GROUP BY
        maintained from the same delta (``engine.aggregates``), where they apply."""
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
        return isinstance(ref, po.BackgroundGraph) and not self.background.graph(ref.name)

    def _delta_step(self, reader: _Reader) -> tuple[Counter[tuple], Counter[tuple]]:
        """(state, output) of the streaming operator from the maintained answer's change."""
        delta = self._delta
        assert delta is not None
        change = delta.update(reader.graph, lambda node: po.run(node, reader))
        restored = self.operator is not qa.RStream and self.previous is not delta.answer
        if change is None or restored:  # rebuilt, or another previous answer: compare whole
            return r2s.step(self.operator, self.previous, delta.answer)
        return r2s.delta_step(self.operator, delta.answer, *change)

    def _answer(self, rows: list[Row], reader: _Reader) -> Counter[tuple]:
        """The bag the query form makes of the solutions (DESCRIBE: a set per interval)."""
        at = [self.physical.slots.index(h) for h in (FROM, TO)] if self.events_query else []
        match self.query.form:
            case qa.Ask():
                return Counter({(bool(rows),): 1})
            case qa.Construct(template):
                return Counter(
                    (*t, *(row[i] for i in at))
                    for row in rows
                    for t in self._instantiate(template, row)
                )
            case qa.Describe(resources):
                described = (
                    (*t, *(row[i] for i in at))
                    for row in rows
                    for t in self._describe(resources, row, reader)
                )
                return Counter(dict.fromkeys(described, 1))
            case _:
                slots = self.physical.slots
                kept = [i for i, n in enumerate(slots.names) if slots.visible(n) or n in HIDDEN]
                return Counter(tuple(r[i] for i in kept) for r in rows)

    def _instantiate(self, template, row: Row) -> set[tuple[int, int, int]]:
        """The template's triples under one solution (each once), unbound ones left out;
        its blank nodes fresh for this solution (SPARQL 16.2, ``construct.fresh_blank``)."""
        slots, encode = self.physical.slots, self.dictionary.encode
        fresh: dict[str, int] = {}
        triples = set()
        for pattern in template:
            ids = [
                row[slots.index(x.value)]
                if isinstance(x, ox.Variable)
                else fresh_blank(self.dictionary, fresh, x.value)
                if isinstance(x, ox.BlankNode)
                else encode(x)
                for x in (pattern.subject, pattern.predicate, pattern.object)
            ]
            if None not in ids and self._well_placed(ids):
                triples.add(tuple(ids))
        return triples

    def _describe(self, resources: tuple, row: Row, reader: _Reader) -> set[tuple[int, int, int]]:
        """DESCRIBE's triples for one solution (``sepia.semantics.describe``): the concise
        bounded description of the IRIs named and the terms bound to the variables named
        (``*``: every variable), over the default graph and every window's graph."""
        slots, decode = self.physical.slots, self.dictionary.decode
        encode = self.dictionary.encode
        ids = [
            row[slots.index(r.value)] if isinstance(r, ox.Variable) else encode(r)
            for r in resources
        ]
        if not resources:
            ids = [v for n, v in zip(slots.names, row, strict=True) if slots.visible(n)]
        nodes = [i for i in ids if i is not None and not isinstance(decode(i), ox.Literal)]
        default = self.physical.default_graph
        windows = (po.WindowGraph(w.name) for w in self.query.dataset.windows)
        graphs = [reader.graph(g) for g in (*default, *(w for w in windows if w not in default))]
        return bounded_description(
            nodes,
            lambda s: {t for g in graphs for t in g.match(s, None, None)},
            lambda i: isinstance(decode(i), ox.BlankNode),
        )

    def _well_placed(self, ids: list[int | None]) -> bool:
        s, p, _ = (self.dictionary.decode(i) for i in ids)  # type: ignore[arg-type]
        return not isinstance(s, ox.Literal) and isinstance(p, ox.NamedNode)

    def _results(self, t: int, bag: Counter[tuple]) -> list[Result]:
        if not bag:
            return []
        op = "-" if self.operator is qa.DStream else "+"
        decode = self.dictionary.decode
        match self.query.form:
            case qa.Ask():
                return [Result(self.name, t, op, boolean=b) for (b,) in bag.elements()]
            case qa.Construct() | qa.Describe():
                graphs: dict[tuple, list[ox.Triple]] = {}
                for key in +bag:
                    graphs.setdefault(tuple(key[3:]), []).append(ox.Triple(*map(decode, key[:3])))  # type: ignore[misc]
                return [
                    Result(self.name, t, op, triples=tuple(sorted(g, key=str)),
                           interval=(at[0], at[1]) if at else None)
                    for at, g in sorted(graphs.items(), key=repr)
                ]
        slots = self.physical.slots
        names = [n for n in slots.names if slots.visible(n) or n in HIDDEN]
        rows = [_result(self.name, t, op, dict(zip(names, row, strict=True)), decode)
                for row in bag.elements()]
        return ordered(rows, self.query.order) if self.query.order else rows

    # --- state ------------------------------------------------------------------------
    def state_size(self) -> dict[str, int]:
        """The engine's own counters of what it holds (rows), for memory bounds."""
        return {
            "window_elements": sum(len(w) for w in self.windows.values()),
            "window_triples": sum(len(w.graph) for w in self.windows.values()),
            "previous_answer": sum(self.previous.values()),
            "maintained_rows": 0 if self._delta is None else len(self._delta),
            "aggregate_state": (
                self._delta.state_rows() if isinstance(self._delta, MaintainedGroups) else 0
            ),
            "runs": len(self.runs),
            "dropped_runs": self.dropped,
        }

    @property
    def timed(self) -> bool:
        """Whether time alone, with no event of its own, can change what it holds (so
        ``deadline`` can be other than None): runs under WITHIN expire and tail negations
        fire at their horizons; EP-SPARQL occurrences pass a ``getDURATION()`` horizon."""
        if self.occurrences is not None:
            return self.occurrences.horizon is not None
        return self.physical.automaton is not None and self.physical.within is not None

    def deadline(self) -> int | None:
        """Under WITHIN, the first instant at which a step with no event could change the
        state: a run reaching its horizon (a tail negation completes, others expire) or
        the oldest negated match a guard keeps falling out of reach. A match waiting on a
        final ``, !B`` needs the query's own next event, not time. EP-SPARQL under a
        horizon: when every occurrence held is past it."""
        within, automaton = self.physical.within, self.physical.automaton
        if self.occurrences is not None:
            return self.occurrences.expiry()
        if within is None or automaton is None:
            return None
        starts = [
            r.start
            for r in self.runs - self.permanent
            if r.start is not None and r.position < len(automaton)  # not a ", !B" wait
        ]
        seen = [t + 2 for kept in self.history.values() for t, _ in kept]  # see _remember
        return min((x + within.width for x in starts + seen), default=None)

    def waiting_since(self) -> int | None:
        """The end of the oldest run that waits for the next event (a ``, !B`` guard) to
        complete a match reported at or after its end, possibly before that event: a match
        past a final ``, !B``, or a tail negation still guarded by one."""
        automaton = self.physical.automaton
        if automaton is None:
            return None
        ends = [
            r.last
            for r in self.runs
            if r.last is not None
            and (
                r.position == len(automaton)
                or (automaton.states[r.position].negated and r.guard is not None)
            )
        ]
        return min(ends, default=None)

    def idle(self) -> bool:
        """Whether the query holds nothing a fresh one would not: no window content, runs
        beyond the initial ones, negated matches, previous answer, consumed events or
        EP-SPARQL occurrences."""
        return (
            self.runs == self.permanent
            and (self.occurrences is None or not self.occurrences.seen.elements)
            and not any(self.history.values())
            and not any(len(w) for w in self.windows.values())
            and not self.previous
            and (self.consumption is None or not self.consumption.rows())
        )

    def snapshot(self) -> Snapshot:
        """Every piece of state, as rows of plain values (JSON or Arrow can hold them):
        window contents, the previous answer (count first), the automaton's runs and the B
        matches its guards look back at, the clock and the number of matches so far."""
        clock = [("low", self.low), ("clock", self.clock), ("matched", self.matched)]
        clock.append(("dropped", self.dropped))
        return {
            "windows": [(str(n), *row) for n, w in self.windows.items() for row in w.rows()],
            "previous": [(count, *key) for key, count in self.previous.items()],
            "runs": [run_row(r) for r in self.runs],
            "history": [(i, t, *row) for i, seen in self.history.items() for t, row in seen],
            "clock": clock + [(f"arrival {s}", t) for s, t in self.last_arrival.items()],
            "consumption": [] if self.consumption is None else self.consumption.rows(),
            "occurrences": [] if self.occurrences is None else self.occurrences.rows(),
            "starts": self.starts.rows(),
        }

    def restore(self, snapshot: Snapshot) -> None:
        """Resume from ``snapshot()`` rows (the dictionary is restored by its owner)."""
        for name, (_, op) in self.physical.windows.items():
            rows = [row[1:] for row in snapshot["windows"] if row[0] == str(name)]
            self.windows[name] = WindowState.from_rows(op, rows)
        self.previous = Counter({tuple(key): count for count, *key in snapshot["previous"]})
        clock = dict(snapshot["clock"])
        self.low, self.clock, self.matched, self.dropped = (
            clock.pop(k) for k in ("low", "clock", "matched", "dropped")
        )
        width = len(self.physical.slots.names)
        self.runs = {row_run(row, width) for row in snapshot["runs"]}
        self.history = {}
        for state, time, *row in snapshot["history"]:
            self.history.setdefault(state, []).append((time, tuple(row)))
        self.last_arrival = {k.removeprefix("arrival "): t for k, t in clock.items()}
        if self.consumption is not None:
            self.consumption.restore(snapshot["consumption"], self._event_rows)
        self.starts.restore(snapshot.get("starts", []))
        if self.occurrences is not None:  # replayed: the operands' results are derived
            self.occurrences.clear()
            rows = snapshot.get("occurrences", [])
            kind = TimeKind(rows[0][-1]) if rows else TimeKind.ABSTRACT
            for batch in batches(row[:-1] for row in rows):
                end = batch[0][1]
                self.occurrences.add(batch, kind, self._inputs(end, kind))
        self._fallback = None
        self._paths = None


_PLANS: WeakKeyDictionary[Codec, dict[tuple[int, tuple], tuple[qa.Query, PhysicalQuery]]] = (
    WeakKeyDictionary()
)
"""Event queries' plans by the session's dictionary, then query object and named graphs."""


def _planned(
    query: qa.Query,
    dictionary: Dictionary,
    named: tuple[ox.NamedNode, ...],
    functions: dict,
) -> PhysicalQuery:
    """``plan``, shared by the event queries of one session compiled from one query object
    (PARTITION BY makes a ``ContinuousQuery`` per partition: planning each again cost a
    tenth of W4's and W6's time). A plan holds no state (frozen operators; expression
    caches are pure) and event queries never call ``functions`` (timestamp() is refused
    there), so the partitions may share one."""
    if not isinstance(dictionary, Codec):
        return plan(query, dictionary, named, functions)
    known = _PLANS.setdefault(dictionary, {})
    found = known.get((id(query), named))
    if found is not None and found[0] is query:
        return found[1]
    physical = plan(query, dictionary, named, functions)
    if physical.automaton is not None or physical.events is not None:
        known[(id(query), named)] = (query, physical)  # the query kept: its id stays its own
    return physical


_NO_EVENT = TripleIndex()
"""The event graph outside event matching: empty (a reader made per evaluation shares it;
event readers replace it, nothing adds to it)."""


class _Reader:
    """The plan's view of the query's data at an evaluation instant."""

    def __init__(self, engine: ContinuousQuery, time: int | None = None) -> None:
        self.engine = engine
        self.time = engine.now if time is None else time
        self.width = len(engine.physical.slots.names)
        self.event_graph = _NO_EVENT
        self.event_triples: tuple = ()
        """The event graph's triples: what a nested path over it depends on."""

    def matches(self, number: int) -> list[Row]:
        return self.engine._completed[number]

    def graph(self, ref: po.GraphRef) -> TripleIndex:
        if isinstance(ref, po.EventGraph):
            return self.event_graph
        if isinstance(ref, po.WindowGraph):
            return self.engine.windows[ref.name].graph
        return self.engine.background.graph(ref.name, self.time)

    def path(self, node: po.NestedPath) -> list[Row]:
        engine = self.engine
        if engine._paths is None:
            engine._paths = PathRelations(engine.dictionary, self.width)
        graphs = [self.graph(g) for g in node.graphs]
        version = tuple(
            engine.windows[g.name].version
            if isinstance(g, po.WindowGraph)
            else self.event_triples
            if isinstance(g, po.EventGraph)
            else engine.background.version(g.name, self.time)
            for g in node.graphs
        )
        return engine._paths.rows(node, graphs, version)

    def fallback(self, node: po.Fallback) -> list[Row]:
        engine = self.engine
        if engine._fallback is None:
            engine._fallback = FallbackStore(
                engine.background,
                engine.physical.default_graph,
                engine.physical.slots,
                engine.dictionary,
                engine.query.base,
            )
        return engine._fallback.rows(node, engine.windows, self.event_triples, self.time)


def _result(
    name: str, t: int, op: Op, values: dict[str, int | None], decode: Callable[[int], Term]
) -> Result:
    """One output row: the bound output variables decoded, an event match's interval and
    match number from the hidden slots."""
    start, end, number = (values.pop(h, None) for h in HIDDEN)
    binding = tuple((n, decode(v)) for n, v in values.items() if v is not None)
    interval = None if start is None or end is None else (start, end)
    match = None if number is None else f"m{number}"
    return Result(name, t, op, binding, interval=interval, match=match)


def _without(row: Row, slots: list[int]) -> Row:
    """A row with ``slots`` unbound (an event mapping binds only the query's variables)."""
    return tuple(None if i in slots else v for i, v in enumerate(row))


def _row_key(row: Row) -> tuple[int, ...]:
    """A row as a sortable key (unbound first)."""
    return tuple(-1 if v is None else v for v in row)
