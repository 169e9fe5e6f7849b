"""Event-pattern queries: RSEP-QL, CQELS-CEP and EP-SPARQL event trees, pushed as their
mappings complete (``EventQuery``), and queries with several MATCHes (``MatchesQuery``).

After the elements stamped t enter the windows (EP-SPARQL: the occurrences), the event
mappings that end at t are reported; under CHRONOLOGICAL / RECENT consumption the pattern is
re-evaluated at every instant, as the reference does. With several MATCHes each gives every
match it has at t, in its own interval slots, and a solution is pushed when the last match
it holds ends at t.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING

from sepia.engine.cep.consumption import Consumption, Notes
from sepia.engine.cep.epsparql import EncodedTriple, Layout, batches
from sepia.engine.cep.event_trees import (
    Condition,
    EventMapping,
    EventTree,
    Inputs,
    completed,
    consumes,
    current,
    grows,
    interval_filter,
)
from sepia.engine.cep.leaves import Leaves
from sepia.engine.cep.occurrences import OccurrenceHistory
from sepia.engine.plan.physical import EventPlan, MatchesPlan
from sepia.engine.query.kind import QueryKind
from sepia.engine.rows import FROM, TO, Row, Slots, interval_slots
from sepia.engine.s2r.report import Arrivals
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind

if TYPE_CHECKING:
    from sepia.engine.query.continuous import ContinuousQuery, Snapshot

Keep = Callable[[Condition, list[EventMapping]], set[EventMapping]]
"""A FILTER over event mappings (``interval_filter``)."""


class TreeQuery(QueryKind):
    """What the event-tree kinds share: where each element the windows show starts, and
    the inputs an event pattern reads at an instant."""

    consumption: Consumption | None = None
    occurrences: OccurrenceHistory | None = None
    trees: tuple[EventTree, ...] = ()
    """The event tree of each MATCH."""

    def __init__(self, host: ContinuousQuery) -> None:
        super().__init__(host)
        self.starts = Notes(lambda e: e.start)
        """Event patterns over windows: where each element shown starts (its interval)."""
        windows = host.physical.windows
        self.streams = {stream for stream, _ in windows.values()}
        self.by_window = {n: stream for n, (stream, _) in windows.items()}
        slots = host.physical.slots
        hidden = frozenset(i for i, n in enumerate(slots.names) if not slots.visible(n))
        self.leaves = Leaves(hidden)
        """Each basic event pattern's matches over its window (a cache, not state)."""
        self.keeps: list[tuple[TimeKind, Keep]] = []
        """The interval FILTER of each time kind, made once (its stamps' cache with it);
        found by identity: an Enum hashes in Python, twice per arrival."""

    def inputs(self, t: int, kind: TimeKind) -> Inputs:
        """What an event pattern reads at t (filters see times of ``kind``)."""
        host = self.host
        return Inputs(
            t, host.windows, host.event_rows, self.occurrences, self._keep(kind), self.starts,
            self.consumption, self.leaves,
        )

    def _keep(self, kind: TimeKind) -> Keep:
        for known, keep in self.keeps:
            if known is kind:
                return keep
        host = self.host
        keep = interval_filter(host.physical.slots, host.dictionary, kind)
        self.keeps.append((kind, keep))
        return keep

    def stamped(self, found: set[EventMapping], number: int) -> list[Row]:
        """Event mappings as rows of the ``number``-th MATCH, the interval in its slots;
        by interval, then mapping: the order of results at t does not vary between runs."""
        if not found:  # most arrivals complete nothing
            return []
        slots = self.host.physical.slots
        start, end = (slots.index(n) for n in interval_slots(number))
        rows = []
        for m in _in_order(found):
            row = list(m[0])
            row[start], row[end] = m[1], m[2]
            rows.append(tuple(row))
        return rows

    def admit(
        self, t: int, relevant: Sequence[StreamElement],
        encoded: Sequence[tuple[EncodedTriple, ...]] | None = None,
    ) -> Arrivals:
        """The elements stamped t into the windows, their starts noted (and, consuming,
        their graph names); ``encoded``: their graphs, encoded already."""
        host = self.host
        arrived = host.insert(t, relevant, encoded)
        self.starts.admit(host.windows, self.by_window, relevant)
        if self.consumption is not None:
            self.consumption.admit(host.windows, self.by_window, relevant, (), host.event_rows)
        return arrived

    def every(self, t: int, kind: TimeKind) -> list[set[EventMapping]]:
        """Every mapping each MATCH has at t over the windows as they are then, ending then
        or earlier (a REPORT clause's instant): consuming, what it uses is consumed."""
        self.admit(t, ())  # the windows advanced to t: the notes of what left go too
        inputs = self.inputs(t, kind)
        if self.consumption is not None:
            return [self.consumption.current(tree, inputs) for tree in self.trees]
        return [current(tree, inputs) for tree in self.trees]

    def idle(self) -> bool:
        return True

    def rows(self) -> Snapshot:
        return {"starts": self.starts.rows()}

    def restore(self, snapshot: Snapshot, low: int | None, matched: int, dropped: int) -> None:
        super().restore(snapshot, low, matched, dropped)
        self.starts.restore(snapshot["starts"])


