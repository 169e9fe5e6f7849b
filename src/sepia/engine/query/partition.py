"""PARTITION BY ?v (language.md 4b): an event query matched separately within each value.

``PartitionedQuery`` keeps one ``ContinuousQuery`` per value of ?v, made when an event first
joins that partition, and hands each the events of its own partition only: an event joins
partition x when some basic event pattern of the query binds ?v = x on it (the planner's
``Partition.leaves``), so one event may join several partitions, or none. Strict contiguity,
skip-till-next, consumption, FIRST / LAST and windows then see one partition's events, as
in the reference (``sepia.semantics.partition``). The runs of all partitions are the runs
indexed by partition key that SPAseq's optimisations ask for.

Time is the whole input's, as in the reference: a sequence ending in a negation completes
at its WITHIN horizon or when the whole input ends, even in a partition whose own events
stopped earlier. So under WITHIN a partition is told of the first instant of the
streamset at or after its deadline (``pass_time``; strict contiguity does not count it):
horizons fire then, results leave in time order, and runs expire, so a partition left
with nothing is dropped (a fresh one is the same) and the live partitions are those of the
last WITHIN. At the end of input, partitions waiting on a tail negation are told when the
whole input ended.

One match can only be confirmed late: a sequence ending ``, !B`` waits for its partition's
next event (the streamset's next event time, within the partition) and is reported at its
own end. Results are printed in time order (io.md), so results of other partitions later
than the oldest such waiting match are held back until it is settled (``held``); a
partition that never gets another event holds them to the end of input.

Match names are ``<value>@<t>.m<k>``: the k-th match of the partition of that value made at
instant t (a partition dropped and made again is a new one). The name and the order of the
results released at one instant (by time, then ``result_order``) depend on nothing but the
partition's own events and the streamset's instants, so a query whose partitions are spread
over several engines (``owns``, ``bucket_of``: one Spark key per bucket of values) gives the
same lines as one engine holding them all. The reference numbers partitions in value
order, so the two agree up to renaming.
"""

from __future__ import annotations

import dataclasses
import heapq
import zlib
from collections.abc import Callable, Sequence

from sepia.algebra import query as qa
from sepia.engine.background import Background
from sepia.engine.cep.automaton import Strategy
from sepia.engine.plan.physical import SequencePlan
from sepia.engine.query.continuous import ContinuousQuery, Snapshot
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.results import Result, jsonl_line
from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import Term, make_triple, parse_term, term_to_nt
from sepia.rdf.time import TimeKind


