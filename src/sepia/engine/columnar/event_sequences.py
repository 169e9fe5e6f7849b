"""CQELS-CEP and RSEP-QL sequences of basic event patterns on columns, pushed as they end.

The row engine (``cep.event_trees``) evaluates the event tree at each arrival instant t:
the SEQ's right leaf gives the mappings ending at t, its left operand the mappings in the
window at t that end before the right one starts and are compatible with it (RSEP-QL's
Eq. 7), one right mapping and one instant at a time. A tree of unrestricted SEQs over
basic event patterns is a chain of leaves L1 ... Lk whatever its nesting: a match is one
mapping of each, all compatible, each ending before the next starts, the last ending at
t, every one shown by its window at t; it is stamped [start of L1's, t]. NO_TAIL at the
top keeps all of them (nothing lies in (t, t]), so it is the identity when pushed.

Here a span of elements is taken at once: each leaf's matches on the span's elements are
one table (``partitions.EventMatches``), kept with the earlier elements' that a window can
still show (time-sorted, the ones before the window's opening at the span's last instant
dropped). The chain is joined from the right: the last leaf's new matches, each at its
own instant, joined on the shared variables with the previous leaf's kept matches, the
pairs kept where that one ends before the partial match starts and its window shows it
at the instant (a vector comparison with the window's opening there), and so on; the
matches are a set, as in the row engine.

The rest of the WHERE clause is the row engine's own plan over the matches of each instant
(``ContinuousQuery.evaluate``, as ``EventQuery`` runs it: the background scans, the nested
paths cached per graph version, the projection and the query form), so its results and
their order are the row engine's; only the instants where a match completes are evaluated.

What it covers (``event_sequence_uncovered`` says why not): a pushed (no REPORT clause)
SELECT with RSTREAM, without PARTITION BY, whose event pattern is NO_TAIL(s) over a tree
of unrestricted SEQs of basic event patterns, each a BGP with FILTERs over a time-based
sliding (slide at most the width) or landmark window's event graph, the graph pattern
reading the background graphs only, no RDFS entailment. SEQ_WO, NO_HEAD, the consuming
policies, FIRST / LAST, OR / JOIN and event FILTERs run on the row engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sepia.algebra import dataset as ds
from sepia.algebra.event import SelectionPolicy
from sepia.engine.cep.event_trees import EventLeaf, EventSeq, EventTree, Negated
from sepia.engine.codec import Codec
from sepia.engine.columnar.batch import ColumnBatch
from sepia.engine.columnar.partitions import ELEMENT, EventMatches, gpm_scan
from sepia.engine.columnar.pushed import Pushed, pushed_uncovered, spans
from sepia.engine.columnar.tables import Ids, Table, join_pairs, paired, unique_rows
from sepia.engine.plan.physical import EventPlan, PhysicalQuery
from sepia.engine.query.continuous import ContinuousQuery, Snapshot
from sepia.engine.r2r import operators as po
from sepia.engine.rows import FROM, TO
from sepia.engine.s2r.windows import WindowOperator
from sepia.rdf.results import Result, Solution
from sepia.rdf.stream import StreamElement

START = -20
"""A pseudo slot: the start of the element a leaf's match was found in."""
END = -21
"""A pseudo slot: the end (time) of that element."""
AT = -22
"""A pseudo slot of a partial match: the instant it completes at (its last leaf's end)."""
FIRST = -23
"""A pseudo slot of a partial match: the start of its earliest leaf's element."""
Made = list[tuple[Solution, int | None, str | None]]
"""An instant's results: each one's binding, the match whose interval it carries (by
position among the instant's matches; None: no interval), its match name."""
MADE = 1 << 12
"""Instants' results remembered at most (by their matches' rows)."""
SPAN = 1 << 13
"""Elements taken at once at most (never inside an instant): the pairs a join makes
before its time test grow with the span's matches of one key."""


