"""A window query evaluated over columns: the row engine's clock, the columnar windows and
joins.

``ColumnarQuery`` is a ``ContinuousQuery`` whose windows are ``ColumnWindow``s and whose
evaluation runs the physical plan over ``Table``s: scans as masks over a window's (s, p, o)
columns, joins as vector joins, projections and DISTINCT on columns; a FILTER of numeric
comparisons and arithmetic is decided on columns where exact (``columnar.comparisons``),
the rest once per distinct combination of the values it reads (the row engine's
evaluator, so its answers are the same), not once per row. Everything about time
(report policy, instants between arrivals, the end-of-input flush, watermarks) and state
rows is inherited, so the two paths agree by construction on when they answer and differ
only in how.

A BIND is evaluated, as a FILTER is, once per distinct combination of the values it
reads; where it raises an error the column holds ``NO_ID`` (unbound), and so do the
aggregates a GROUP BY (``columnar.groups``) leaves unbound. Only those two make a column
that is unbound in some rows: a join on such a variable stays on the row engine.

``uncovered`` says why a query is not for this path (``None``: it is): event patterns,
DESCRIBE, RDFS entailment, C-SPARQL's timestamp() and the plan operators without a
columnar form (OPTIONAL, UNION, MINUS, VALUES, property paths, fallbacks: aggregates
other than COUNT, SUM, AVG, MIN, MAX of a variable among them) stay on the row engine.
``advance_columns`` takes a whole batch of elements as columns at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from itertools import repeat
from typing import Literal

import numpy as np

from sepia.algebra import query as qa
from sepia.engine.columnar.batch import ColumnBatch, ReadNumbers
from sepia.engine.columnar.comparisons import vector_filtered
from sepia.engine.columnar.groups import NumericIds, group_by
from sepia.engine.columnar.tables import (
    NO_ID,
    Table,
    Triples,
    distinct_inputs,
    join,
    join_all,
    match_pattern,
    terms_of,
)
from sepia.engine.columnar.windows import ColumnWindow
from sepia.engine.plan.physical import PhysicalQuery, WindowPlan
from sepia.engine.query.continuous import ContinuousQuery, Snapshot
from sepia.engine.query.windowed import WindowQuery
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.aggregates import GroupBy
from sepia.engine.r2r.expressions import ExpressionEvaluator
from sepia.engine.r2r.numbers import Terms
from sepia.engine.r2s import streams as r2s
from sepia.engine.rows import HIDDEN
from sepia.engine.s2r.report import Arrivals
from sepia.rdf.order import ordered
from sepia.rdf.results import Result, Solution

COVERED = (po.Scan, po.HashJoin, po.MultiJoin, po.Keep, po.Dedup, po.Select, po.Bind, GroupBy)
"""The plan operators with a columnar form (GROUP BY: COUNT, SUM, AVG, MIN, MAX of a
variable, and PARTIAL_SUM; other aggregates are pyoxigraph's ``Fallback``)."""
MAYBE_UNBOUND = ("SUM", "AVG", "MIN", "MAX")
"""Aggregates that leave a group's value unbound on an error (not PARTIAL_SUM, whose state
counts the errors: always bound)."""
NUMERIC = (*MAYBE_UNBOUND, "PARTIAL_SUM")
"""Aggregates that read their values' numbers."""


def uncovered(engine: ContinuousQuery, costed: bool = True) -> str | None:
    """Why a planned query does not run on the columnar path, or None when it does;
    ``costed``: also when the row engine would be faster (reports at arrivals)."""
    if engine.background.schema is not None:
        return "RDFS entailment runs on the row engine"
    return plan_uncovered(engine.physical, costed)


def plan_uncovered(physical: PhysicalQuery, costed: bool = True) -> str | None:
    """``uncovered`` from the plan alone (RDFS entailment, a run option, aside)."""
    if not isinstance(physical.kind, WindowPlan):
        return "event patterns run on the row engine"
    if isinstance(physical.query.form, qa.Describe):
        return "DESCRIBE runs on the row engine"
    if costed and physical.schedule is not None and not physical.schedule.time_driven:
        return (
            "a report at arrivals (content change, landmark, NOW or count windows): the row "
            "engine's delta evaluation updates the answer per element, the columnar core "
            "would recompute it"
        )
    return _operator_uncovered(physical.root)


def _operator_uncovered(node: po.PhysicalPlan) -> str | None:
    if not isinstance(node, COVERED):
        return f"{type(node).__name__} has no columnar form yet"
    match node:
        case po.Scan(graphs, _):
            if any(isinstance(g, po.EventGraph) for g in graphs):
                return "a scan of an event graph"
            return None
        case po.Select(inner, condition) | po.Bind(inner, _, condition):
            if condition.volatile:
                return "an expression reading the windows (C-SPARQL timestamp())"
            return _operator_uncovered(inner)
        case po.HashJoin(left, right, _):
            return _joined_uncovered((left, right))
        case po.MultiJoin(inputs, _):
            return _joined_uncovered(inputs)
        case po.Keep(inner, _) | po.Dedup(inner) | GroupBy(inner=inner):
            return _operator_uncovered(inner)
    return None


def _joined_uncovered(inputs: tuple[po.PhysicalPlan, ...]) -> str | None:
    """A join's inputs, and whether it joins on a variable a BIND or an aggregate may
    leave unbound in some rows (the vector join needs its keys bound in every row)."""
    found = next((r for r in map(_operator_uncovered, inputs) if r), None)
    if found:
        return found
    for i, left in enumerate(inputs):
        for right in inputs[i + 1 :]:
            shared = _bound(left) & _bound(right)
            if shared & (_maybe_unbound(left) | _maybe_unbound(right)):
                return "a join on a variable a BIND or an aggregate may leave unbound"
    return None


def _copied(value: ExpressionEvaluator) -> int | None:
    """The slot an expression that is one variable reads (a SELECT's ``(AVG(?p) AS ?a)``
    binds ?a to a copy of the aggregate's slot), else None."""
    if len(value.positions) == 1 and value.text == f"?{value.names[0]}":
        return value.positions[0]
    return None


def _bound(node: po.PhysicalPlan) -> set[int]:
    """The slots a (covered) node may bind."""
    match node:
        case po.Scan(_, patterns):
            return {p.index for t in patterns for p in t if isinstance(p, po.Slot)}
        case po.HashJoin(left, right, _):
            return _bound(left) | _bound(right)
        case po.MultiJoin(inputs, _):
            return set().union(*map(_bound, inputs))
        case po.Keep(inner, slots):
            return _bound(inner) & set(slots)
        case po.Bind(inner, slot, _):
            return _bound(inner) | {slot}
        case GroupBy(inner=inner, keys=keys, aggregates=specs):
            return (_bound(inner) & set(keys)) | {a.target for a in specs}
        case po.Select(inner, _) | po.Dedup(inner):
            return _bound(inner)
    return set()


def _maybe_unbound(node: po.PhysicalPlan) -> set[int]:
    """The slots a (covered) node may leave unbound in some of its rows only (``NO_ID``
    in a column): a BIND's, an aggregate's that can fail, and what carries them."""
    match node:
        case po.Bind(inner, slot, value):
            source = _copied(value)
            unbound = _maybe_unbound(inner)
            return unbound | {slot} if source is None or source in unbound else unbound
        case GroupBy(inner=inner, keys=keys, aggregates=specs):
            failing = {a.target for a in specs if a.function in MAYBE_UNBOUND}
            return (_maybe_unbound(inner) & set(keys)) | failing
        case po.HashJoin(left, right, _):
            return _maybe_unbound(left) | _maybe_unbound(right)
        case po.MultiJoin(inputs, _):
            return set().union(*map(_maybe_unbound, inputs))
        case po.Keep(inner, slots):
            return _maybe_unbound(inner) & set(slots)
        case po.Select(inner, _) | po.Dedup(inner):
            return _maybe_unbound(inner)
    return set()


class ColumnarQuery(ContinuousQuery):
    """A window query whose windows are columns and whose plan runs on ``Table``s."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._numbers = NumericIds(Terms(self.dictionary))
        """The numeric values of the terms FILTERs and aggregates read (a cache)."""
        self._taught: ReadNumbers | None = None
        """The reader's numbers last taught to ``_numbers`` (a block's slices share them)."""
        self.columns = {n: self._learning(ColumnWindow(op))
                        for n, (_, op) in self.physical.windows.items()}
        """The windows as columns. ``windows``, which the inherited clock and state rows
        step, is the same dict: a ``ColumnWindow`` answers every call that code makes of a
        ``WindowState`` (insert, advance, next_eviction, rows, len)."""
        self.windows = self.columns  # type: ignore[assignment]  # a stand-in, see columns
        self.delta = None  # the whole answer is recomputed: a vector join is cheap
        self._background: dict[tuple, Triples] = {}
        self._width = len(self.physical.slots.names)

    def _learning(self, window: ColumnWindow) -> ColumnWindow:
        """The window, told to learn its pushed objects' numbers ahead of the evaluations
        when a SUM, AVG, PARTIAL_SUM, MIN or MAX reads them (``NumericIds.learn``; the batch path's
        evaluations learn a batch's at once)."""
        if _aggregates_numbers(self.physical.root):
            window.learner = self._numbers.learn
        return window

    def predicates(self) -> frozenset[str] | None:
        """The predicate IRIs the plan's scans read; None when one reads a variable."""
        found: set[str] = set()
        for patterns in _scans(self.physical.root):
            for _, p, _ in patterns:
                if not isinstance(p, po.Constant):
                    return None
                found.add(self.dictionary.decode_text(p.id)[1:-1])
        return frozenset(found)

    @property
    def windowed(self) -> WindowQuery:
        """The query's kind: a window query (``uncovered`` keeps the others on rows)."""
        assert isinstance(self.kind, WindowQuery)
        return self.kind

    # --- the batch path -----------------------------------------------------------------
    def advance_columns(self, batch: ColumnBatch) -> list[Result]:
        """Every result due through the batch's last time, given the elements of the batch
        (in time order; ``advance`` at each distinct time, without the per-element work).

        Windows receive the batch in slices between due instants; an instant is due or
        not by the inherited report logic, asked once per distinct time of the batch only
        when the schedule is not time-driven (else once per due instant)."""
        kind = self.windowed
        relevant = batch.of_streams(kind.streams)
        results = kind.once()
        if not len(relevant):
            return results
        self._teach(relevant.numbers)
        times = relevant.times
        if self.clock is not None and times[0] <= self.clock:
            raise ValueError(f"time went back: {int(times[0])} after {self.clock}")
        if kind.low is None:
            kind.low = int(times[0])
        schedule = self.physical.schedule
        if schedule is not None and schedule.time_driven:
            results += self._driven(relevant)
        else:
            for t, part in relevant.instants():
                results += kind.between(t)
                arrived = self._insert_columns(part)
                if kind.due_at(t, arrived):
                    results += self.evaluate(t)
                self.clock = t
        return results

    def _teach(self, read: ReadNumbers | None) -> None:
        """The integers and decimals the reader worked out for a block, taught to the
        values an aggregate reads (as ``PartitionedSequence`` is taught): else each
        evaluation reads its new values from their texts one by one (W3 at 300,000
        elements: 80,374 prices, 0.3 s of its 0.43 s seeking values)."""
        fresh = read is not None and read is not self._taught
        if fresh and _aggregates_numbers(self.physical.root):
            assert read is not None
            self._numbers.taught(read.ids, read.kind, read.digits, read.mantissa)
            self._taught = read

    def _driven(self, batch: ColumnBatch) -> list[Result]:
        """A time-driven schedule: due instants come from time alone; an arrival instant is
        due exactly when ``between`` lists it (``Schedule.time_driven``)."""
        schedule = self.physical.schedule
        assert schedule is not None
        last = int(batch.times[-1])
        kind = self.windowed
        low = kind.low
        assert low is not None  # advance_columns set it
        after = low - 1 if self.clock is None else max(self.clock, low - 1)
        results, done = [], 0
        while (due := schedule.next_due(after, last + 1)) is not None and due <= last:
            upto = int(np.searchsorted(batch.times, due, side="right"))
            self._insert_columns(batch.slice(done, upto))
            done = upto
            out = self.evaluate(due)
            results += out
            after = due
            if not out:  # quiet until the windows change or the next element arrives
                arrival = int(batch.times[done]) if done < len(batch) else last + 1
                change = self.next_change(due)
                until = arrival if change is None else min(change, arrival)
                after = max(due, min(until, last + 1) - 1)
        self._insert_columns(batch.slice(done, len(batch)))
        kind.quiet = (after, due)  # next_due's promise: nothing due in between
        self.clock = last
        return results

    def _insert_columns(self, batch: ColumnBatch) -> Arrivals:
        """A slice of elements enters the windows over their streams."""
        if not len(batch):
            return Arrivals()
        admitted = set()
        last = int(batch.times[-1])
        for column in self.columns.values():
            column.advance(int(batch.times[0]))
        for stream, part in batch.by_stream():
            self.last_arrival[stream] = int(part.times[-1])
            for name in self.readers_of.get(stream, ()):
                window = self.columns[name]
                keep = part.select(window.admitted(part.times))
                if len(keep):
                    window.extend(*keep.window_columns())
                    admitted.add(name)
        for column in self.columns.values():
            column.advance(last)
        return Arrivals(frozenset(admitted))

    # --- one evaluation -----------------------------------------------------------------
    def evaluate(self, t: int) -> list[Result]:
        self.now = t
        for window in self.columns.values():
            window.advance(t)
        schedule = self.physical.schedule
        if schedule is not None and not all(
            any(len(self.columns[w]) for w in schedule.scope(c)) for c in schedule.conditions
        ):
            return []
        table = self._run(self.physical.root)
        now = self._bag(table)
        self.previous, out = r2s.step(self.operator, self.previous, now)
        return self.stream_out(t, out)

    def _bag(self, table: Table) -> Counter[tuple]:
        """The answer bag of the query form (SELECT straight from the columns)."""
        form = self.query.form
        if isinstance(form, qa.Ask):
            return Counter({(table.size > 0,): 1})
        if isinstance(form, qa.Construct):
            return self.form.answer(table.rows(self._width), None)  # type: ignore[arg-type]
        slots = self.physical.slots
        kept = [i for i, n in enumerate(slots.names) if slots.visible(n) or n in HIDDEN]
        columns = [
            terms_of(table.columns[i]) if i in table.columns else [None] * table.size
            for i in kept
        ]
        return Counter(zip(*columns, strict=True)) if kept else Counter({(): table.size})

    def stream_out(self, t: int, bag: Counter[tuple]) -> list[Result]:
        """SELECT rows as results, each distinct id decoded once and each distinct row
        made once (a row counted n times is n equal results)."""
        slots = self.physical.slots
        names = [n for n in slots.names if slots.visible(n) or n in HIDDEN]
        if not bag or not isinstance(self.query.form, qa.Select) or set(names) & set(HIDDEN):
            return super().stream_out(t, bag)
        op: Literal["+", "-"] = "-" if self.operator is qa.DStream else "+"
        order = sorted(range(len(names)), key=names.__getitem__)
        by_name = [names[i] for i in order]
        decode = self.dictionary.decode
        ids = set().union(*bag)
        unbound = None in ids
        ids.discard(None)
        terms = {i: decode(i) for i in ids}
        term = terms.__getitem__
        if unbound:  # rows that leave a variable unbound leave it out
            bindings: Iterable[Solution] = [
                Solution([(n, term(row[i])) for n, i in zip(by_name, order, strict=True)
                          if row[i] is not None])
                for row in bag
            ]
        else:  # column by column: the pairs made by zip and map, not per row
            columns = list(zip(*bag, strict=True))
            named = [zip(repeat(n), map(term, columns[i])) for n, i in zip(by_name, order,
                                                                           strict=True)]
            bindings = map(Solution, zip(*named, strict=True)) if named else [
                Solution()] * len(bag)
        out: list[Result] = []
        make, name = Result.of_solution, self.name
        for binding, count in zip(bindings, bag.values(), strict=True):
            if count == 1:
                out.append(make(name, t, op, binding))
            else:
                out += [make(name, t, op, binding)] * count
        return ordered(out, self.query.order) if self.query.order else out

    def _run(self, node: po.PhysicalPlan) -> Table:
        match node:
            case po.Scan(graphs, patterns):
                graph = Triples.union([self._graph(g) for g in graphs])
                return join_all([match_pattern(graph, p) for p in patterns])
            case po.HashJoin(left, right, _):
                return join(self._run(left), self._run(right))
            case po.MultiJoin(inputs, _):
                return join_all([self._run(i) for i in inputs])
            case po.Keep(inner, slots):
                table = self._run(inner)
                return Table({k: v for k, v in table.columns.items() if k in slots}, table.size)
            case po.Dedup(inner):
                return _distinct(self._run(inner))
            case po.Select(inner, condition):
                table = self._run(inner)
                return vector_filtered(table, condition, self.physical.slots, self._numbers)
            case po.Bind(inner, slot, value):
                return self._bind(self._run(inner), slot, value)
            case GroupBy(inner=inner):
                return group_by(self._run(inner), node, self._numbers)
        raise AssertionError(f"{type(node).__name__} is not covered (see uncovered)")

    def _graph(self, ref: po.GraphRef) -> Triples:
        if isinstance(ref, po.WindowGraph):
            return self.columns[ref.name].graph
        assert isinstance(ref, po.BackgroundGraph)
        key = (ref.name, self.background.version(ref.name, self.now))
        found = self._background.get(key)
        if found is None:
            found = self._background[key] = Triples(*self.background.triples(ref.name, self.now))
        return found

    def _bind(self, table: Table, slot: int, value: ExpressionEvaluator) -> Table:
        """BIND: the evaluator asked once per distinct combination of the slots it reads
        (for every row when it makes a new value at each call: RAND(), BNODE() ...); an
        error leaves the slot unbound (``NO_ID``)."""
        source = _copied(value)
        if source is not None:  # a copy (unbound where the source is: no column, or NO_ID)
            if source not in table.columns:
                return table
            return Table({**table.columns, slot: table.columns[source]}, table.size)
        if value.fresh:
            rows, inverse = table.rows(self._width), np.arange(table.size)
        else:
            rows, inverse = distinct_inputs(table, value)
        found = np.array([NO_ID if v is None else v for v in value.values(rows)],
                         dtype=np.int64)
        return Table({**table.columns, slot: found[inverse]}, table.size)

    # --- state ------------------------------------------------------------------------
    def restore(self, snapshot: Snapshot) -> None:
        super().restore(snapshot)
        for name, (_, op) in self.physical.windows.items():
            rows = [row[1:] for row in snapshot["windows"] if row[0] == str(name)]
            self.columns[name] = self._learning(ColumnWindow.from_rows(op, rows))


def _scans(node: po.PhysicalPlan) -> list[tuple[po.EncodedPattern, ...]]:
    """The patterns of every scan in a (covered) plan."""
    match node:
        case po.Scan(_, patterns):
            return [patterns]
        case po.HashJoin(left, right, _):
            return _scans(left) + _scans(right)
        case po.MultiJoin(inputs, _):
            return [p for i in inputs for p in _scans(i)]
        case po.Keep(inner, _) | po.Dedup(inner) | po.Select(inner, _) | po.Bind(inner, _, _):
            return _scans(inner)
        case GroupBy(inner=inner):
            return _scans(inner)
    return []


def _aggregates_numbers(node: po.PhysicalPlan) -> bool:
    """Whether a (covered) plan's GROUP BY sums or compares numbers."""
    match node:
        case GroupBy(inner=inner, aggregates=specs):
            return any(a.function in NUMERIC for a in specs) or _aggregates_numbers(inner)
        case po.HashJoin(left, right, _):
            return _aggregates_numbers(left) or _aggregates_numbers(right)
        case po.MultiJoin(inputs, _):
            return any(map(_aggregates_numbers, inputs))
        case po.Keep(inner, _) | po.Dedup(inner) | po.Select(inner, _) | po.Bind(inner, _, _):
            return _aggregates_numbers(inner)
    return False


def _distinct(table: Table) -> Table:
    """DISTINCT over the bound columns (every row binds the same slots here)."""
    if table.size < 2 or not table.columns:
        return table if table.columns or not table.size else Table({}, 1)
    keys = list(table.columns)
    _, first = np.unique(np.stack([table.columns[k] for k in keys], axis=1), axis=0,
                         return_index=True)
    return table.take(np.sort(first))