class PartitionedQuery:
    """A PARTITION BY query: its live partitions, by value id, each a label (for match
    names) and a ContinuousQuery.

    ``owns`` (None: every value) restricts it to some partition values: an event still
    joins every partition it binds a value of, but only the owned ones are opened and fed,
    so engines owning disjoint sets of values, each told of every instant of the streamset
    (an element without triples is enough), report each partition exactly once."""

    def __init__(
        self,
        query: qa.Query,
        name: str,
        dictionary: Dictionary,
        background: Background,
        max_runs: int | None = None,
        rdfs: bool = False,
        owns: Callable[[Term], bool] | None = None,
    ) -> None:
        self.name = name
        self.owns = owns
        self._settings = (query, name, dictionary, background, max_runs, rdfs)
        self.router = ContinuousQuery(*self._settings)
        """Plans the query once; finds the partitions each event joins (never fed)."""
        self.parts: dict[int, tuple[str, ContinuousQuery]] = {}
        self.clock: int | None = None
        """The last instant of the streamset."""
        kind = self.router.physical.kind
        automaton = kind.automaton if isinstance(kind, SequencePlan) else None
        self.waits = automaton is not None and automaton.states[-1].negated
        """A tail negation: every partition waits for the whole input's end."""
        self.holds = automaton is not None and any(
            s.negated and s.strategy is Strategy.STRICT for s in automaton.states
        )
        """A ``, !B``: a match may wait for its partition's next event, holding back the
        later results of every partition (``held``), so the partitions cannot be spread
        over engines that do not see each other's waits."""
        self.ticks = self.router.timed
        """Every partition steps through each instant of the streamset past its deadline
        (``ContinuousQuery.timed``): runs expire, tail negations fire at their horizons,
        EP-SPARQL occurrences pass theirs, so a partition left with nothing is dropped."""
        self.deadlines: dict[int, int] = {}
        """Under WITHIN, when each partition must step next though no event of its own
        comes (``ContinuousQuery.deadline``); ``queue`` orders them (stale entries are
        skipped)."""
        self.queue: list[tuple[int, int]] = []
        self.waiting: dict[int, int] = {}
        """Partitions with a match waiting on a final ``, !B``: the oldest one's end."""
        self.held: list[tuple[int, int, Result]] = []
        """Results later than the oldest waiting match: a heap by time, then arrival (so
        holding many back costs a logarithm each, not a sort per step)."""
        self.queued = 0
        """Results held so far: the arrival number of the next."""

    @property
    def query(self) -> qa.Query:
        return self.router.query

    def _part(self, value: int, made: int | None = None, label: str = "") -> ContinuousQuery:
        """The partition of ``value``; made if it is not live, named ``label`` (default:
        the value and the instant ``made`` at)."""
        if value not in self.parts:
            term = self.router.dictionary.decode(value)
            label = label or f"{term_to_nt(term)}@{made}"
            physical = self.router.physical
            self.parts[value] = (label, ContinuousQuery(*self._settings, term, physical))
        return self.parts[value][1]

    def values_of(self, element: StreamElement) -> list[Term]:
        """The partition values the element binds (the partitions it joins, owned or not)."""
        decode = self.router.dictionary.decode
        return [decode(value) for value in self.router.partitions_of(element)]

    def advance(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """The elements stamped t, each to the (owned) partitions it joins; what falls due.
        A partition left holding nothing (``idle``) is dropped: a fresh one is the same."""
        members: dict[int, list[StreamElement]] = {}
        decode = self.router.dictionary.decode
        for element in (e for e in elements if e.triples):  # none: a stand-in, time only
            for value in self.router.partitions_of(element):
                if self.owns is None or self.owns(decode(value)):
                    members.setdefault(value, []).append(element)
        for value in members:
            self._part(value, made=t)
        streamset = self.router.in_streamset(elements)
        touched = set(members) | (self._due(t) if streamset and self.ticks else set())
        results = []
        for value in touched:
            n, part = self.parts[value]
            if value in members:
                results += self._named(n, part.advance(t, members[value]))
            if streamset and self.ticks:
                results += self._named(n, part.pass_time(t))
            self._settle(value, part)
        if streamset:
            self.clock = t
        return self._release(results)

    def _release(self, results: list[Result]) -> list[Result]:
        """The results no waiting match can precede, in time order; the others are held."""
        floor = min(self.waiting.values(), default=None)
        if floor is None and not self.held:
            return _in_time_order(results)
        for r in _in_time_order(results):
            heapq.heappush(self.held, (r.t, self.queued, r))
            self.queued += 1
        ready = []
        while self.held and (floor is None or self.held[0][0] <= floor):
            ready.append(heapq.heappop(self.held)[2])
        return ready

    def _due(self, t: int) -> set[int]:
        """The partitions whose deadline has come by t."""
        due = set()
        while self.queue and self.queue[0][0] <= t:
            deadline, value = heapq.heappop(self.queue)
            if self.deadlines.get(value) == deadline:
                del self.deadlines[value]
                due.add(value)
        return due

    def _settle(self, value: int, part: ContinuousQuery) -> None:
        """After a step: drop the partition if it holds nothing, else note when it must
        next step even without events of its own (WITHIN expiry, a tail's horizon)."""
        waiting = part.waiting_since()
        if waiting is None:
            self.waiting.pop(value, None)
        else:
            self.waiting[value] = waiting
        if part.idle():
            del self.parts[value]
            self.deadlines.pop(value, None)
            return
        deadline = part.deadline() if self.ticks else None
        if deadline is None:
            self.deadlines.pop(value, None)
        elif self.deadlines.get(value) != deadline:
            self.deadlines[value] = deadline
            heapq.heappush(self.queue, (deadline, value))

    def watermark(self, t: int) -> list[Result]:
        """Event queries report on arrival: a watermark brings nothing due."""
        return []

    def flush_end(self) -> None:
        """Event queries report on arrival: no flush end to wait for."""
        return None

    def flush(self, until: int | None = None) -> list[Result]:
        """End of input, for every partition."""
        results = []
        for n, part in self.parts.values():
            if self.clock is not None and self.waits:
                results += self._named(n, part.pass_time(self.clock))
            results += self._named(n, part.flush(until))
        self.waiting = {}
        return self._release(results)

    @staticmethod
    def _named(label: str, results: list[Result]) -> list[Result]:
        return [
            r if r.match is None else dataclasses.replace(r, match=f"{label}.{r.match}")
            for r in results
        ]

    def state_size(self) -> dict[str, int]:
        """The partitions' counters summed, and how many partitions are live."""
        total = {"partitions": len(self.parts)}
        for _, part in self.parts.values():
            for key, value in part.state_size().items():
                total[key] = total.get(key, 0) + value
        return total

    def snapshot(self) -> Snapshot:
        """Each partition's rows, led by its value id; ``partitions`` lists (value id,
        label), so match names go on where they were."""
        held = held_rows([r for *_, r in sorted(self.held)])
        state: Snapshot = {"held": held}
        state["partitions"] = [(value, n) for value, (n, _) in self.parts.items()]
        for value, (_, part) in self.parts.items():
            for table, rows in part.snapshot().items():
                state.setdefault(table, []).extend((value, *row) for row in rows)
        return state

    def restore(self, snapshot: Snapshot) -> None:
        """Resume from ``snapshot()`` rows (the dictionary is restored by its owner)."""
        self.parts, self.deadlines, self.queue, self.waiting = {}, {}, [], {}
        held = held_results(self.name, snapshot.get("held", []))
        self.held = [(r.t, n, r) for n, r in enumerate(held)]  # in time order: a heap
        self.queued = len(held)
        for value, label in snapshot["partitions"]:
            tables = {
                table: [tuple(row[1:]) for row in rows if row[0] == value]
                for table, rows in snapshot.items()
                if table not in ("partitions", "held")
            }
            part = self._part(value, label=label)
            part.restore(tables)
            self._settle(value, part)


RegisteredQuery = ContinuousQuery | PartitionedQuery


def held_rows(results: list[Result]) -> list[tuple]:
    """Held results as rows: t, op, interval, match, boolean, then (name, N-Triples) pairs
    of the binding or the N-Triples of each constructed triple."""
    rows = []
    for r in results:
        start, end = r.interval if r.interval is not None else (None, None)
        if r.binding is not None:
            pairs = r.values.items()
            body = ["binding", *(x for name, term in pairs for x in (name, term_to_nt(term)))]
        elif r.triples is not None:
            body = ["triples", *(" ".join(map(term_to_nt, tr)) for tr in r.triples)]
        else:
            body = ["boolean"]
        rows.append((r.t, r.op, start, end, r.match, r.boolean, *body))
    return rows


def held_results(name: str, rows: Sequence[Sequence]) -> list[Result]:
    """``held_rows`` back into results of query ``name``."""
    results = []
    for t, op, start, end, match, boolean, kind, *body in rows:
        interval = None if start is None else (start, end)
        binding = triples = None
        if kind == "binding":
            binding = tuple((body[i], parse_term(body[i + 1])) for i in range(0, len(body), 2))
        elif kind == "triples":
            triples = tuple(make_triple(*map(parse_term, text.split(" ", 2))) for text in body)
        results.append(Result(name, t, op, binding, triples, boolean, interval, match))
    return results


def _in_time_order(results: list[Result]) -> list[Result]:
    """Partitions' results merged by time, then ``result_order``: an order that does not
    depend on which partitions one engine holds."""
    if len(results) < 2:  # most steps: no jsonl text to make
        return results
    return sorted(results, key=lambda r: (r.t, result_order(r)))


def result_order(result: Result) -> str:
    """Orders the results of one instant: their jsonl text (equal texts are equal lines)."""
    return jsonl_line(result, TimeKind.ABSTRACT)


def bucket_of(value: Term, buckets: int) -> int:
    """The bucket (of ``buckets``) a partition value belongs to: a hash of its N-Triples
    that every process computes alike (``hash`` is salted per process)."""
    return bucket_of_text(term_to_nt(value), buckets)


def bucket_of_text(text: str, buckets: int) -> int:
    """``bucket_of`` the value whose N-Triples text is ``text``."""
    return zlib.crc32(text.encode()) % buckets