class EventQuery(TreeQuery):
    """One event pattern: its mappings ending at each arrival; EP-SPARQL's occurrences and
    RSEP-QL's consumed occurrences are its state."""

    def __init__(self, host: ContinuousQuery, plan: EventPlan) -> None:
        super().__init__(host)
        self.tree = plan.tree
        self.trees = (plan.tree,)
        leaves = plan.occurrences
        self.has_occurrences = bool(leaves)
        self.consumption = Consumption(self._serve_key, leaves) if consumes(plan.tree) else None
        """CHRONOLOGICAL / RECENT: the occurrences consumed so far (and EP-SPARQL's)."""
        self.occurrences = (
            None if not leaves or self.consumption is not None
            else OccurrenceHistory(
                plan.tree, leaves, plan.horizon, self._layout(), plan.schedule is None
            )
        )
        """EP-SPARQL: every element so far, and what the pattern's operands made of them."""
        if self.occurrences is not None and self.occurrences.chain is not None:
            host.dictionary.watch(self.occurrences.chain)  # its ids: the occurrences'
        self.timed = self.occurrences is not None and self.occurrences.horizon is not None
        """EP-SPARQL occurrences pass a ``getDURATION()`` horizon."""

    def _layout(self) -> Layout | None:
        """The rows occurrence patterns may be matched into directly (None: a partition's
        query, whose matches keep only its partition's, goes through ``event_rows``)."""
        if self.host.member is not None:
            return None
        slots = self.host.physical.slots
        return Layout(len(slots.names), self.leaves.hidden)

    def advance(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """After the elements stamped t enter the windows (EP-SPARQL: the occurrences),
        report the event mappings that end at t."""
        host, tree = self.host, self.tree
        if self.occurrences is not None and elements:  # EP-SPARQL reads every stream
            batch = [(e.start, e.end, host.element(e)) for e in elements]
            return self.occurred(t, batch, elements[0].kind, elements)
        relevant = [e for e in elements if e.stream in self.streams]
        if self.consumption is not None:  # re-evaluated at every instant, as the reference
            host.insert(t, relevant)
            for window in host.windows.values():
                window.advance(t)
            self.starts.admit(host.windows, self.by_window, relevant)
            named = [
                (e.start, e.end, e.stream, e.graph, host.element(e))
                for e in (elements if self.has_occurrences else ())
            ]
            self.consumption.admit(host.windows, self.by_window, relevant, named, host.event_rows)
            kind = elements[0].kind if elements else TimeKind.ABSTRACT
            found = self.consumption.completed(tree, self.inputs(t, kind))
        elif not relevant:
            found = set()
        else:
            self.admit(t, relevant)
            found = completed(tree, self.inputs(t, relevant[0].kind))
        return self._reported(t, found)

    def occurred(
        self, t: int, batch: Sequence[tuple[int, int, tuple[EncodedTriple, ...]]],
        kind: TimeKind, elements: Sequence[StreamElement] = (),
    ) -> list[Result]:
        """EP-SPARQL: the elements ending at t (start, end, their graph as ids, closed under
        RDFS) as occurrences, then into the windows (``elements``: a window may read them;
        the columnar core passes none, its queries have no window), and the mappings they
        complete reported."""
        inputs = self.inputs(t, kind)
        self.occurrences.add(batch, kind, inputs)  # type: ignore[union-attr]
        if elements:
            self.admit(t, elements, [graph for _, _, graph in batch])
        return self._reported(t, completed(self.tree, inputs))

    def _reported(self, t: int, found: set[EventMapping]) -> list[Result]:
        """The query's answers at t over the mappings ending then."""
        host = self.host
        host.clock = t
        host.completed = [self.stamped(found, 0)]
        results = host.evaluate(t) if found or host.dense else []
        host.completed = [[]]
        return results

    def pass_time(self, t: int) -> list[Result]:
        """EP-SPARQL under a horizon: occurrences past it are forgotten, all at once."""
        expiry = None if self.occurrences is None else self.occurrences.expiry()
        if expiry is not None and t >= expiry:
            self.occurrences.clear()  # type: ignore[union-attr]
        return []

    def solutions(self, rows: list[Row], t: int) -> list[Row]:
        """A solution without a match at t is not pushed at t."""
        matched = self.host.physical.slots.index(TO)
        return [r for r in rows if r[matched] is not None]

    def only_grows(self) -> bool:
        """Whether its answers only grow: EP-SPARQL over occurrences, every operator
        monotone and end-preserving (a query reading its own output then runs as a
        Q-closure)."""
        return self.occurrences is not None and grows(self.tree)

    def deadline(self) -> int | None:
        """When every occurrence held is past the horizon."""
        return None if self.occurrences is None else self.occurrences.expiry()

    def _serve_key(self, m: EventMapping) -> tuple:
        """``sepia.semantics.rsepql.serve_key`` on an encoded derivation: the order
        consumption serves them in (interval, then bindings by variable name and N-Triples
        text, then support, earliest occurrences first)."""
        row, start, end, support = m  # type: ignore[misc]
        names, decode = self.host.physical.slots.names, self.host.dictionary.decode
        bound = tuple((names[i], str(decode(v))) for i, v in enumerate(row) if v is not None)
        return (end, start, bound, tuple(sorted(support)))

    def idle(self) -> bool:
        return (self.occurrences is None or not self.occurrences.seen.elements) and (
            self.consumption is None or not self.consumption.rows()
        )

    def rows(self) -> Snapshot:
        return {
            "consumption": [] if self.consumption is None else self.consumption.rows(),
            "occurrences": [] if self.occurrences is None else self.occurrences.rows(),
            "starts": self.starts.rows(),
        }

    def restore(self, snapshot: Snapshot, low: int | None, matched: int, dropped: int) -> None:
        if self.consumption is not None:
            self.consumption.restore(snapshot["consumption"], self.host.event_rows)
        super().restore(snapshot, low, matched, dropped)
        if self.occurrences is not None:  # replayed: the operands' results are derived
            self.occurrences.clear()
            rows = snapshot["occurrences"]
            kind = TimeKind(rows[0][-1]) if rows else TimeKind.ABSTRACT
            for batch in batches(row[:-1] for row in rows):
                end = batch[0][1]
                self.occurrences.add(batch, kind, self.inputs(end, kind))


class MatchesQuery(TreeQuery):
    """Several MATCHes: every match each has at an instant, in its own interval slots."""

    def __init__(self, host: ContinuousQuery, plan: MatchesPlan) -> None:
        super().__init__(host)
        self.trees = plan.trees

    def advance(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """After the elements stamped t enter the windows, every match each MATCH has at t;
        a solution is pushed at t when the last match it holds ends at t (``solutions``),
        as the reference's."""
        host, trees = self.host, self.trees
        relevant = [e for e in elements if e.stream in self.streams]
        every: list[set[EventMapping]] = [set() for _ in trees]
        if relevant:
            self.admit(t, relevant)
            inputs = self.inputs(t, relevant[0].kind)
            every = [current(tree, inputs) for tree in trees]
        host.clock = t
        if not host.dense and not any(m[2] == t for found in every for m in found):
            return []
        host.completed = [self.stamped(found, k) for k, found in enumerate(every)]
        results = host.evaluate(t)
        host.completed = [[]]
        return results

    def solutions(self, rows: list[Row], t: int) -> list[Row]:
        """Each solution as one match (``combined``), kept when the last match it holds
        ends at t (pushed once, when its last event arrives)."""
        slots = self.host.physical.slots
        end = slots.index(TO)
        return [row for row in combined(slots, len(self.trees), rows) if row[end] == t]


def combined(slots: Slots, count: int, rows: list[Row]) -> list[Row]:
    """Solutions of several MATCHes each as one match: its interval covers those of the
    matches it holds (in the first MATCH's slots, the others' cleared), as the reference's;
    a solution holding none is left as it is."""
    pairs = [tuple(slots.index(n) for n in interval_slots(k)) for k in range(count)]
    start, end = slots.index(FROM), slots.index(TO)
    kept = []
    for row in rows:
        held = [(s, e) for a, b in pairs if (e := row[b]) is not None and (s := row[a]) is not None]
        values = list(row)
        for a, b in pairs:
            values[a] = values[b] = None
        if held:
            values[start], values[end] = min(a for a, _ in held), max(b for _, b in held)
        kept.append(tuple(values))
    return kept


BY_INTERVAL_THEN_ROW = itemgetter(1, 2, 0)


def _in_order(found: set[EventMapping]) -> Collection[EventMapping]:
    """By interval, then row (unbound first: ``_row_key``). The rows are compared as they
    are, in C, unless two differ first where one is unbound (None meets an id: Python
    refuses), and only then through ``_row_key``: ids are positive, so both orders agree."""
    if len(found) == 1:
        return found
    try:
        return sorted(found, key=BY_INTERVAL_THEN_ROW)
    except TypeError:
        return sorted(found, key=lambda m: (m[1], m[2], _row_key(m[0])))


def _row_key(row: Row) -> tuple[int, ...]:
    """A row as a sortable key (unbound first)."""
    return tuple([-1 if v is None else v for v in row])
