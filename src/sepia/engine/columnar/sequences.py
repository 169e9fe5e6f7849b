"""SPAseq sequences on columns: the automaton steps candidate rows only.

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
  later candidates, the earliest time kept per run; runs alike (partition, the values
  the FILTERs and the join read, none of their instants here) are asked once.

WITHIN is a vector comparison of start and time; the state's FILTERs over earlier
elements' variables are vector comparisons where exact (``columnar.comparisons``), else
run once per distinct input; over (run, candidate) pairs each slot's numbers are found
once per run or candidate and gathered, order comparisons of variables are integer
comparisons, and a ``;`` state skips the runs that none of their partition's candidates
could satisfy (``columnar.orderings``). Runs that no later
instant can take are dropped; runs still waiting at the batch's end carry over to the next
batch, so a batch cut between two contiguous events, or a run spanning batches, gives what
one batch would. Runs and matches are sets, as in the row engine.

Without PARTITION BY the streamset is one partition (``Routing.single``): every element of
a FROM STREAM stream, with triples or not, is an instant of it, so ``,`` takes the
streamset's next instant, as the row engine's ``SequenceQuery`` counts its steps; matches
are released (and Kleene matches numbered ``m<k>``) in its order (``_matched_order``),
the rows of an instant alike listed together, as its bag lists them (``_bagged``).
A conjunction ``(B & C)`` is a state whose candidates are B's and C's joined on their
shared variables and time (compatible matches at one instant, SPAseq's Definition 8).

Kleene plus past the first element (``SEQ(A , B+)``, ``SEQ(A ; B+ , C)``): each iteration
count is its own match, or mid-sequence its own run on (one row per iteration), the first
iteration after the element's ``,`` or ``;``, later ones strict; a run keeps an id into a
table of its iterations, and matches are named as the row engine's partitions name them
(``_named``).

What it covers (``sequence_uncovered`` says why not): a sequence of GPMs or conjunctions
``&`` of GPMs (no ``?``, ``!``, ``|``) joined by ``,`` or ``;``, at most one a GPM's ``B+``
past the first (not under TUMBLING; B's variables shared with later elements bound by an
earlier one), each GPM a BGP over the event graph with FILTERs,
joined with BGPs over static background graphs, under PARTITION BY on a variable or
none, WITHIN sliding, tumbling or none, a SELECT
pushed as matches complete (RSTREAM, no ORDER BY, DISTINCT, expressions or
aggregates), no ``--max-runs``, no RDFS entailment. The rest runs on the row engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Literal

import numpy as np

from sepia.algebra import query as qa
from sepia.engine.cep.automaton import Bop, Conj, Gpm, State, Strategy
from sepia.engine.cep.runs import Within
from sepia.engine.codec import Codec
from sepia.engine.columnar.batch import ColumnBatch, ReadNumbers
from sepia.engine.columnar.carried import carried, carried_slot, is_carried, with_numbers
from sepia.engine.columnar.codes import grouped, ranked
from sepia.engine.columnar.comparisons import vector_filtered
from sepia.engine.columnar.expressions import Columns, Numbers
from sepia.engine.columnar.groups import NumericIds
from sepia.engine.columnar.orderings import (
    Operand,
    Ordering,
    Scaled,
    on_one_scale,
    ordering,
    pairs_kept,
    possible,
    read_numbers,
    runs_possible,
    scaled,
)
from sepia.engine.columnar.partitions import (
    ELEMENT,
    TIME,
    EventMatches,
    OwnedKeys,
    Routing,
    candidates,
    distinct,
    gpm_scan,
    instants_of,
)
from sepia.engine.columnar.pushed import Pushed, spans
from sepia.engine.columnar.tables import (
    SMALL,
    WIDE,
    Ids,
    Table,
    Triples,
    filtered,
    join,
    join_all,
    match_pattern,
    paired,
)
from sepia.engine.columnar.tables import distinct as distinct_ids
from sepia.engine.columnar.terms import TermKinds
from sepia.engine.plan.physical import PhysicalQuery, SequencePlan
from sepia.engine.query.continuous import ContinuousQuery, Snapshot
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.expressions import ExpressionEvaluator
from sepia.engine.r2r.numbers import Terms
from sepia.engine.r2r.scan import Slot
from sepia.engine.r2s import streams as r2s
from sepia.engine.rows import FROM, HIDDEN, TO
from sepia.rdf.results import Result, Solution
from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import Term, term_to_nt

START = -3
"""A pseudo slot of a run: the time of its first event."""
LAST = -4
"""A pseudo slot of a run: the time of its last event."""
RUN = -5
"""A pseudo slot: the run a joined row came from."""
ITER = -6
"""A pseudo slot of a run in a Kleene state: its id in the iteration table, -1 before its
first iteration."""
OWNER = -7
"""A pseudo slot of the iteration table: the run an iteration belongs to."""
ORDER = -8
"""A pseudo slot of the iteration table: the iteration's rank in its run (from 0)."""
NUMBER = -9
"""A pseudo slot of a Kleene match: its number in its partition (``m<k>``)."""
MADE = -10
"""A pseudo slot of a Kleene match: the instant its partition was made (its name)."""
MATCH = -11
"""A pseudo slot of a Kleene match's rows (``_expanded``): which match a row is of."""
CHAIN = 8
"""Later instants of their partitions per run up to which a span's ``B+`` iterations
are taken in one pass: each run is paired with all of them, where the steps an instant
at a time stop at each run's first miss (W6: 1.2-1.5 per run; W5, one partition: about
500, and a pass cost 1.4x the steps)."""
FEW = 1024
"""(run, candidate) pairs up to which a ``;`` state pairs every run with all of its
partition's candidates without first testing which could keep one (``_possible``) or
grouping runs alike (``_alike``): a paced instant's few candidates meet W7's 30 waiting
runs, and those tests' numpy calls cost more than the pairs they save."""
SPAN = 1 << 14
"""Elements stepped at once at most (a ``;`` joins a run with its partition's later
candidates of one span: memory follows this, not the batch)."""


Waited = tuple[Ids, Ids, Ids, Ids]
"""Runs that waited in a ``;`` state: their partition values, starts, last times and the
times they took a candidate (the largest integer if none)."""

NONE = np.iinfo(np.int64).min
"""No time: a partition's label when its last instant left no run."""
NEVER = np.iinfo(np.int64).max
"""No time: a run waiting in a ``;`` state that took no candidate (yet)."""


@dataclass(frozen=True, slots=True)
class Labels:
    """The live partition values' labels (as the row engine keeps its partitions), by
    value: the instant each was made, its matches so far and the latest start of the
    runs its last instant left. Columns, so that a step reads and writes those of its
    own partitions at once (a dictionary of them cost a Python step per partition)."""

    key: Ids
    made: Ids
    count: Ids
    latest: Ids

    @classmethod
    def of_rows(cls, rows: Sequence[tuple[int, int, int, int | None]]) -> Labels:
        """Labels from (value, made, count, latest or None) rows."""
        ordered = sorted(rows)
        key, made, count = (np.array([r[k] for r in ordered], dtype=np.int64).reshape(-1)
                            for k in range(3))
        latest = [NONE if r[3] is None else r[3] for r in ordered]
        return cls(key, made, count, np.array(latest, dtype=np.int64))

    def rows(self) -> list[tuple[int, int, int, int | None]]:
        return [(k, m, c, None if e == NONE else e) for k, m, c, e in zip(
            self.key.tolist(), self.made.tolist(), self.count.tolist(), self.latest.tolist(),
            strict=True)]

    def of(self, keys: Ids) -> Labels:
        """The labels of ``keys`` (sorted, distinct): ``NONE`` made and latest, no count,
        where a value has none."""
        if not len(self.key):
            return Labels(keys, np.full(len(keys), NONE), np.zeros(len(keys), dtype=np.int64),
                          np.full(len(keys), NONE))
        at = np.minimum(np.searchsorted(self.key, keys), len(self.key) - 1)
        found = self.key[at] == keys
        return Labels(keys, np.where(found, self.made[at], NONE),
                      np.where(found, self.count[at], 0), np.where(found, self.latest[at], NONE))

    def updated(self, new: Labels) -> Labels:
        """These labels, ``new`` ones replacing those of their values."""
        kept = np.ones(len(self.key), dtype=bool)  # both sorted: a search, not isin's sorts
        if len(new.key):
            at = np.minimum(np.searchsorted(new.key, self.key), len(new.key) - 1)
            kept = new.key[at] != self.key
        key = np.concatenate([self.key[kept], new.key])
        order = np.argsort(key, kind="stable")
        return Labels(key[order], *(np.concatenate([old[kept], fresh])[order] for old, fresh in (
            (self.made, new.made), (self.count, new.count), (self.latest, new.latest))))

    def alive(self, instant: int, width: int | None) -> Labels:
        """The labels of the partitions alive at ``instant``: their last instant left a
        run, whose start WITHIN (if any) still admits ``instant``."""
        keep = self.latest != NONE
        if width is not None:
            keep &= instant <= self.latest + width
        if keep.all():
            return self
        return Labels(self.key[keep], self.made[keep], self.count[keep], self.latest[keep])