def chain(tree: EventTree) -> list[EventLeaf] | None:
    """The leaves of a tree of unrestricted SEQs of basic event patterns, in order (a leaf
    alone is a chain of one), else None."""
    match tree:
        case EventLeaf():
            return [tree]
        case EventSeq(left, right, SelectionPolicy.UNRESTRICTED):
            found = [chain(left), chain(right)]
            return None if None in found else [x for f in found for x in f]  # type: ignore[union-attr]
    return None


def pushed_chain(tree: EventTree) -> list[EventLeaf] | None:
    """``chain`` under NO_TAILs (the identity on what is pushed at the arrival)."""
    while isinstance(tree, Negated) and tree.left is not None and tree.right is None:
        tree = tree.left
    return chain(tree)


def _window_uncovered(operator: WindowOperator) -> str | None:
    match operator.spec:
        case ds.Sliding(width, slide, _) if slide <= width:
            return None
        case ds.Landmark():
            return None
    return "an event pattern over a window other than time-based sliding or landmark"


def _operands(node: po.PhysicalPlan) -> tuple[po.PhysicalPlan, ...] | None:
    """The inputs of a join, union, difference, projection or DISTINCT; None for any other
    node (a leaf, a FILTER or BIND: the walks below decide those themselves)."""
    match node:
        case po.HashJoin(left, right, _) | po.LeftOuterJoin(left, right, _, _) | po.UnionAll(
            left, right
        ) | po.AntiJoin(left, right):
            return left, right
        case po.MultiJoin(inputs, _):
            return tuple(inputs)
        case po.Keep(inner, _) | po.Dedup(inner):
            return (inner,)
    return None


def _reads_background_only(node: po.PhysicalPlan) -> bool:
    """Whether the graph pattern around the matches reads no window or event graph."""
    match node:
        case po.Scan(graphs, _) | po.NestedPath(graphs, _, _, _):
            return all(isinstance(g, po.BackgroundGraph) for g in graphs)
        case po.Matches() | po.Table():
            return True
        case po.Select(inner, condition) | po.Bind(inner, _, condition):
            return condition.row_local and _reads_background_only(inner)
    operands = _operands(node)
    return operands is not None and all(map(_reads_background_only, operands))


def _passes_intervals(node: po.PhysicalPlan) -> bool:
    """Whether a graph pattern (over the background only) only carries the matches'
    intervals through: no FILTER or BIND, which may read them."""
    if isinstance(node, po.Select | po.Bind):
        return False
    return all(map(_passes_intervals, _operands(node) or ()))


def plan_event_sequence_uncovered(physical: PhysicalQuery) -> str | None:
    """Why an event query's plan stays on the row engine (run options aside), or None."""
    kind = physical.kind
    if not isinstance(kind, EventPlan):
        return "not an RSEP-QL / CQELS-CEP event pattern"
    pushed = pushed_uncovered(physical)
    if pushed is not None:
        return pushed
    if kind.occurrences:
        return "EP-SPARQL triple occurrences"
    leaves = pushed_chain(kind.tree)
    if leaves is None:
        return (
            "an event pattern other than unrestricted SEQs of basic event patterns under "
            "NO_TAIL (SEQ_WO, NO_HEAD, consuming policies, FIRST / LAST, OR / JOIN, FILTERs)"
        )
    for leaf in leaves:
        parts = gpm_scan(leaf.plan)
        if parts is None or parts[2]:
            return "a basic event pattern that is not a BGP with FILTERs over its event graph"
        if any(not select.condition.row_local for select in parts[1]):
            return "a FILTER calling RAND(), BNODE() or timestamp()"
        found = physical.windows.get(leaf.window)
        if found is None:
            return "an event pattern over an undeclared window"
        reason = _window_uncovered(found[1])
        if reason:
            return reason
    if not _reads_background_only(physical.root):
        return "a graph pattern reading a window or a FILTER reading the windows"
    return None


