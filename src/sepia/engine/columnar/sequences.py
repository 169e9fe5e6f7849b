"""SPAseq sequences under PARTITION BY on columns: the automaton steps candidate rows only.

The row engine keeps one automaton per partition and steps it at each of the partition's
instants, merging every candidate into a full-width row and checking it one by one. Here a
batch of events is routed once (``columnar.partitions``), each state's candidates are a
table, and the live runs of every partition are one table per state they wait in (their
mapping's columns, the start and last times). A state then takes, for all runs at once:

- ``,`` (strict contiguity): the candidates at the run's partition's next instant, a shift
  by one within the partition's sorted instants (a binary search), joined with the run on
  the key and the shared variables; the run ends there either way;
- ``;`` (skip-till-next): the candidates of the first later instant of the partition that
  has any compatible one passing the state's FILTERs: the run joined with the partition's
  later candidates, the earliest time kept per run.

WITHIN is a vector comparison of start and time; the state's FILTERs over earlier
elements' variables are vector comparisons where exact (``columnar.comparisons``), else
run once per distinct input. Runs that no later
instant can take are dropped; runs still waiting at the batch's end carry over to the next
batch, so a batch cut between two contiguous events, or a run spanning batches, gives what
one batch would. Runs and matches are sets, as in the row engine.

What it covers (``sequence_uncovered`` says why not): a sequence of plain GPMs (no ``+``,
``?``, ``!``, ``&``, ``|``) joined by ``,`` or ``;``, each a BGP over the event graph with
FILTERs, under PARTITION BY on a variable, WITHIN sliding, tumbling or none, a SELECT
pushed as matches complete (RSTREAM, no ORDER BY, DISTINCT, expressions or
aggregates), no ``--max-runs``, no RDFS entailment. The rest runs on the row engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from sepia.algebra import query as qa
from sepia.engine.cep.automaton import Gpm, Strategy
from sepia.engine.cep.runs import Within
from sepia.engine.codec import Codec
from sepia.engine.columnar.batch import ColumnBatch
from sepia.engine.columnar.comparisons import vector_filtered
from sepia.engine.columnar.groups import NumericIds
from sepia.engine.columnar.partitions import (
    ELEMENT,
    TIME,
    EventMatches,
    OwnedKeys,
    Routing,
    candidates,
    distinct,
    gpm_scan,
)
from sepia.engine.columnar.tables import Ids, Table, join
from sepia.engine.plan.physical import PhysicalQuery, SequencePlan
from sepia.engine.query.continuous import ContinuousQuery, Snapshot
from sepia.engine.query.partition import result_order
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.expressions import ExpressionEvaluator
from sepia.engine.r2r.numbers import Terms
from sepia.engine.r2s import streams as r2s
from sepia.engine.rows import FROM, HIDDEN, TO
from sepia.rdf.results import Result, Solution
from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import Term

START = -3
"""A pseudo slot of a run: the time of its first event."""
LAST = -4
"""A pseudo slot of a run: the time of its last event."""
RUN = -5
"""A pseudo slot: the run a joined row came from."""
SPAN = 1 << 14
"""Elements stepped at once at most (a ``;`` joins a run with its partition's later
candidates of one span: memory follows this, not the batch)."""


def sequence_uncovered(engine: ContinuousQuery) -> str | None:
    """Why a planned PARTITION BY query stays on the row engine, or None when the
    columnar core runs it."""
    if engine.max_runs is not None:
        return "a bound on the runs kept (--max-runs)"
    if engine.background.schema is not None:
        return "RDFS entailment runs on the row engine"
    if not isinstance(engine.dictionary, Codec):
        return "a dictionary without a codec"
    return plan_sequence_uncovered(engine.physical)


def plan_sequence_uncovered(physical: PhysicalQuery) -> str | None:
    """``sequence_uncovered`` from the plan alone (run options aside)."""
    kind, query = physical.kind, physical.query
    if not isinstance(kind, SequencePlan):
        return "event patterns other than SPAseq sequences run on the row engine"
    if kind.partition is None or kind.partition.slot is None:
        return "a SPAseq sequence without PARTITION BY (on a variable a GPM binds)"
    for state in kind.automaton.states:
        if state.kleene or state.optional or state.negated:
            return "a Kleene +, optional ? or negated ! element"
        if not isinstance(state.bop, Gpm):
            return "a conjunction & or disjunction | of GPMs"
        if state.strategy is Strategy.ANY:
            return "skip-till-any (:)"
        if state.bop.stream not in {s.iri.value for s in query.dataset.streams}:
            return "a GPM on a stream outside FROM STREAM"
        if state.check is not None and not state.check.row_local:
            return "a FILTER calling RAND(), BNODE() or timestamp()"
    for plan in (*kind.partition.leaves, *(s.bop.plan for s in kind.automaton.states)):  # type: ignore[union-attr]
        parts = gpm_scan(plan)
        if parts is None:
            return "a GPM that is not a BGP with FILTERs over the event graph"
        if any(not select.condition.row_local for select in parts[1]):
            return "a FILTER calling RAND(), BNODE() or timestamp()"
    root = physical.root
    inner = root.inner if isinstance(root, po.Keep) else root
    if not isinstance(query.form, qa.Select) or not isinstance(inner, po.Matches):
        return "a query form other than a SELECT of the matches' variables"
    if query.order or physical.schedule is not None or r2s.operator_of(query) is not qa.RStream:
        return "ORDER BY, a REPORT clause or IStream / DStream over the matches"
    return None


class PartitionedSequence:
    """A PARTITION BY SPAseq sequence run on columns (see the module docstring); the same
    registered-query interface as the row engine's ``PartitionedQuery``, its ``owns`` too
    (None: every value): the events of a value not owned step nothing here."""

    def __init__(
        self, host: ContinuousQuery, owns: Callable[[Term], bool] | None = None
    ) -> None:
        self.host = host
        """Plans the query, holds its dictionary and form (never fed)."""
        self.owned = None if owns is None else OwnedKeys(owns, self.dictionary)
        self.name = host.name
        kind = host.physical.kind
        assert isinstance(kind, SequencePlan) and kind.partition is not None
        assert kind.partition.slot is not None
        self.states = kind.automaton.states
        self.within = kind.within
        self.slot = kind.partition.slot
        self.leaves = kind.partition.leaves
        self.declared = host.declared
        self.width = len(host.physical.slots.names)
        self.runs: list[Table | None] = [None] * len(self.states)
        """The runs waiting in each state (none in state 0: every instant starts runs)."""
        self.clock: int | None = None
        self.numbers = NumericIds(Terms(host.dictionary))
        """The numeric values of the terms FILTERs compare (a cache)."""

    def _filtered(self, table: Table, condition: ExpressionEvaluator) -> Table:
        """A FILTER over a table, on columns where exact (``columnar.comparisons``)."""
        return vector_filtered(table, condition, self.host.physical.slots, self.numbers)

    @property
    def query(self) -> qa.Query:
        return self.host.query

    @property
    def dictionary(self) -> Codec:
        assert isinstance(self.host.dictionary, Codec)
        return self.host.dictionary

    def predicates(self) -> frozenset[str] | None:
        """The predicate IRIs the GPMs read; None when one reads a variable predicate."""
        found: set[str] = set()
        for plan in (*self.leaves, *(s.bop.plan for s in self.states)):  # type: ignore[union-attr]
            parts = gpm_scan(plan)
            assert parts is not None
            for _, p, _ in parts[0].patterns:
                if not isinstance(p, po.Constant):
                    return None
                found.add(self.dictionary.decode_text(p.id)[1:-1])
        return frozenset(found)

    # --- time ---------------------------------------------------------------------------
    def advance(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """The elements stamped t (the push path): as a batch of one instant."""
        kept = [e for e in elements if e.triples]
        if not kept:
            return []
        return self.advance_columns(ColumnBatch.from_elements(kept, self.dictionary))

    def advance_columns(self, batch: ColumnBatch) -> list[Result]:
        """The matches completed by the batch's elements (time order), as results."""
        relevant = batch.of_streams(self.declared)
        if not len(relevant):
            return []
        if self.clock is not None and relevant.times[0] <= self.clock:
            raise ValueError(f"time went back: {int(relevant.times[0])} after {self.clock}")
        results = []
        for start, stop in _spans(relevant.times):
            results += self._results(self._step(relevant.slice(start, stop)))
        self.clock = int(relevant.times[-1])
        return results

    def watermark(self, t: int) -> list[Result]:
        """Matches are pushed as they complete: a watermark brings nothing due."""
        return []

    def flush(self, until: int | None = None) -> list[Result]:
        """Plain elements complete at their last event: nothing waits for the end."""
        return []

    def flush_end(self) -> None:
        return None

    def settled(self, through: int) -> int:
        """No match is reported later than the event completing it."""
        return through

    # --- one span of events ---------------------------------------------------------------
    def _step(self, batch: ColumnBatch) -> Table | None:
        """Route the events, step every state's runs; the matches completed (a set)."""
        matches = EventMatches(batch, self._filtered)
        routing = Routing.of(matches, self.leaves, self.slot)
        if self.owned is not None:
            routing = routing.owned(self.owned)
        numbers = {iri: n for n, iri in enumerate(batch.streams)}
        found = []
        for state in self.states:
            assert isinstance(state.bop, Gpm)
            number = numbers.get(state.bop.stream, -1)
            found.append(candidates(matches, routing, state.bop.plan, self.slot,
                                    batch.stream == number))
        first = found[0]
        if self.states[0].check is not None:
            first = self._filtered(first, self.states[0].check)
        made: Table | None = _moved(first, Table({START: first.columns[TIME]}, first.size))
        horizon = int(batch.times[-1]) + 1
        for position in range(1, len(self.states)):
            waiting = _union(self.runs[position], made)
            if waiting is None:
                made = None
                continue
            state = self.states[position]
            if state.strategy is Strategy.STRICT:
                made, left = self._strict(waiting, found[position], routing, state.check)
            else:
                made, left = self._next(waiting, found[position], state.check)
            self.runs[position] = self._alive(left, horizon)
        return None if made is None else distinct(made)

    def _strict(
        self, runs: Table, found: Table, routing: Routing, check: ExpressionEvaluator | None
    ) -> tuple[Table, Table]:
        """``,``: each run joined with the candidates at its partition's next instant (a
        shift by one among the partition's instants); runs whose partition has no later
        instant in the batch wait on."""
        after, has = routing.next_instant(runs.columns[self.slot], runs.columns[LAST])
        left = runs.take(np.flatnonzero(~has))
        going = runs.take(np.flatnonzero(has))
        going = Table({**going.columns, TIME: after[has]}, going.size)
        taken = self._admitted(join(going, found), check)
        return _moved(taken, taken), left

    def _next(
        self, runs: Table, found: Table, check: ExpressionEvaluator | None
    ) -> tuple[Table, Table]:
        """``;``: each run joined with its partition's later candidates; the options of
        the earliest time that has any are taken, runs without any wait on."""
        numbered = Table({**runs.columns, RUN: np.arange(runs.size)}, runs.size)
        joined = join(numbered, found)
        later = joined.take(np.flatnonzero(joined.columns[TIME] > joined.columns[LAST]))
        options = self._admitted(later, check)
        run, time = options.columns[RUN], options.columns[TIME]
        earliest = np.full(runs.size, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(earliest, run, time)
        taken = options.take(np.flatnonzero(time == earliest[run]))
        waiting = np.ones(runs.size, dtype=bool)
        waiting[run] = False
        return _moved(taken, taken), runs.take(np.flatnonzero(waiting))

    def _admitted(self, joined: Table, check: ExpressionEvaluator | None) -> Table:
        """The options WITHIN admits whose FILTERs over earlier elements hold."""
        within = self.within
        if within is not None and joined.size:
            keep = _admits(within, joined.columns[START], joined.columns[TIME])
            joined = joined.take(np.flatnonzero(keep))
        return joined if check is None else self._filtered(joined, check)

    def _alive(self, runs: Table, horizon: int) -> Table | None:
        """The runs some instant from ``horizon`` on could still extend (WITHIN)."""
        if self.within is not None and runs.size:
            keep = _admits(self.within, runs.columns[START], np.full(runs.size, horizon))
            runs = runs.take(np.flatnonzero(keep))
        return runs if runs.size else None

    # --- results --------------------------------------------------------------------------
    def _results(self, done: Table | None) -> list[Result]:
        """Each match as a result at its end, the interval its start and end; results of
        one instant ordered as the row engine's partitions release them."""
        if done is None or not done.size:
            return []
        slots = self.host.physical.slots
        root = self.host.physical.root
        kept = set(root.slots) if isinstance(root, po.Keep) else set(range(self.width))
        named = [(slots.names[i], done.columns[i]) for i in range(self.width)
                 if i in kept and i in done.columns and slots.visible(slots.names[i])
                 and slots.names[i] not in HIDDEN]
        interval = FROM in slots.names and kept & {slots.index(FROM), slots.index(TO)}
        decode = self.dictionary.decode
        ids = np.unique(np.concatenate([c for _, c in named])) if named else np.empty(0, int)
        terms = {i: decode(i) for i in np.asarray(ids).tolist()}
        columns = sorted(((n, c.tolist()) for n, c in named), key=lambda pair: pair[0])
        starts, ends = done.columns[START].tolist(), done.columns[LAST].tolist()
        op: Literal["+"] = "+"
        out = [
            Result.of_solution(self.name, end, op,
                               Solution([(n, terms[c[k]]) for n, c in columns]),
                               (start, end) if interval else None)
            for k, (start, end) in enumerate(zip(starts, ends, strict=True))
        ]
        out.sort(key=lambda r: r.t)
        return _ties_ordered(out)

    # --- state ------------------------------------------------------------------------
    def state_size(self) -> dict[str, int]:
        live = [r for r in self.runs if r is not None]
        keys = (
            np.unique(np.concatenate([r.columns[self.slot] for r in live]))
            if live else np.empty(0, int)
        )
        return {"partitions": len(keys), "runs": sum(r.size for r in live), "dropped_runs": 0}

    def snapshot(self) -> Snapshot:
        """Each waiting run as a row: state, start, last, then its mapping (width slots,
        None where unbound)."""
        rows: list[tuple] = [("clock", self.clock)]
        runs = []
        for position, table in enumerate(self.runs):
            if table is None:
                continue
            mapping = table.rows(self.width)
            starts, lasts = table.columns[START].tolist(), table.columns[LAST].tolist()
            runs += [(position, s, e, *m) for s, e, m in zip(starts, lasts, mapping, strict=True)]
        return {"clock": rows, "runs": runs}

    def restore(self, snapshot: Snapshot) -> None:
        """Resume from ``snapshot()`` rows (the dictionary is restored by its owner)."""
        self.clock = dict(snapshot["clock"]).get("clock")
        self.runs = [None] * len(self.states)
        by_state: dict[int, list] = {}
        for position, start, last, *mapping in snapshot["runs"]:
            by_state.setdefault(position, []).append((start, last, mapping))
        for position, rows in by_state.items():
            bound = [i for i, v in enumerate(rows[0][2]) if v is not None]
            columns = {i: np.array([r[2][i] for r in rows], dtype=np.int64) for i in bound}
            columns[START] = np.array([r[0] for r in rows], dtype=np.int64)
            columns[LAST] = np.array([r[1] for r in rows], dtype=np.int64)
            self.runs[position] = Table(columns, len(rows))


def _moved(taken: Table, times: Table) -> Table:
    """Runs that took a candidate: its time is their last; ``times`` gives START for
    the first element (else it is kept)."""
    columns = {k: v for k, v in taken.columns.items() if k not in (TIME, RUN, ELEMENT)}
    columns[LAST] = taken.columns[TIME]
    columns.setdefault(START, times.columns.get(START, taken.columns[TIME]))
    return Table(columns, taken.size)


def _union(carried: Table | None, made: Table | None) -> Table | None:
    """Runs waiting in a state: those carried over and those just made, each once."""
    tables = [t for t in (carried, made) if t is not None and t.size]
    if not tables:
        return None
    if len(tables) == 1:
        return distinct(tables[0])
    keys = tables[0].columns.keys()
    both = Table({k: np.concatenate([t.columns[k] for t in tables]) for k in keys},
                 sum(t.size for t in tables))
    return distinct(both)


def _admits(within: Within, start: Ids, end: Ids) -> np.ndarray:
    """``Within.admits`` on columns."""
    if within.tumbling:
        return start // within.width == end // within.width
    return end - start <= within.width


def _spans(times: Ids) -> list[tuple[int, int]]:
    """Cuts of a batch into spans of about ``SPAN`` elements, never inside an instant."""
    bounds, start = [], 0
    while start < len(times):
        stop = min(start + SPAN, len(times))
        if stop < len(times):
            stop = int(np.searchsorted(times, times[stop], side="left")) or stop
            if stop <= start:
                stop = int(np.searchsorted(times, times[start], side="right"))
        bounds.append((start, stop))
        start = stop
    return bounds


def _ties_ordered(results: list[Result]) -> list[Result]:
    """Results in time order, those of one instant by ``result_order`` (their text)."""
    out: list[Result] = []
    k = 0
    while k < len(results):
        j = k + 1
        while j < len(results) and results[j].t == results[k].t:
            j += 1
        group = results[k:j]
        out += sorted(group, key=result_order) if len(group) > 1 else group
        k = j
    return out