def sequence_uncovered(engine: ContinuousQuery) -> str | None:
    """Why a planned SPAseq query stays on the row engine, or None when the columnar core
    runs it."""
    if engine.max_runs is not None:
        return "a bound on the runs kept (--max-runs)"
    if engine.background.schema is not None:
        return "RDFS entailment runs on the row engine"
    if not isinstance(engine.dictionary, Codec):
        return "a dictionary without a codec"
    found = plan_sequence_uncovered(engine.physical)
    if found is None and any(g.name in engine.background.varying for g in _background_graphs(
            engine.physical.kind)):  # type: ignore[arg-type]
        return "a GPM joining a time-varying background graph"
    return found


def gpms(bop: Bop) -> list[Gpm]:
    """The GPMs of a state's basic operator (a GPM, or a conjunction of them)."""
    if isinstance(bop, Gpm):
        return [bop]
    return [*gpms(bop.left), *gpms(bop.right)]


def _plans(kind: SequencePlan) -> list[po.PhysicalPlan]:
    """Every GPM plan of the query: the partition's leaves and the states' GPMs."""
    leaves = () if kind.partition is None else kind.partition.leaves
    return [*leaves, *(g.plan for s in kind.automaton.states for g in gpms(s.bop))]


def _background_graphs(kind: SequencePlan) -> list[po.BackgroundGraph]:
    """The background graphs the GPMs join."""
    return [g for plan in _plans(kind) for scan in gpm_scan(plan)[2] for g in scan.graphs]  # type: ignore[index, misc]


def _bound(state: State) -> set[int]:
    """The slots a state's GPMs bind (their BGPs' variables)."""
    found: set[int] = set()
    for gpm in gpms(state.bop):
        parts = gpm_scan(gpm.plan)
        scans = [] if parts is None else [parts[0], *parts[2]]
        found.update(t.index for scan in scans for pattern in scan.patterns for t in pattern
                     if isinstance(t, Slot))
    return found


def _conjunction(bop: Bop) -> bool:
    """Whether a basic operator is a GPM or a conjunction ``&`` of GPMs (no ``|``)."""
    return isinstance(bop, Gpm) or (
        isinstance(bop, Conj) and _conjunction(bop.left) and _conjunction(bop.right))


def plan_sequence_uncovered(physical: PhysicalQuery) -> str | None:
    """``sequence_uncovered`` from the plan alone (run options aside)."""
    kind, query = physical.kind, physical.query
    if not isinstance(kind, SequencePlan):
        return "event patterns other than SPAseq sequences run on the row engine"
    if kind.partition is not None and kind.partition.slot is None:
        return "PARTITION BY on a variable no GPM binds"
    states = kind.automaton.states
    streams = {s.iri.value for s in query.dataset.streams}
    for state in states:
        if state.optional or state.negated:
            return "an optional ? or negated ! element"
        if states[0].kleene or sum(s.kleene for s in states) > 1:
            return "a Kleene + element first, or more than one"
        if not _conjunction(state.bop):
            return "a disjunction | of GPMs"
        if state.kleene and not isinstance(state.bop, Gpm):
            return "a Kleene + over a conjunction & of GPMs"
        if state.strategy is Strategy.ANY:
            return "skip-till-any (:)"
        if any(g.stream not in streams for g in gpms(state.bop)):
            return "a GPM on a stream outside FROM STREAM"
        if state.check is not None and not state.check.row_local:
            return "a FILTER calling RAND(), BNODE() or timestamp()"
    kleene = [k for k, s in enumerate(states) if s.kleene]
    if kleene and not (_bound(states[kleene[0]]) - set(states[kleene[0]].own)) <= set().union(
            *(_bound(s) for s in states[: kleene[0]])):
        return "a Kleene + element sharing a variable with later elements only"
    if kleene and kind.within is not None and kind.within.tumbling:
        return "a Kleene + element under WITHIN ... TUMBLING"
    for plan in _plans(kind):
        parts = gpm_scan(plan)
        if parts is None:
            return "a GPM that is not a BGP with FILTERs over the event and background graphs"
        if any(not select.condition.row_local for select in parts[1]):
            return "a FILTER calling RAND(), BNODE() or timestamp()"
    root = physical.root
    inner = root.inner if isinstance(root, po.Keep) else root
    if not isinstance(query.form, qa.Select) or not isinstance(inner, po.Matches):
        return "a query form other than a SELECT of the matches' variables"
    if query.order or physical.schedule is not None or r2s.operator_of(query) is not qa.RStream:
        return "ORDER BY, a REPORT clause or IStream / DStream over the matches"
    return None