def event_sequence_uncovered(engine: ContinuousQuery) -> str | None:
    """Why a planned event query stays on the row engine, or None when this module runs
    it."""
    if engine.background.schema is not None:
        return "RDFS entailment runs on the row engine"
    if not isinstance(engine.dictionary, Codec):
        return "a dictionary without a codec"
    return plan_event_sequence_uncovered(engine.physical)


@dataclass(slots=True)
class _Leaf:
    """One basic event pattern of the chain and its matches its window may still show."""

    event: EventLeaf
    stream: str
    operator: WindowOperator
    kept: Table
    """Columns: its variables, ``START``, ``END``; sorted by ``END``."""

    def opening(self, at: Ids) -> Ids:
        """The window's lower bound at each instant: it shows elements stamped in
        (lower, t] (``WindowOperator.lower``, vectorised)."""
        match self.operator.spec:
            case ds.Sliding(width, slide, t0):
                first = np.maximum(0, -((at - width - t0) // -slide))
                opening = t0 + first * slide
                return np.where(opening >= at, at, opening)
            case ds.Landmark(t0):
                return np.full(len(at), t0 - 1, dtype=np.int64)
        raise AssertionError("a window event_sequence_uncovered refuses")

    def admitted(self, times: Ids) -> np.ndarray:
        """Whether the window admits elements stamped ``times`` at all."""
        after = self.operator.admitted_after()
        assert after is not None
        return times > after


class EventSequence(Pushed):
    """A pushed chain of SEQs on columns (see the module docstring), with the registered
    query interface of the columnar core (``PartitionedSequence``'s)."""

    def __init__(self, host: ContinuousQuery) -> None:
        self.host = host
        """Plans the query and runs its graph pattern on each instant's matches (its
        windows stay empty: the graph pattern reads the background only)."""
        self.name = host.name
        kind = host.physical.kind
        assert isinstance(kind, EventPlan)
        leaves = pushed_chain(kind.tree)
        assert leaves is not None
        windows = host.physical.windows
        self.leaves = [
            _Leaf(leaf, windows[leaf.window][0], windows[leaf.window][1], _empty(leaf.plan))
            for leaf in leaves
        ]
        self.streams = frozenset(leaf.stream for leaf in self.leaves)
        slots = host.physical.slots
        self.width = len(slots.names)
        self.interval = (slots.index(FROM), slots.index(TO))
        self.clock: int | None = None
        self.reusable = not (host.background.varying or host.query.order) and _passes_intervals(
            host.physical.root)
        """Whether an instant's results depend only on its matches' rows and the order
        of their starts (``_made``): a static background, no expression reading a
        match's interval, no ORDER BY."""
        self.made: dict[tuple, Made] = {}
        """The results of the instants' matches seen (a cache, bounded by ``MADE``)."""

    def event_plans(self) -> list[po.PhysicalPlan]:
        return [leaf.event.plan for leaf in self.leaves]

    # --- time ---------------------------------------------------------------------------
    def advance(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """The elements stamped t (the push path), their intervals' starts kept."""
        kept = [e for e in elements if e.stream in self.streams]
        if not kept:
            return []
        batch = ColumnBatch.from_elements(kept, self.dictionary)
        starts = np.array([e.start for e in kept], dtype=np.int64)
        return self._advance(batch, starts)

    def advance_columns(self, batch: ColumnBatch) -> list[Result]:
        """The matches completed by the batch's elements (points: time order)."""
        relevant = batch.of_streams(self.streams)
        if not len(relevant):
            return []
        return self._advance(relevant, relevant.times)

    def _advance(self, batch: ColumnBatch, starts: Ids) -> list[Result]:
        if self.clock is not None and batch.times[0] <= self.clock:
            raise ValueError(f"time went back: {int(batch.times[0])} after {self.clock}")
        results: list[Result] = []
        for begin, stop in spans(batch.times, SPAN):
            part = batch.slice(begin, stop)
            results += self._results(self._step(part, starts[begin:stop]))
        self.clock = int(batch.times[-1])
        return results

    # --- one span ---------------------------------------------------------------------
    def _step(self, batch: ColumnBatch, starts: Ids) -> Table:
        """The span's matches (a set): variables, ``FIRST`` and ``AT``."""
        matches = EventMatches(batch)
        numbers = {iri: n for n, iri in enumerate(batch.streams)}
        for leaf in self.leaves:
            found = matches.gpm(leaf.event.plan)
            element = found.columns[ELEMENT]
            keep = batch.stream[element] == numbers.get(leaf.stream, -1)
            keep &= leaf.admitted(batch.times[element])
            columns = {k: v[keep] for k, v in found.columns.items() if k >= 0}
            columns[START] = starts[element[keep]]
            columns[END] = batch.times[element[keep]]
            new = Table(columns, int(keep.sum()))
            new = new.take(np.argsort(columns[END], kind="stable"))
            leaf.kept = _concat(leaf.kept, new) if leaf.kept.size else new
        last = self.leaves[-1]
        ends = last.kept.columns[END]
        fresh = last.kept.take(np.flatnonzero(ends >= batch.times[0]))
        partial = _renamed(fresh, {START: FIRST, END: AT})
        for leaf in reversed(self.leaves[:-1]):
            if not partial.size:
                break
            partial = self._before(partial, leaf)
        horizon = int(batch.times[-1])
        for leaf in self.leaves:
            leaf.kept = _shown_after(leaf, horizon)
        return _distinct(partial)

    def _before(self, partial: Table, leaf: _Leaf) -> Table:
        """The partial matches extended by ``leaf``'s matches that end before they start,
        compatible, and shown by the leaf's window at their instant."""
        li, ri = join_pairs(partial, _without_times(leaf.kept))
        ends = leaf.kept.columns[END][ri]
        at = partial.columns[AT][li]
        keep = (ends < partial.columns[FIRST][li]) & (ends > leaf.opening(at))
        li, ri = li[keep], ri[keep]
        joined = paired(partial, leaf.kept, li, ri)
        columns = {k: v for k, v in joined.columns.items() if k not in (START, END)}
        columns[FIRST] = leaf.kept.columns[START][ri]
        return Table(columns, len(li))

    def _results(self, done: Table) -> list[Result]:
        """Each instant's matches as the row engine stamps them (by start, end, then the
        row's ids), run through the query's graph pattern and form at that instant
        (``_made``)."""
        if not done.size:
            return []
        at, first = done.columns[AT], done.columns[FIRST]
        slots = sorted(k for k in done.columns if k >= 0)
        keys = [done.columns[k] for k in reversed(slots)]
        done = done.take(np.lexsort((*keys, first, at)))
        rows = done.rows(self.width)
        ats, firsts = done.columns[AT].tolist(), done.columns[FIRST].tolist()
        bounds = (np.flatnonzero(np.diff(done.columns[AT])) + 1).tolist()
        ts: list[int] = []
        bindings: list[Solution] = []
        intervals: list[tuple[int, int] | None] = []
        matches: list[str | None] = []
        for low, high in zip([0, *bounds], [*bounds, done.size], strict=True):
            t, starts = ats[low], firsts[low:high]
            for binding, rank, match in self._made(t, rows[low:high], starts):
                ts.append(t)
                bindings.append(binding)
                intervals.append(None if rank is None else (starts[rank], t))
                matches.append(match)
        return Result.of_solutions(self.name, "+", ts, bindings, intervals, matches)

    def _made(self, t: int, rows: list[tuple], starts: list[int]) -> Made:
        """The results of one instant's matches (rows without their interval, by start),
        each as its binding, the match whose interval it carries and its name: the row
        engine's evaluation of the graph pattern at t over the matches stamped with their
        starts' ranks (the first of equal starts), remembered by the rows and those ranks
        where the answer depends on nothing else (``_reusable``)."""
        ranks = [0] * len(starts)
        for k in range(1, len(starts)):
            ranks[k] = ranks[k - 1] if starts[k] == starts[k - 1] else k
        key = (tuple(rows), tuple(ranks))
        known = self.made.get(key) if self.reusable else None
        if known is not None:
            return known
        start, end = self.interval
        stamped = []
        for row, rank in zip(rows, ranks, strict=True):
            values = list(row)
            values[start], values[end] = (rank, t) if self.reusable else (starts[rank], t)
            stamped.append(tuple(values))
        host = self.host
        host.clock = t
        host.completed = [stamped]
        results = host.evaluate(t)
        host.completed = [[]]
        found: Made = []
        for result in results:
            assert isinstance(result.binding, Solution) and result.op == "+"
            carried: int | None = None
            if result.interval is not None:
                first = result.interval[0]
                carried = first if self.reusable else starts.index(first)
            found.append((result.binding, carried, result.match))
        if self.reusable:
            if len(self.made) >= MADE:
                self.made.clear()
            self.made[key] = found
        return found

    # --- state ------------------------------------------------------------------------
    def state_size(self) -> dict[str, int]:
        return {"leaf_matches": sum(leaf.kept.size for leaf in self.leaves)}

    def snapshot(self) -> Snapshot:
        """Each leaf's kept matches as rows: leaf, start, end, then its mapping."""
        rows = []
        for number, leaf in enumerate(self.leaves):
            kept = leaf.kept
            mapping = kept.rows(self.width)
            rows += [(number, s, e, *m) for s, e, m in zip(
                kept.columns[START].tolist(), kept.columns[END].tolist(), mapping, strict=True)]
        return {"clock": [("clock", self.clock)], "leaves": rows}

    def restore(self, snapshot: Snapshot) -> None:
        """Resume from ``snapshot()`` rows (the dictionary is restored by its owner)."""
        self.clock = dict(snapshot["clock"]).get("clock")
        for number, leaf in enumerate(self.leaves):
            own = [r for r in snapshot["leaves"] if r[0] == number]
            columns = {k: v for k, v in _empty(leaf.event.plan).columns.items()}
            for k in [c for c in columns if c >= 0]:
                columns[k] = np.array([r[3 + k] for r in own], dtype=np.int64)
            columns[START] = np.array([r[1] for r in own], dtype=np.int64)
            columns[END] = np.array([r[2] for r in own], dtype=np.int64)
            leaf.kept = Table(columns, len(own))


def _empty(plan: po.PhysicalPlan) -> Table:
    """No matches yet of a leaf's plan: its variables' columns, ``START`` and ``END``."""
    parts = gpm_scan(plan)
    assert parts is not None
    slots = {x.index for pattern in parts[0].patterns for x in pattern if isinstance(x, po.Slot)}
    nothing = np.empty(0, dtype=np.int64)
    return Table({**{s: nothing for s in sorted(slots)}, START: nothing, END: nothing}, 0)


def _concat(kept: Table, new: Table) -> Table:
    return Table({k: np.concatenate([v, new.columns[k]]) for k, v in kept.columns.items()},
                 kept.size + new.size)


def _renamed(table: Table, names: dict[int, int]) -> Table:
    return Table({names.get(k, k): v for k, v in table.columns.items()}, table.size)


def _without_times(table: Table) -> Table:
    """A leaf's matches with its variables only (what the join compares)."""
    return Table({k: v for k, v in table.columns.items() if k >= 0}, table.size)


def _shown_after(leaf: _Leaf, t: int) -> Table:
    """The leaf's matches its window can still show after instant t (its opening only
    moves forward): ``END`` sorted, a cut."""
    kept = leaf.kept
    lower = int(leaf.opening(np.array([t], dtype=np.int64))[0])
    cut = int(np.searchsorted(kept.columns[END], lower, side="right"))
    return kept.take(np.arange(cut, kept.size)) if cut else kept


def _distinct(table: Table) -> Table:
    """Each match once: its variables, start and end."""
    if table.size < 2:
        return table
    first = unique_rows([table.columns[k] for k in sorted(table.columns)], index=True)[-1]
    return table.take(np.sort(first)) if len(first) < table.size else table