class PartitionedSequence(Pushed):
    """A SPAseq sequence run on columns (see the module docstring); the same
    registered-query interface as the row engine's ``PartitionedQuery``, its ``owns`` too
    (None: every value): the events of a value not owned step nothing here. Without
    PARTITION BY the whole streamset is one partition, as the row engine's
    ``SequenceQuery`` runs it."""

    def __init__(
        self, host: ContinuousQuery, owns: Callable[[Term], bool] | None = None
    ) -> None:
        self.host = host
        """Plans the query, holds its dictionary and form (never fed)."""
        self.owned = None if owns is None else OwnedKeys(owns, self.dictionary)
        self.name = host.name
        kind = host.physical.kind
        assert isinstance(kind, SequencePlan)
        self.states = kind.automaton.states
        self.within = kind.within
        self.slot = None if kind.partition is None else kind.partition.slot
        """The PARTITION BY variable's slot; None without one (a single partition)."""
        self.leaves = () if kind.partition is None else kind.partition.leaves
        self.plans = _plans(kind)
        self.declared = host.declared
        self.width = len(host.physical.slots.names)
        self.runs: list[Table | None] = [None] * len(self.states)
        """The runs waiting in each state (none in state 0: every instant starts runs)."""
        self.clock: int | None = None
        self.numbers = NumericIds(Terms(host.dictionary))
        """The numeric values of the terms FILTERs compare (a cache)."""
        self.read: ReadNumbers | None = None
        """The last numbers a reader worked out that ``numbers`` was taught (a block's
        batches come in slices sharing them)."""
        self.kleene = next((k for k, s in enumerate(self.states) if s.kleene), None)
        """The ``B+`` state's position, if any: runs from it on keep their iterations,
        matches are named."""
        self.iterations: Table | None = None
        """Each Kleene run's iterations (``OWNER``, ``ORDER``, its own variables), sorted."""
        self.issued = 0
        """Kleene run ids given so far."""
        self.labels = Labels.of_rows([])
        """The live partition values' labels (``Labels``)."""
        self.instant: int | None = None
        """The streamset's last instant stepped (a partition's lifetime reads it)."""
        self.kb: dict[int, Table] = {}
        """The solutions of each background BGP a GPM joins (static graphs only)."""
        self.matched = 0
        """Without PARTITION BY: the matches released so far (Kleene matches' ``m<k>``)."""

    def _filtered(self, table: Table, condition: ExpressionEvaluator) -> Table:
        """A FILTER over a table, on columns where exact (``columnar.comparisons``); a
        few rows by the evaluator once per distinct input, which is what the columns'
        answers equal (a paced instant's three rows paid the columns' fixed cost)."""
        if table.size <= SMALL:
            return filtered(table, condition)
        return vector_filtered(table, condition, self.host.physical.slots, self.numbers)

    def event_plans(self) -> list[po.PhysicalPlan]:
        return list(self.plans)

    # --- time ---------------------------------------------------------------------------
    def advance(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """The elements stamped t (the push path): as a batch of one instant."""
        kept = [e for e in elements if e.triples or self.slot is None]
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
        read = relevant.numbers
        if read is not None and read is not self.read:  # a slice of the block taught
            self.numbers.taught(read.ids, read.kind, read.digits, read.mantissa)
            self.read = read
        results = []
        for start, stop in spans(relevant.times, SPAN):
            results += self._results(self._step(relevant.slice(start, stop)))
        self.clock = int(relevant.times[-1])
        return results

    # --- one span of events ---------------------------------------------------------------
    def routing(self, batch: ColumnBatch) -> tuple[EventMatches, Routing]:
        """The batch's GPM matches and the partitions its elements join, every value owned
        (the Spark job's route stage asks this too, to send elements to their buckets)."""
        matches = EventMatches(batch, self._filtered, self._background)
        if self.slot is None:
            return matches, Routing.single(batch.times)
        return matches, Routing.of(matches, self.leaves, self.slot)

    def _step(self, batch: ColumnBatch) -> Table | None:
        """Route the events, step every state's runs; the matches completed (a set)."""
        if self.kleene is not None:
            self._collect()
        matches, routing = self.routing(batch)
        if self.owned is not None:
            routing = routing.owned(self.owned)
        numbers = {iri: n for n, iri in enumerate(batch.streams)}
        found = [self._found(state.bop, batch, numbers, matches, routing)
                 for state in self.states]
        first = found[0]
        if self.states[0].check is not None:
            first = self._filtered(first, self.states[0].check)
        made: Table | None = _moved(first, Table({START: first.columns[TIME]}, first.size))
        horizon = int(batch.times[-1]) + 1
        born = [made]
        waited: list[Waited] = []
        for position in range(1, len(self.states)):
            state = self.states[position]
            if state.kleene and made is not None and ITER not in made.columns:
                made = Table({**made.columns, ITER: np.full(made.size, -1)}, made.size)
            if state.strategy is Strategy.NEXT or state.kleene:
                made = self._carrying(made, state)
                self.runs[position] = self._carrying(self.runs[position], state)
            waiting = _union(self.runs[position], made)
            if waiting is None:
                made = None
                continue
            if state.kleene:
                made, left = self._kleene(waiting, found[position], routing, state, waited)
            elif state.strategy is Strategy.STRICT:
                made, left = self._strict(waiting, found[position], routing, state.check)
            else:
                made, left = self._next(waiting, found[position], state.check, waited)
            self.runs[position] = self._alive(left, horizon)
            born.append(made)
        if self.kleene is not None and self.slot is not None:
            made = self._named(made, routing, born, waited, instants_of(batch.times))
        return None if made is None else distinct(made)

    def _found(
        self, bop: Bop, batch: ColumnBatch, numbers: dict[str, int], matches: EventMatches,
        routing: Routing,
    ) -> Table:
        """A state's candidates; a conjunction's: its sides' joined on their shared
        variables and time (SPAseq's & : compatible matches at one instant). A method, not
        a closure that calls itself: such a closure is a reference cycle holding the whole
        batch until the cyclic collector runs, which a replay runs rarely
        (``runtime.local.collector``), so a 1M-element run's memory grew with its input."""
        if isinstance(bop, Conj):
            return distinct(join(self._found(bop.left, batch, numbers, matches, routing),
                                 self._found(bop.right, batch, numbers, matches, routing)))
        assert isinstance(bop, Gpm)
        of_stream = batch.stream == numbers.get(bop.stream, -1)
        return candidates(matches, routing, bop.plan, self.slot, of_stream)

    def _carrying(self, runs: Table | None, state: State) -> Table | None:
        """Runs entering a ``;`` or ``B+`` state with the numbers its FILTER reads from
        them carried (``columnar.carried``): asked again at each span (``;``) or
        iteration (``B+``: its iterations move them on), read once."""
        if runs is None or state.check is None:
            return runs
        return with_numbers(runs, state.check.positions, self.numbers)

    def _background(self, scan: po.Scan, events: Table) -> Table:
        """A GPM's BGP over background graphs (static: ``sequence_uncovered``): the part
        about the subjects the events bind where the background left its predicates to
        lookups (``_looked_up``), else solved once over the whole graphs."""
        looked_up = self._looked_up(scan, events)
        if looked_up is not None:
            return looked_up
        found = self.kb.get(id(scan))
        if found is None:
            parts = []
            for ref in scan.graphs:
                assert isinstance(ref, po.BackgroundGraph)
                parts.append(Triples(*self.host.background.triples(ref.name)))
            graph = Triples.union(parts)
            found = self.kb[id(scan)] = distinct(join_all([match_pattern(graph, p)
                                                            for p in scan.patterns]))
        return found

    def _looked_up(self, scan: po.Scan, events: Table) -> Table | None:
        """The BGP's solutions over the background triples about the subjects ``events``
        binds (and constant subjects), found in the store's indexes
        (``Background.about``): every solution joining an event is among them, since each
        of its triples has one of those subjects. None: a predicate is a variable, a
        subject is a variable the events do not bind, or the triples are encoded already."""
        subjects: list[Ids] = []
        predicates: set[int] = set()
        for s, p, _ in scan.patterns:
            if not isinstance(p, po.Constant):
                return None
            predicates.add(p.id)
            if isinstance(s, po.Constant):
                subjects.append(np.array([s.id], dtype=np.int64))
            elif s.index in events.columns:
                subjects.append(events.columns[s.index])
            else:
                return None
        background = self.host.background
        if background.encoded(frozenset(self.dictionary.decode_text(p)[1:-1]
                                        for p in predicates)):
            return None
        keys, about = tuple(sorted(predicates)), distinct_ids(np.concatenate(subjects))
        parts = []
        for ref in scan.graphs:
            assert isinstance(ref, po.BackgroundGraph)
            parts.append(Triples.of(*background.about(ref.name, about, keys)))
        graph = Triples.union(parts)
        return distinct(join_all([match_pattern(graph, p) for p in scan.patterns]))

    # --- Kleene plus -----------------------------------------------------------------------
    def _kleene(
        self, runs: Table, found: Table, routing: Routing, state: State,
        waited: list[Waited],
    ) -> tuple[Table | None, Table]:
        """``B+``: a run takes its first B as the state's strategy says (``,`` its
        partition's next instant, ``;`` the first later instant with an option), every
        later one at its partition's next instant (strict contiguity). Each taking moves a
        run on (a match when ``B+`` is last) and leaves one waiting for another
        iteration, stepped again within the span while its partition has a later instant.
        A run that does not take B where it must ends."""
        done: list[Table] = []
        left: list[Table] = []
        if state.strategy is Strategy.NEXT:
            fresh = runs.columns[ITER] < 0
            first, waits = self._next(runs.take(np.flatnonzero(fresh)), found, state.check,
                                      waited)
            left.append(waits)
            runs = runs.take(np.flatnonzero(~fresh))
            if first is not None and first.size:
                first = self._iterated(first, state.own)
                done.append(first)
                runs = _concat([runs, first])
        kept = _Kept()
        # without PARTITION BY a run's later instants are the span's (W5: ~500 each)
        chained = None if self.slot is None else self._chained(runs, found, routing, state,
                                                               kept)
        if chained is not None:
            moved, still = chained
            done += [moved] if moved.size else []
            return (_concat(done) if done else None), _concat([*left, *still])
        while runs.size:  # some run has several options at one instant: one at a time
            taken, waits = self._strict(runs, found, routing, state.check, kept)
            left.append(waits)
            if not taken.size:
                break
            runs = self._iterated(taken, state.own)
            done.append(runs)
        return (_concat(done) if done else None), _concat(left)

    def _chained(
        self, runs: Table, found: Table, routing: Routing, state: State, kept: _Kept
    ) -> tuple[Table, list[Table]] | None:
        """All of a span's strict ``B+`` iterations in one pass (the runs moved on and
        the runs left waiting), or None where a run has several options at one of its
        instants (its runs would branch). A run's mapping does not change across its
        iterations (their own variables leave it), so whether it takes each later instant
        of its partition depends only on the run and that instant's candidates: the run
        is paired with all of them at once, and goes on through the instants with an
        option up to the first without. Stepping an instant at a time cost a strict
        step's fixed cost per iteration (W6: 453 of them, about 30 runs each). The runs
        and ids are those the steps give: moved on by iteration, then run. Also None
        where the runs' partitions have more than ``CHAIN`` later instants each."""
        at, has = routing.next_index(self._keys(runs), runs.columns[LAST])
        at = at[has]
        chain = _block_ends(routing.instant_key)[at] - at  # the partition's instants left
        if chain.sum() > CHAIN * len(at):
            return None
        going = runs.take(np.flatnonzero(has))
        step_first = np.cumsum(chain) - chain
        step_at = _ranges(at, chain)
        root = np.repeat(np.arange(going.size), chain)
        run, option = _at_instants(going, step_at, found, routing, kept, self.slot, root)
        sides = _Sides(going, found, kept.numbers, once=True)
        run, option = self._decided(sides, run, option, state.check)
        assert kept.instants is not None
        instant = np.empty(found.size, dtype=np.int64)
        instant[kept.instants[1]] = kept.instants[0]
        depth = instant[option] - at[run]
        options = np.bincount(step_first[run] + depth, minlength=len(step_at))
        if (options > 1).any():
            return None
        missed = np.cumsum(options == 0)  # a step goes on where none before it missed
        before = np.concatenate(([0], missed))[step_first]
        going_on = (missed - np.repeat(before, chain)) == 0
        keep = going_on[step_first[run] + depth]  # by run, then depth: a run's chain
        run, option, depth = run[keep], option[keep], depth[keep]  # is contiguous
        rank = np.empty(len(run), dtype=np.int64)
        rank[np.lexsort((run, depth))] = np.arange(len(run))  # ids by iteration, then run
        taken = paired(going, found, run, option)
        moved = self._iterated(_moved(taken, taken), state.own, rank, np.arange(len(run)) - depth)
        by_step = moved.take(np.argsort(rank))
        ends = depth == chain[run] - 1  # the partition's last instant: waits for another
        waits = by_step.take(np.flatnonzero(ends[np.argsort(rank)]))
        return by_step, [runs.take(np.flatnonzero(~has)), waits]

    def _iterated(
        self, taken: Table, own: tuple[int, ...], rank: Ids | None = None,
        first: Ids | None = None,
    ) -> Table:
        """Runs that took an iteration: a new id each (``rank``: in that order, else the
        rows'), their iterations their parent's then those taken (their own variables,
        out of the run's mapping): rows ``first`` up to their own of ``taken`` (a chain
        of iterations taken at once, ``_chained``), else their own alone."""
        position = np.arange(taken.size, dtype=np.int64)
        ids = self.issued + (position if rank is None else rank)
        self.issued += taken.size
        count = np.ones(taken.size, dtype=np.int64) if first is None else position - first + 1
        chain = position if first is None else _ranges(first, count)
        mine = [k for k in own if k in taken.columns]
        old = self.iterations
        parent = taken.columns[ITER]
        if old is None or not old.size:
            counts = np.zeros(taken.size, dtype=np.int64)
            copied = None
        else:
            lo = np.searchsorted(old.columns[OWNER], parent, side="left")
            hi = np.searchsorted(old.columns[OWNER], parent, side="right")
            counts = hi - lo
            at = _ranges(lo, counts)
            copied = old.take(at)
            copied.columns[OWNER] = np.repeat(ids, counts)
        order = np.repeat(counts, count) + _ranges(np.zeros(taken.size, dtype=np.int64), count)
        new = Table({OWNER: np.repeat(ids, count), ORDER: order,
                     **{k: taken.columns[k][chain] for k in mine}}, len(chain))
        rows = new if copied is None else _concat([copied, new])
        rows = rows.take(np.lexsort((rows.columns[ORDER], rows.columns[OWNER])))
        self.iterations = rows if old is None or not old.size else _concat([old, rows])
        gone = {*mine, *map(carried_slot, mine)}
        columns = {k: v for k, v in taken.columns.items() if k not in gone}
        columns[ITER] = ids
        return Table(columns, taken.size)

    def _collect(self) -> None:
        """Forget the iterations of runs no longer waiting (in the ``B+`` state or after)."""
        old = self.iterations
        if old is None or not old.size:
            return
        assert self.kleene is not None
        waiting = [r.columns[ITER] for r in self.runs[self.kleene:] if r is not None]
        live = np.concatenate(waiting) if waiting else np.empty(0, dtype=np.int64)
        self.iterations = old.take(np.flatnonzero(np.isin(old.columns[OWNER], live)))

    def _named(
        self, done: Table | None, routing: Routing, born: list[Table | None],
        waited: list[Waited], times: Ids,
    ) -> Table | None:
        """Kleene matches numbered as the row engine's partitions number them: ``m<k>``,
        the k-th match of the partition since it was made, made afresh at an instant of
        its own when its last instant left no run, or one left under sliding WITHIN has
        expired by a streamset instant between (the row engine drops an idle partition at
        the first streamset instant after the last start + WITHIN). A run waiting in a
        ``;`` state (``waited``) keeps its partition alive at the instants it waits
        through."""
        keys, instants = routing.instant_key, routing.instant_time
        if not len(keys):
            return done
        tables = [t for t in born if t is not None and t.size]
        at_key = np.concatenate([self._keys(t) for t in tables]) if tables else keys[:0]
        at_last = np.concatenate([t.columns[LAST] for t in tables]) if tables else keys[:0]
        at_start = np.concatenate([t.columns[START] for t in tables]) if tables else keys[:0]
        position = _positions(keys, instants, at_key, at_last)
        latest = np.full(len(keys), NONE, dtype=np.int64)
        np.maximum.at(latest, position, at_start)
        for key, start, last, until in waited:
            self._waiting(latest, keys, instants, key, start, last, until)
        first = np.ones(len(keys), dtype=bool)
        first[1:] = keys[1:] != keys[:-1]
        firsts = np.flatnonzero(first)
        carried = self.labels.of(keys[firsts])
        before = np.empty(len(keys), dtype=np.int64)
        before[1:] = latest[:-1]
        before[firsts] = carried.latest
        dead = before == NONE  # no label: dead
        if self.within is not None:
            at = np.searchsorted(times, instants) - 1
            previous = np.where(at >= 0, times[np.maximum(at, 0)],
                                NONE if self.instant is None else self.instant)
            dead |= (previous != NONE) & (previous > before + self.within.width)
        made = np.where(dead, instants, NONE)
        going_on = ~dead[firsts]
        made[firsts[going_on]] = carried.made[going_on]
        made = made[np.maximum.accumulate(np.where(made != NONE, np.arange(len(keys)), 0))]
        last = np.flatnonzero(np.append(first[1:], True))
        count = np.where(carried.made == made[last], carried.count, 0)
        if done is not None and done.size:
            row_made = made[_positions(keys, instants, self._keys(done),
                                       done.columns[LAST])]
            done = self._numbered(done, row_made, carried)
            partition = np.searchsorted(carried.key, self._keys(done))
            ends_last = row_made == made[last][partition]
            np.maximum.at(count, partition[ends_last], done.columns[NUMBER][ends_last])
        self.instant = int(times[-1])
        self.labels = self.labels.updated(
            Labels(keys[last], made[last], count, latest[last])
        ).alive(self.instant, None if self.within is None else self.within.width)
        return done

    def _waiting(
        self, latest: Ids, keys: Ids, instants: Ids, key: Ids, start: Ids, last: Ids,
        until: Ids,
    ) -> None:
        """Raise ``latest`` (by partition instant) to the start of each run waiting at the
        instant: after its last event, before it took, and (sliding WITHIN) not expired."""
        lo = _positions(keys, instants, key, last, side="right")
        hi = _positions(keys, instants, key, until)
        if self.within is not None:
            hi = np.minimum(hi, _positions(keys, instants, key, start + self.within.width,
                                           side="right"))
        count = np.maximum(hi - lo, 0)
        np.maximum.at(latest, _ranges(lo, count), np.repeat(start, count))

    def _numbered(self, done: Table, made: Ids, carried: Labels) -> Table:
        """Each match's number in its partition, going on from the ``carried`` count of
        the partition's segment (its made instant): by time, then as the row engine orders
        one instant's matches (start, the mapping's terms' text, the iterations')."""
        keys, ends, starts = self._keys(done), done.columns[LAST], done.columns[START]
        order = np.lexsort((starts, ends, keys))
        ties = np.flatnonzero((keys[order][1:] == keys[order][:-1])
                              & (ends[order][1:] == ends[order][:-1])
                              & (starts[order][1:] == starts[order][:-1]))
        if len(ties):  # several matches of one partition at one instant and start: by text
            listed = order.tolist()
            for lo, hi in _runs_of(ties):
                listed[lo:hi] = sorted(listed[lo:hi], key=self._text_key(done))
            order = np.asarray(listed, dtype=np.int64)
        key, segment = keys[order], made[order]
        starts_segment = np.ones(done.size, dtype=bool)  # a segment's rows are contiguous:
        starts_segment[1:] = (key[1:] != key[:-1]) | (segment[1:] != segment[:-1])  # made
        rank = np.arange(done.size)  # grows with the end within a partition
        rank -= np.maximum.accumulate(np.where(starts_segment, rank, 0)) - 1
        partition = np.searchsorted(carried.key, key)
        base = np.where(carried.made[partition] == segment, carried.count[partition], 0)
        number = np.empty(done.size, dtype=np.int64)
        number[order] = base + rank
        return Table({**done.columns, NUMBER: number, MADE: made}, done.size)

    def _text_key(self, done: Table) -> Callable[[int], tuple]:
        """The row engine's order of one instant's matches: start, then the mapping's and
        the iterations' terms as text (ids depend on the order terms were first seen)."""
        text, width = self.dictionary.decode_text, self.width
        own = self.iterations
        assert own is not None

        def key(i: int) -> tuple:
            mapping = done.take(np.array([i])).rows(width)[0]
            lo, hi = np.searchsorted(own.columns[OWNER], done.columns[ITER][i:i + 1],
                                     side="left")[0], np.searchsorted(
                own.columns[OWNER], done.columns[ITER][i:i + 1], side="right")[0]
            iterations = own.take(np.arange(lo, hi)).rows(width)
            return (int(done.columns[START][i]), _texts(mapping, text),
                    tuple(_texts(row, text) for row in iterations))

        return key

    def _matched_order(self, done: Table) -> Ids:
        """Without PARTITION BY, the order ``SequenceQuery`` numbers and releases matches
        in: by end, start, the mapping's terms' text slot by slot, then (ties of Kleene
        matches only) the iterations' (``_text_key``); each column's text ranked once per
        distinct term, not per match."""
        text = self.dictionary.decode_text
        keys = [done.columns[LAST], done.columns[START]]
        keys += [_text_ranks(done.columns[k], text)
                 for k in sorted(k for k in done.columns if 0 <= k < self.width)]
        order = np.lexsort(keys[::-1])
        if self.kleene is None or done.size < 2:
            return order
        same = np.ones(done.size - 1, dtype=bool)
        for key in keys:
            same &= key[order][1:] == key[order][:-1]
        ties = np.flatnonzero(same)
        if len(ties):
            listed = order.tolist()
            for lo, hi in _runs_of(ties):
                listed[lo:hi] = sorted(listed[lo:hi], key=self._text_key(done))
            order = np.asarray(listed, dtype=np.int64)
        return order

    def _expanded(self, done: Table) -> tuple[Table, list[str]]:
        """Kleene matches as one row per iteration (their own variables bound), and the
        match name of each row: ``<partition value>@<made>.m<k>``, or ``m<k>`` without
        PARTITION BY."""
        own = self.iterations
        assert own is not None
        lo = np.searchsorted(own.columns[OWNER], done.columns[ITER], side="left")
        hi = np.searchsorted(own.columns[OWNER], done.columns[ITER], side="right")
        counts = hi - lo
        at = _ranges(lo, counts)
        match = np.repeat(np.arange(done.size), counts)
        rows = done.take(match)
        columns = {**rows.columns, **{k: v[at] for k, v in own.columns.items() if k >= 0}}
        columns[MATCH] = match
        if self.slot is None:
            names = [f"m{n}" for n in done.columns[NUMBER].tolist()]
        else:
            decode = self.dictionary.decode
            labels = {v: term_to_nt(decode(v))
                      for v in np.unique(done.columns[self.slot]).tolist()}
            names = [f"{labels[k]}@{m}.m{n}" for k, m, n in zip(
                done.columns[self.slot].tolist(), done.columns[MADE].tolist(),
                done.columns[NUMBER].tolist(), strict=True)]
        named = np.array(names, dtype=object)  # a match's name once, not once per row
        return Table(columns, rows.size), named[match].tolist()

    def _strict(
        self, runs: Table, found: Table, routing: Routing, check: ExpressionEvaluator | None,
        kept: _Kept | None = None,
    ) -> tuple[Table, Table]:
        """``,``: each run joined with the candidates at its partition's next instant (a
        shift by one among the partition's instants); runs whose partition has no later
        instant in the batch wait on. ``kept``: what pairing these candidates again
        reuses."""
        kept = _Kept() if kept is None else kept
        at, has = routing.next_index(self._keys(runs), runs.columns[LAST])
        left = runs.take(np.flatnonzero(~has))
        going = runs.take(np.flatnonzero(has))
        at = at[has]
        going = Table({**going.columns, TIME: routing.instant_time[at]}, going.size)
        pairs = _at_instants(going, at, found, routing, kept, self.slot)
        sides = _Sides(going, found, kept.numbers, once=True)
        taken = paired(going, found, *self._decided(sides, *pairs, check))
        return _moved(taken, taken), left

    def _next(
        self, runs: Table, found: Table, check: ExpressionEvaluator | None,
        waited: list[Waited] | None = None,
    ) -> tuple[Table | None, Table]:
        """``;``: the options of the earliest later instant of the run's partition that
        has any are taken, runs without any wait on. Only the runs that could keep some
        candidate of their partition (``_possible``) are asked, and of those, runs alike
        (``_alike``) once, as one: W4's head and shoulders had 1.7 runs per distinct
        one, and 80% of its waiting runs none possible (tested per run before grouping,
        they are neither grouped nor copied). Each run's wait, up to the time it took
        (``Waited``), is added to ``waited``."""
        until = np.full(runs.size, NEVER, dtype=np.int64)
        if waited is not None:
            waited.append((self._keys(runs), runs.columns[START], runs.columns[LAST], until))
        if not found.size:
            return None, runs
        found = found.take(np.lexsort((found.columns[TIME], self._keys(found))))
        kept: dict[int, Numbers] = {}
        ask = self._read(runs, found, check)
        if runs.size * found.size <= FEW:
            asked = group = np.arange(runs.size)
            alike = ask
        else:
            asked = np.flatnonzero(self._possible(_Sides(ask, found, kept), found, ask, check))
            if not len(asked):
                return None, runs
            if len(asked) < runs.size:
                ask = ask.take(asked)
            group, alike = self._alike(ask, found, check)
        one, option, time = self._earliest(alike, found, check, kept)
        took = time[group] != NEVER
        if self.within is not None:  # the latest start's options, cut at each run's
            took[took] = _admits(self.within, ask.columns[START][took], time[group[took]])
        order = np.argsort(one, kind="stable")
        one, option = one[order], option[order]
        count = np.bincount(one, minlength=alike.size)
        first = np.cumsum(count) - count
        members = np.flatnonzero(took)
        count = count[group[members]]
        until[asked[members]] = time[group[members]]
        pairs = paired(runs, found, np.repeat(asked[members], count),
                       option[_ranges(first[group[members]], count)])
        took = np.zeros(runs.size, dtype=bool)
        took[asked[members]] = True
        left = runs.take(np.flatnonzero(~took)) if took.any() else runs
        return (_moved(pairs, pairs) if pairs.size else None), left

    def _read(self, runs: Table, found: Table, check: ExpressionEvaluator | None) -> Table:
        """The runs' columns a ``;`` state's test, grouping and rounds read (START,
        LAST, the partition, the slots the candidates join and the FILTERs read, and
        their carried numbers): taking the runs worth asking copies these, not the
        runs' whole mappings (W4's head and shoulders: 20 columns)."""
        read = set() if check is None else set(check.positions)
        slots = [k for k in runs.columns if k >= 0 and (k in found.columns or k in read)]
        asked = [START, LAST, *slots, *map(carried_slot, slots)]
        asked += [] if self.slot is None else [self.slot]
        return Table({k: runs.columns[k] for k in asked if k in runs.columns}, runs.size)

    def _alike(
        self, runs: Table, found: Table, check: ExpressionEvaluator | None
    ) -> tuple[Ids, Table]:
        """Each run's group of runs alike, and one run of each: runs of one partition
        whose last event is before all its candidates here (or the same), equal on the
        slots the candidates join and the FILTERs read, take the same instant, or none,
        but for WITHIN. A group is asked at its latest start: sliding, an earlier start
        admits a prefix of its instants, so it takes that instant if admitted, else none
        (its own start where tumbling)."""
        if runs.size < 2:
            return np.zeros(runs.size, dtype=np.int64), runs
        read = set() if check is None else set(check.positions)
        slots = sorted(k for k in runs.columns if k >= 0 and k != self.slot
                       and (k in found.columns or k in read))
        last = np.maximum(runs.columns[LAST], int(found.columns[TIME].min()) - 1)
        columns = [self._keys(runs), last, *(runs.columns[k] for k in slots)]
        if self.within is not None and self.within.tumbling:
            columns.append(runs.columns[START])
        first, group = grouped(columns)
        if len(first) == runs.size:
            return np.arange(runs.size), runs
        alike = runs.take(first)  # ``_read``'s columns only
        if self.within is not None and not self.within.tumbling:
            start = np.full(len(first), np.iinfo(np.int64).min, dtype=np.int64)
            np.maximum.at(start, group, runs.columns[START])
            alike.columns[START] = start
        alike.columns[LAST] = last[first]
        return group, alike

    def _earliest(
        self, runs: Table, found: Table, check: ExpressionEvaluator | None,
        kept: dict[int, Numbers],
    ) -> tuple[Ids, Ids, Ids]:
        """The (run, candidate) pairs of each run's earliest instant with options, and
        each run's time then (``NEVER``: none); ``found`` sorted by (key, time). A run
        meets its partition's candidate instants in rounds of doubling width (1, 2, 4 ...
        instants), their candidates a block each, and leaves at the first round giving
        options: joining every run with all its later candidates at once cost runs x
        candidates (W7: 77% of its run), and most runs take one of the first few."""
        keys, times, bounds = _instants(self._keys(found), found.columns[TIME])
        bounds = np.append(bounds, found.size)  # instant k's candidates: bounds[k:k + 2]
        start = _positions(keys, times, self._keys(runs), runs.columns[LAST], side="right")
        stop = np.searchsorted(keys, self._keys(runs), side="right")
        shared = [k for k in runs.columns.keys() & found.columns.keys()
                  if k >= 0 and k != self.slot]
        sides = _Sides(runs, found, kept)
        pending = np.arange(runs.size)
        earliest = np.full(runs.size, NEVER, dtype=np.int64)
        chosen_run: list[Ids] = []
        chosen_option: list[Ids] = []
        offset, width = 0, 1
        while len(pending):
            first = start[pending] + offset
            count = np.minimum(np.maximum(stop[pending] - first, 0), width)  # not clip: slower
            if self.within is not None:  # no instant past WITHIN could be taken
                count[~_admits(self.within, runs.columns[START][pending],
                               times[np.minimum(first, len(times) - 1)])] = 0
            pending, first, count = pending[count > 0], first[count > 0], count[count > 0]
            if not len(pending):
                break
            at = _ranges(first, count)
            sizes = bounds[at + 1] - bounds[at]
            run = np.repeat(np.repeat(pending, count), sizes)
            option = _ranges(bounds[at], sizes)
            compatible = np.ones(len(run), dtype=bool)
            for slot in shared:
                compatible &= runs.columns[slot][run] == found.columns[slot][option]
            run, option = self._decided(sides, run[compatible], option[compatible], check)
            time = found.columns[TIME][option]
            first = np.ones(len(run), dtype=bool)  # by run, then time: a run's first is
            first[1:] = run[1:] != run[:-1]  # its earliest (not ``minimum.at``: slower)
            earliest[run[first]] = time[first]
            chosen = np.flatnonzero(time == earliest[run])
            chosen_run.append(run[chosen])
            chosen_option.append(option[chosen])
            pending = pending[earliest[pending] == NEVER]
            offset, width = offset + width, width * 2
        nothing = np.empty(0, dtype=np.int64)
        return (np.concatenate([nothing, *chosen_run]), np.concatenate([nothing, *chosen_option]),
                earliest)

    def _decided(
        self, sides: _Sides, run: Ids, option: Ids, check: ExpressionEvaluator | None,
    ) -> tuple[Ids, Ids]:
        """The (run, candidate) pairs WITHIN admits and the state's FILTERs over earlier
        elements keep. The FILTERs read a table of their own slots only: building whole
        joined rows for all the pairs cost more than deciding them; and each slot's
        numbers are found once per row of its side, not per pair (``_PairInputs``)."""
        runs, found = sides.runs, sides.found
        admitted = None if self.within is None else _admits(
            self.within, runs.columns[START][run], found.columns[TIME][option])
        ordered = None if check is None else self._ordered(sides, run, option, check)
        if ordered is not None:  # one mask with WITHIN's: a single pass taking the pairs
            keep = ordered if admitted is None else ordered & admitted
            return run[keep], option[keep]
        if admitted is not None:
            run, option = run[admitted], option[admitted]
        if check is None or not len(run):
            return run, option
        read = {slot: runs.columns[slot][run] for slot in check.positions if slot in runs.columns}
        read.update({slot: found.columns[slot][option] for slot in check.positions
                     if slot in found.columns and slot not in read})
        table = Table({**read, RUN: np.arange(len(run))}, len(run))

        def inputs(pairs: Table, numbers: NumericIds, kinds: TermKinds) -> Columns:
            return _PairInputs(pairs, numbers, kinds, sides, run, option)

        kept = vector_filtered(table, check, self.host.physical.slots, self.numbers, inputs)
        return run[kept.columns[RUN]], option[kept.columns[RUN]]

    def _ordered(
        self, sides: _Sides, run: Ids, option: Ids, check: ExpressionEvaluator
    ) -> np.ndarray | None:
        """The pairs ``_decided``'s FILTER keeps (a mask), by integer comparisons of the
        pairs' scaled values (``columnar.orderings``: the same answers), or None where
        that does not apply."""
        compiled = ordering(check, self.host.physical.slots)
        if compiled is None:
            return None
        values = sides.compared(compiled, self.numbers, len(run))
        return None if values is None else pairs_kept(compiled.decide, values, run, option)

    def _possible(
        self, sides: _Sides, found: Table, runs: Table, check: ExpressionEvaluator | None
    ) -> np.ndarray:
        """Which runs could keep any of their partition's candidates (``found``, sorted
        by partition) under the state's FILTER (``orderings.possible``); all of them where
        it does not tell."""
        test = None if check is None else possible(check, self.host.physical.slots)
        compiled = None if check is None else ordering(check, self.host.physical.slots)
        values = None if test is None or compiled is None else sides.scaled(
            compiled.read, self.numbers, 0)
        if test is None or values is None:
            return np.ones(runs.size, dtype=bool)
        keys = self._keys(found)
        starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
        segment = _segments(keys[starts], self._keys(runs))
        present = segment >= 0  # a partition without candidates here: nothing to take
        return runs_possible(test, values.values, np.maximum(segment, 0), starts) & present

    def _keys(self, runs: Table) -> Ids:
        """The runs' partition values (0 for all without PARTITION BY)."""
        return _partition(runs, self.slot)

    def _alive(self, runs: Table, horizon: int) -> Table | None:
        """The runs some instant from ``horizon`` on could still extend (WITHIN)."""
        if self.within is not None and runs.size:
            keep = _admits(self.within, runs.columns[START], np.full(runs.size, horizon))
            runs = runs if keep.all() else runs.take(np.flatnonzero(keep))
        return runs if runs.size else None

    # --- results --------------------------------------------------------------------------
    def _results(self, done: Table | None) -> list[Result]:
        """Each match as a result at its end, the interval its start and end; results of
        one instant ordered as the row engine's partitions release them (``_released``),
        or without PARTITION BY as its ``SequenceQuery`` does (the matches in
        ``_matched_order``, their rows as its bag lists them: ``_bagged``)."""
        if done is None or not done.size:
            return []
        names: list[str] | None = None
        if self.slot is None:
            done = done.take(self._matched_order(done))
            number = np.arange(self.matched + 1, self.matched + 1 + done.size)
            self.matched += done.size
            done = Table({**done.columns, NUMBER: number}, done.size)
        if self.kleene is not None:
            done, names = self._expanded(done)
        slots = self.host.physical.slots
        root = self.host.physical.root
        kept = set(root.slots) if isinstance(root, po.Keep) else set(range(self.width))
        named = sorted(((slots.names[i], done.columns[i]) for i in range(self.width)
                        if i in kept and i in done.columns and slots.visible(slots.names[i])
                        and slots.names[i] not in HIDDEN), key=lambda pair: pair[0])
        interval = FROM in slots.names and kept & {slots.index(FROM), slots.index(TO)}
        decode = self.dictionary.decode
        ids = distinct_ids(np.concatenate([c for _, c in named])) if named else np.empty(0, int)
        terms = {i: decode(i) for i in ids.tolist()}
        starts, ends = done.columns[START], done.columns[LAST]
        if self.slot is None:  # matches in ``_matched_order``, each instant's rows a bag
            match = [done.columns[MATCH]] if MATCH in done.columns else []
            order = _bagged([ends, *match, *([starts] if interval else []),
                             *(c for _, c in named)])
        else:
            order = _released(ends, starts if interval else None, names,
                              [c for _, c in named], terms, done.columns.get(MATCH))
        bindings = [_bindings(variable, c[order], terms) for variable, c in named]
        solutions = (list(map(Solution, zip(*bindings, strict=True))) if named
                     else [Solution()] * len(order))
        starts, ends = starts[order].tolist(), ends[order].tolist()
        matches = [None] * len(order) if names is None else [names[k] for k in order.tolist()]
        intervals = list(zip(starts, ends, strict=True)) if interval else [None] * len(order)
        return Result.of_solutions(self.name, "+", ends, solutions, intervals, matches)

    # --- state ------------------------------------------------------------------------
    def state_size(self) -> dict[str, int]:
        live = [r for r in self.runs if r is not None]
        keys = (
            np.unique(np.concatenate([self._keys(r) for r in live]))
            if live else np.empty(0, int)
        )
        return {"partitions": len(keys), "runs": sum(r.size for r in live), "dropped_runs": 0}

    def snapshot(self) -> Snapshot:
        """Each waiting run as a row: state, start, last, then its mapping (width slots,
        None where unbound) and, with ``B+``, its iteration id; then the iterations
        (owner, rank, their width slots) and the live partitions' labels."""
        rows: list[tuple] = [("clock", self.clock), ("issued", self.issued),
                             ("instant", self.instant), ("matched", self.matched)]
        runs = []
        for position, table in enumerate(self.runs):
            if table is None:
                continue
            mapping = table.rows(self.width)
            starts, lasts = table.columns[START].tolist(), table.columns[LAST].tolist()
            tail = table.columns.get(ITER, np.full(table.size, -1)).tolist()
            runs += [(position, s, e, *m, *([k] if self.kleene is not None else []))
                     for s, e, m, k in zip(starts, lasts, mapping, tail, strict=True)]
        state: Snapshot = {"clock": rows, "runs": runs}
        if self.kleene is not None:
            own = self.iterations
            state["iterations"] = [] if own is None else [
                (o, k, *m) for o, k, m in zip(own.columns[OWNER].tolist(),
                                              own.columns[ORDER].tolist(),
                                              own.rows(self.width), strict=True)]
            state["labels"] = self.labels.rows()
        return state

    def restore(self, snapshot: Snapshot) -> None:
        """Resume from ``snapshot()`` rows (the dictionary is restored by its owner)."""
        clock = dict(snapshot["clock"])
        self.clock, self.instant = clock.get("clock"), clock.get("instant")
        self.issued = clock.get("issued") or 0
        self.matched = clock.get("matched") or 0
        self.runs = [None] * len(self.states)
        by_state: dict[int, list] = {}
        for position, start, last, *mapping in snapshot["runs"]:
            by_state.setdefault(position, []).append((start, last, mapping))
        for position, rows in by_state.items():
            table = _table([r[2][: self.width] for r in rows])
            columns = {**table.columns, START: np.array([r[0] for r in rows], dtype=np.int64),
                       LAST: np.array([r[1] for r in rows], dtype=np.int64)}
            if self.kleene is not None and position >= self.kleene:
                columns[ITER] = np.array([r[2][self.width] for r in rows], dtype=np.int64)
            self.runs[position] = Table(columns, len(rows))
        own = snapshot.get("iterations", [])
        self.iterations = None if not own else Table(
            {**_table([r[2:] for r in own]).columns,
             OWNER: np.array([r[0] for r in own], dtype=np.int64),
             ORDER: np.array([r[1] for r in own], dtype=np.int64)}, len(own))
        self.labels = Labels.of_rows(snapshot.get("labels", []))


@dataclass(slots=True)
class _Kept:
    """What pairing the same candidates again reuses (a ``B+`` state's iterations within a
    span, W6's 5 per span): their numbers by slot (``_Sides``), and their instants'
    indices (``_at_instants``), sorted, with the order that sorts them."""

    numbers: dict[int, Numbers] = field(default_factory=dict)
    instants: tuple[Ids, Ids] | None = None


@dataclass(slots=True)
class _Sides:
    """The runs and candidates a state pairs, with each side's numbers of a slot found
    once (by ``Columns``, so exactly as per pair) for all the pairs asked of them."""

    runs: Table
    found: Table
    kept: dict[int, Numbers] | None = None
    """The candidates' numbers by slot, kept by a caller that pairs the same candidates
    again (a ``B+`` state's iterations, W6's 5 per span): each read whole, once."""
    once: bool = False
    """Whether the pairs are asked once (a strict step), not in rounds (``_earliest``)."""
    known: dict[int, tuple[Numbers, bool]] = field(default_factory=dict)
    ordered: Scaled | None = None
    """``scaled``'s answer once asked (no values: None)."""
    sided: dict[Operand, tuple[Ids, bool]] | None = None
    """``compared``'s answer once asked (empty: None)."""

    def numbers(
        self, slot: int, numbers: NumericIds, pairs: int
    ) -> tuple[Numbers, bool] | None:
        """A slot's numbers per row of the side it is read from (the runs' where both
        bind it, as ``_decided`` reads it), and whether that side is the runs'; None
        where neither binds it, or, pairs asked ``once``, where that side has more rows
        than the ``pairs`` and is neither ``kept`` nor carried (they are read per pair
        then: a strict step's few pairs met a whole span's candidates)."""
        if slot not in self.known:
            of_runs = slot in self.runs.columns
            side = self.runs if of_runs else self.found
            if slot not in side.columns:
                return None
            kept = None if of_runs else self.kept
            found = carried(side, slot) if of_runs else None
            if found is None and kept is None and self.once and side.size > pairs:
                return None
            if kept is not None and slot in kept:
                self.known[slot] = kept[slot], False
                return self.known[slot]
            column = side.columns[slot]
            if found is None:  # known by then: the runs' were candidates, and a span's
                found = read_numbers(column, numbers)  # are learnt as its runs are made
            if kept is not None:
                kept[slot] = found
            self.known[slot] = found, of_runs
        return self.known[slot]

    def scaled(
        self, read: frozenset[int], numbers: NumericIds, pairs: int
    ) -> Scaled | None:
        """Each slot's values on a common integer scale per row of its side
        (``orderings.scaled``), and whether that side is the runs'; None where a slot's
        numbers are not read whole (``numbers``) or not all sure. Found once for all the
        rounds asking these sides."""
        if self.ordered is None:
            found = {slot: self.numbers(slot, numbers, pairs) for slot in sorted(read)}
            known = {slot: side for slot, side in found.items() if side is not None}
            values = scaled([n for n, _ in known.values()]) if len(known) == len(read) else None
            self.ordered = Scaled({}, 0) if values is None else Scaled({
                slot: (value, of_runs) for (slot, (_, of_runs)), value in zip(
                    known.items(), values[0], strict=True)}, values[1])
        return self.ordered if self.ordered.values else None

    def compared(
        self, order: Ordering, numbers: NumericIds, pairs: int
    ) -> dict[Operand, tuple[Ids, bool]] | None:
        """Each side ``order`` compares on one integer scale per row of its slot's side
        (``orderings.on_one_scale``); None where a slot's values are not ``scaled`` or a side
        would not fit. Found once for all the rounds asking these sides."""
        if self.sided is None:
            values = self.scaled(order.read, numbers, pairs)
            found = None if values is None else on_one_scale(order.terms, values)
            self.sided = found or {}
        return self.sided or None


class _PairInputs(Columns):
    """A FILTER's inputs over (run, candidate) pairs: a slot's numbers gathered from its
    side's (``_Sides``), not found again per pair (a sort of each pair column cost
    most of a ``;`` state's step: W4's head and shoulders asks 37M pairs)."""

    def __init__(
        self, table: Table, numbers: NumericIds, kinds: TermKinds, sides: _Sides, run: Ids,
        option: Ids,
    ) -> None:
        super().__init__(table, numbers, kinds)
        self.sides, self.run, self.option = sides, run, option

    def column(self, slot: int) -> Numbers:
        if slot not in self._found:
            known = self.sides.numbers(slot, self.numbers, self.size)
            if known is None:  # the pairs' own ids, as the table holds them
                return super().column(slot)
            side, of_runs = known
            at = self.run if of_runs else self.option
            self._found[slot] = Numbers(side.state[at], side.digits[at], side.mantissa[at])
        return self._found[slot]


def _at_instants(
    runs: Table, at: Ids, found: Table, routing: Routing, kept: _Kept, slot: int | None,
    owner: Ids | None = None,
) -> tuple[Ids, Ids]:
    """The (run, candidate) pairs at each run's instant (``at``, an index among the
    routing's instants) equal on the slots both bind besides the partition's (``slot``):
    the pairs ``join_pairs`` gives with the instant's time (by run, then candidate), from
    the candidates' instants found once (``kept``), not from a join's keys packed and
    sorted per call. ``owner``: the run each instant asked is of (several per run, in
    order), else one each."""
    if kept.instants is None:
        index, has = routing.next_index(_partition(found, slot), found.columns[TIME] - 1)
        has[has] = routing.instant_time[index[has]] == found.columns[TIME][has]
        index = np.where(has, index, -1)  # each is at an instant of its own: a safeguard
        order = np.argsort(index, kind="stable")
        kept.instants = index[order], order
    index, order = kept.instants
    lo = np.searchsorted(index, at, side="left")
    count = np.searchsorted(index, at, side="right") - lo
    run = np.repeat(np.arange(len(at)) if owner is None else owner, count)
    option = order[_ranges(lo, count)]
    compatible = np.ones(len(run), dtype=bool)
    for k in runs.columns.keys() & found.columns.keys():
        if k >= 0 and k != slot:
            compatible &= runs.columns[k][run] == found.columns[k][option]
    return run[compatible], option[compatible]


def _partition(table: Table, slot: int | None) -> Ids:
    """The rows' partition values (0 for all without PARTITION BY)."""
    return np.zeros(table.size, dtype=np.int64) if slot is None else table.columns[slot]


def _table(mappings: list) -> Table:
    """Rows of width slots (None where unbound) as a table of their bound slots."""
    bound = [i for i, v in enumerate(mappings[0]) if v is not None] if mappings else []
    return Table({i: np.array([m[i] for m in mappings], dtype=np.int64) for i in bound},
                 len(mappings))


def _bindings(variable: str, column: Ids, terms: dict[int, Term]) -> list[tuple[str, Term]]:
    """A column's (variable, term) pairs, one tuple per distinct id shared by its rows
    (a Kleene match's rows repeat its earlier elements' values): a gather, not a tuple
    built per row; a few rows by a list."""
    if len(column) <= SMALL:
        return [(variable, terms[i]) for i in column.tolist()]
    ids, inverse = np.unique(column, return_inverse=True)
    pairs = np.fromiter(((variable, terms[i]) for i in ids.tolist()), dtype=object,
                        count=len(ids))
    return pairs[inverse.reshape(-1)].tolist()


def _concat(tables: list[Table]) -> Table:
    """Tables of the same columns, one after the other (the carried numbers all of
    them carry: a part without some finds them again)."""
    if len(tables) == 1:
        return tables[0]
    keys = [k for k in tables[0].columns
            if not is_carried(k) or all(k in t.columns for t in tables)]
    return Table({k: np.concatenate([t.columns[k] for t in tables]) for k in keys},
                 sum(t.size for t in tables))


def _positions(
    keys: Ids, times: Ids, key: Ids, time: Ids, side: Literal["left", "right"] = "left"
) -> Ids:
    """The index of each (key, time) among pairs sorted by (key, time) (each present;
    ``side`` right: the index past the pairs up to it, present or not)."""
    both_keys, both_times = np.concatenate([keys, key]), np.concatenate([times, time])
    if not len(both_keys):
        return np.zeros(0, dtype=np.int64)
    low_key, low_time = int(both_keys.min()), int(both_times.min())
    span = int(both_times.max()) - low_time + 1
    if (int(both_keys.max()) - low_key + 1) * span < WIDE:  # packed as they are: no sort
        codes = (both_keys - low_key) * span + (both_times - low_time)
    else:
        rank = ranked(both_times)
        codes = ranked(both_keys) * (int(rank.max()) + 1) + rank
    return np.searchsorted(codes[: len(keys)], codes[len(keys) :], side=side)


def _segments(among: Ids, keys: Ids) -> Ids:
    """Each key's index among the sorted distinct ``among``, -1 where absent: a lookup
    table over their range where it is small (a binary search of each of a state's
    thousands of runs among its partitions, in no order, cost more than its test)."""
    if not len(among):
        return np.full(len(keys), -1, dtype=np.int64)
    low, high = int(among[0]), int(among[-1])
    if high - low < 4 * (len(keys) + len(among)) + 4096:
        table = np.full(high - low + 1, -1, dtype=np.int64)
        table[among - low] = np.arange(len(among))
        inside = (keys >= low) & (keys <= high)
        return np.where(inside, table[np.minimum(np.maximum(keys - low, 0), high - low)], -1)
    at = np.minimum(np.searchsorted(among, keys), len(among) - 1)
    return np.where(among[at] == keys, at, -1)


def _instants(keys: Ids, times: Ids) -> tuple[Ids, Ids, Ids]:
    """The distinct (key, time) pairs of rows sorted by them, and the first row of each:
    ``unique_rows`` without its sort."""
    head = np.ones(len(keys), dtype=bool)
    head[1:] = (keys[1:] != keys[:-1]) | (times[1:] != times[:-1])
    first = np.flatnonzero(head)
    return keys[first], times[first], first


def _block_ends(keys: Ids) -> Ids:
    """For each of sorted ``keys``: the index past the last equal to it."""
    last = np.flatnonzero(np.append(keys[1:] != keys[:-1], True)) if len(keys) else keys
    return np.repeat(last + 1, np.diff(last, prepend=-1))


def _ranges(first: Ids, count: Ids) -> Ids:
    """The concatenated ranges [first, first + count) (counts >= 0)."""
    total = int(count.sum())
    return np.repeat(first - (np.cumsum(count) - count), count) + np.arange(total)


def _runs_of(ties: Ids) -> list[tuple[int, int]]:
    """Maximal [lo, hi) spans of a sorted order whose neighbours tie (``ties``: the i
    with order[i] tied to order[i + 1])."""
    spans: list[tuple[int, int]] = []
    for i in ties.tolist():
        if spans and spans[-1][1] == i + 1:
            spans[-1] = (spans[-1][0], i + 2)
        else:
            spans.append((i, i + 2))
    return spans


def _texts(row: tuple, text: Callable[[int], str]) -> tuple[str, ...]:
    return tuple("" if v is None else text(v) for v in row)


def _moved(taken: Table, times: Table) -> Table:
    """Runs that took a candidate: its time is their last; ``times`` gives START for
    the first element (else it is kept)."""
    columns = {k: v for k, v in taken.columns.items() if k not in (TIME, RUN, ELEMENT)}
    columns[LAST] = taken.columns[TIME]
    columns.setdefault(START, times.columns.get(START, taken.columns[TIME]))
    return Table(columns, taken.size)


def _union(carried: Table | None, made: Table | None) -> Table | None:
    """Runs waiting in a state: those carried over (each once already) and those just
    made, each once. No run is both: a carried run's last event is before the span, a
    made one's in it; so only the made ones are made distinct (the rows and their order
    are ``distinct`` of both, at the cost of the span's runs, not of all live ones)."""
    made = None if made is None or not made.size else distinct(made)
    tables = [t for t in (carried, made) if t is not None and t.size]
    return _concat(tables) if tables else None


def _admits(within: Within, start: Ids, end: Ids) -> np.ndarray:
    """``Within.admits`` on columns."""
    if within.tumbling:
        return start // within.width == end // within.width
    return end - start <= within.width



def _released(
    ends: Ids, starts: Ids | None, names: list[str] | None, columns: list[Ids],
    terms: dict[int, Term], match: Ids | None = None,
) -> Ids:
    """The order results are released in: by time, those of one instant by their jsonl
    text (``partition.result_order``, the row engine's partitions' order), found without
    writing a line. The lines of one instant share their query, time, op and keys and
    differ first in ``from`` (a number's text, followed by a comma, below every digit),
    then ``match``, then the binding's values by name (JSON strings: a JSON string is
    never a proper prefix of another), so their order is that of these parts' texts
    compared one after the other: a sort of ranks, each part's asked only of the rows
    the parts before leave tied. ``match``: each row's match, whose rows share a name."""
    parts: list[tuple[Ids | None, Callable[[Ids], Ids]]] = []
    if starts is not None:
        parts.append((starts, lambda rows: _number_ranks(starts[rows])))
    if names is not None:
        parts.append((match, lambda rows: _ranks([names[i] for i in rows.tolist()])))
    parts += [(c, _term_ranks(c, terms)) for c in columns]
    order = np.argsort(ends, kind="stable")
    keys = [ends[order]]
    for values, part in parts:
        same = _same(keys)
        if not same.any():
            break
        if values is not None:
            ordered = values[order]  # equal among the rows tied so far (a Kleene match's
            if (ordered[1:][same] == ordered[:-1][same]).all():  # rows share all but the
                continue  # iterations' variables): their texts would break no tie
        tied = np.zeros(len(order), dtype=bool)
        tied[1:] = same
        tied[:-1] |= same
        ranks = np.zeros(len(order), dtype=np.int64)
        ranks[tied] = part(order[tied])
        keys.append(ranks)
        resorted = np.lexsort(keys[::-1])
        order, keys = order[resorted], [k[resorted] for k in keys]
    return order


def _bagged(columns: list[Ids]) -> Ids:
    """The order ``SequenceQuery`` releases rows in: each instant's rows are a bag (a
    ``Counter``, ``r2s.forms``), which lists each distinct row where it first occurs
    and its repeats right after it. Repeats are a Kleene match's iterations alike (its
    rows ``a, b, a`` come out ``a, a, b``) or matches alike in the SELECT's variables;
    ``columns``: what tells the lines apart (the time first: equal rows share an
    instant)."""
    size = len(columns[0])
    if size <= SMALL:
        seen: dict[tuple, list[int]] = {}
        for at, row in enumerate(zip(*(c.tolist() for c in columns), strict=True)):
            seen.setdefault(row, []).append(at)
        return np.fromiter((at for ats in seen.values() for at in ats), dtype=np.int64,
                           count=size)
    first, group = grouped(columns)
    if len(first) == size:
        return np.arange(size)
    return np.argsort(first[group], kind="stable")


def _same(keys: list[Ids]) -> np.ndarray:
    """Whether each sorted row is equal to the next on every key."""
    same = np.ones(len(keys[0]) - 1, dtype=bool) if len(keys[0]) else np.ones(0, dtype=bool)
    for key in keys:
        same &= key[1:] == key[:-1]
    return same


def _term_ranks(column: Ids, terms: dict[int, Term]) -> Callable[[Ids], Ids]:
    """The ranks of a column's terms at the rows asked, by their JSON text."""
    return lambda rows: _text_ranks(column[rows], lambda i: _json(term_to_nt(terms[i])))


def _ranks(texts: list[str]) -> Ids:
    """Each match name's rank among those given, by its JSON text."""
    ranked = {n: k for k, n in enumerate(sorted(set(texts), key=_json))}
    return np.array([ranked[n] for n in texts], dtype=np.int64)


def _number_ranks(values: Ids) -> Ids:
    """``_text_ranks`` of integers by their decimal texts: their numeric ranks where all
    are non-negative and of one length (times in milliseconds since 1970), else by text."""
    low, high = (int(values.min()), int(values.max())) if len(values) else (0, 0)
    if low < 0 or len(str(low)) != len(str(high)):
        return _text_ranks(values, str)
    return np.searchsorted(distinct_ids(values), values)


def _text_ranks(values: Ids, text: Callable[[int], str]) -> Ids:
    """Each value's rank among the column's distinct values ordered by their ``text``
    (a few rows in Python)."""
    if len(values) <= SMALL:
        listed = values.tolist()
        by_text = sorted(sorted(set(listed)), key=text)
        rank_of = {v: k for k, v in enumerate(by_text)}
        return np.array([rank_of[v] for v in listed], dtype=np.int64)
    distinct_values = distinct_ids(values)
    by_text = sorted(range(len(distinct_values)),
                     key=[text(v) for v in distinct_values.tolist()].__getitem__)
    rank = np.empty(len(distinct_values), dtype=np.int64)
    rank[by_text] = np.arange(len(distinct_values))
    return rank[np.searchsorted(distinct_values, values)]


_json: Callable[[str], str] = encode_basestring
"""A string as the jsonl writer prints it (``json.dumps(text, ensure_ascii=False)``)."""
