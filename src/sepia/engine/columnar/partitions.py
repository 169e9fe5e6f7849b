"""PARTITION BY routing on columns: a group-by on the key column of a batch of events.

The row engine (``sepia.engine.query.partition``) matches every basic event pattern of the
query on every element to learn which partitions it joins, then matches the patterns again
inside each partition. Here each distinct BGP is matched once per batch, over all the
batch's triples at once (a vector join whose keys include the element each triple came
from), and BGPs identical up to variable names (SPAseq's GPMs usually are: ``?company
pred:price ?p1`` then ``?p2`` ...) share one match, renamed. An element joins partition
x when one of the partition's leaf plans (a GPM with all its FILTERs, as the reference
reads them) binds the key to x on it: the (element, x) pairs are the routing, and a
state's candidates are its GPM's rows on the elements of their own partition. An engine
owning some partition values only (a bucket of the Spark job's) keeps the pairs of its
own values (``OwnedKeys``): an event still joins the others, which it does not step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from sepia.engine.columnar.batch import ColumnBatch
from sepia.engine.columnar.carried import is_carried
from sepia.engine.columnar.codes import firsts
from sepia.engine.columnar.tables import (
    WIDE,
    Ids,
    Table,
    Triples,
    filtered,
    join,
    join_all,
    match_pattern,
    unique_rows,
)
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.expressions import ExpressionEvaluator
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.terms import Term

Filter = Callable[[Table, ExpressionEvaluator], Table]

DENSE = 16
"""Keys' range per instant up to which ``Routing`` finds a key's instants by a table."""

ELEMENT = -1
"""A pseudo slot: the element (an offset into the batch) a row was matched in."""
TIME = -2
"""A pseudo slot: the time of the element a row was matched in."""


def gpm_scan(
    plan: po.PhysicalPlan,
) -> tuple[po.Scan, list[po.Select], tuple[po.Scan, ...]] | None:
    """A GPM plan as its BGP over the event graph, the FILTERs above it (innermost first)
    and the BGPs over background graphs it joins (``GRAPH <kb> { ... }`` inside the GPM);
    None when it is anything else (OPTIONAL, BIND, a window ...)."""
    conditions: list[po.Select] = []
    while isinstance(plan, po.Select):
        conditions.append(plan)
        plan = plan.inner
    inputs = (
        plan.inputs if isinstance(plan, po.MultiJoin)
        else (plan.left, plan.right) if isinstance(plan, po.HashJoin) else (plan,)
    )
    events = [i for i in inputs if isinstance(i, po.Scan) and i.graphs == (po.EventGraph(),)]
    background = tuple(i for i in inputs if i not in events)
    if len(events) != 1 or not all(
        isinstance(i, po.Scan) and all(isinstance(g, po.BackgroundGraph) for g in i.graphs)
        for i in background
    ):
        return None
    return events[0], conditions[::-1], background  # type: ignore[return-value]


@lru_cache(maxsize=1024)
def canonical(patterns: tuple[po.EncodedPattern, ...]) -> tuple[tuple, tuple[int, ...]]:
    """The BGP with its slots numbered by first appearance (equal for BGPs equal up to
    variable names), and the original slot of each number; cached, as every step of a
    sequence asks it of the same few BGPs."""
    numbers: dict[int, int] = {}
    shape = tuple(
        tuple(
            po.Slot(numbers.setdefault(x.index, len(numbers))) if isinstance(x, po.Slot) else x
            for x in pattern
        )
        for pattern in patterns
    )
    return shape, tuple(numbers)


class EventMatches:
    """The GPMs of one batch's event graphs: each distinct BGP shape matched once."""

    def __init__(
        self, batch: ColumnBatch, select: Filter = filtered,
        background: Callable[[po.Scan, Table], Table] | None = None,
    ) -> None:
        self.select = select
        """How a FILTER is applied to a table (``tables.filtered`` or a vector form)."""
        self.background = background
        """The solutions of a BGP over background graphs (a GPM's ``GRAPH`` part), a set,
        given the solutions it is joined with (those joining them, at least)."""
        self.graph = Triples(batch.s, batch.p, batch.o)
        self.element = batch.element
        self.times = batch.times
        self.one_per_time = bool((batch.times[1:] != batch.times[:-1]).all())
        """Whether no two elements share a time (the times are sorted)."""
        self._shapes: dict[tuple, Table] = {}
        self._plans: dict[int, Table] = {}
        self._shared: dict[tuple, Table] = {}

    def bgp(self, scan: po.Scan) -> Table:
        """The BGP's solutions in each element's graph (the ``ELEMENT`` column says which),
        each (element, solution) once: made distinct once per shape, which renaming keeps
        (``distinct`` keeps each row's first copy, in order), not once per GPM (W7's three
        GPMs are one shape)."""
        shape, slots = canonical(scan.patterns)
        found = self._shapes.get(shape)
        if found is None:
            carried = {ELEMENT: self.element}
            tables = [match_pattern(self.graph, p, carried) for p in shape]
            found = self._shapes[shape] = distinct(join_all(tables))
        return Table({k if k < 0 else slots[k]: v for k, v in found.columns.items()},
                     found.size)

    def gpm(self, plan: po.PhysicalPlan) -> Table:
        """A GPM plan (``gpm_scan``'s shape) over each element's graph, its FILTERs applied
        once per distinct input; each (element, solution) once. Plans alike share their
        work: a partition's leaf and a state's GPM are equal plans of their own, and a
        leaf's FILTERs come on top of the state's join with the background."""
        found = self._plans.get(id(plan))
        if found is None:
            parts = gpm_scan(plan)
            assert parts is not None, "not a GPM over the event graph (see sequence_uncovered)"
            scan, conditions, background = parts
            key: tuple = (scan, background)
            found = self._shared.get(key)
            if found is None:
                found = self.bgp(scan)
                for other in background:  # a join of sets keeps every column: a set
                    assert self.background is not None, "a GPM joining a background graph"
                    found = join(found, self.background(other, found))
                self._shared[key] = found
            for select in conditions:  # one query's evaluators: the same text, the same truths
                key = (*key, select.condition.text, tuple(select.condition.positions))
                kept = self._shared.get(key)
                if kept is None:
                    kept = self._shared[key] = self.select(found, select.condition)
                found = kept
            self._plans[id(plan)] = found
        return found


def distinct(table: Table) -> Table:
    """Each row once (the columns as one key; carried numbers follow their slots')."""
    if table.size < 2 or not table.columns:
        return table
    first = firsts([table.columns[k] for k in sorted(table.columns) if not is_carried(k)])
    return table.take(np.sort(first)) if len(first) < table.size else table


def instants_of(times: Ids) -> Ids:
    """The distinct times of a batch's elements (sorted already: no sort)."""
    return times[np.append(True, times[1:] != times[:-1])] if len(times) else times


@dataclass(frozen=True, slots=True)
class Routing:
    """The (element, key) pairs of a batch (each once), and each partition's instants:
    its distinct times, sorted by (key, time)."""

    element: Ids
    key: Ids
    instant_key: Ids
    instant_time: Ids
    _codes: dict[str, Ids] = field(default_factory=dict, compare=False, repr=False)
    """The instants' codes ``next_instant`` searches and their first and last times, found
    at its first call (a ``B+`` state asks it once per iteration of one span)."""
    _members: list[tuple[Ids, Ids, np.ndarray]] = field(
        default_factory=list, compare=False, repr=False)
    """``members``' last question and answer: every state whose GPM is the same BGP
    (W4's head and shoulders: seven) asks it of the same shared columns."""

    @classmethod
    def of(cls, matches: EventMatches, leaves: tuple[po.PhysicalPlan, ...], slot: int) -> Routing:
        """The partitions each element joins: the key values the leaves bind on it."""
        elements, keys = [], []
        for leaf in leaves:
            table = matches.gpm(leaf)
            if slot in table.columns:
                elements.append(table.columns[ELEMENT])
                keys.append(table.columns[slot])
        if not elements:
            nothing = np.empty(0, dtype=np.int64)
            return cls(nothing, nothing, nothing, nothing)
        key, element = unique_rows([np.concatenate(keys), np.concatenate(elements)])
        instant_key, instant_time = unique_rows([key, matches.times[element]])
        return cls(element, key, instant_key, instant_time)

    @classmethod
    def single(cls, times: Ids) -> Routing:
        """No PARTITION BY: every element (``times``: the batch's) in one partition, 0,
        whose instants are the batch's (the streamset's, SPAseq's strict contiguity)."""
        instants = instants_of(times)
        return cls(np.arange(len(times), dtype=np.int64), np.zeros(len(times), dtype=np.int64),
                   np.zeros(len(instants), dtype=np.int64), instants)

    def owned(self, keys: OwnedKeys) -> Routing:
        """The routing of the partitions ``keys`` owns only (their instants unchanged)."""
        pairs, instants = keys.mask(self.key), keys.mask(self.instant_key)
        return Routing(self.element[pairs], self.key[pairs], self.instant_key[instants],
                       self.instant_time[instants])

    def members(self, element: Ids, key: Ids) -> np.ndarray:
        """Whether each (element, key) is routed: the element joined that partition (the
        answer is shared: not to be written to)."""
        if self._members and self._members[0][0] is element and self._members[0][1] is key:
            return self._members[0][2]
        found = self._routed(element, key)
        self._members[:] = [(element, key, found)]
        return found

    def _routed(self, element: Ids, key: Ids) -> np.ndarray:
        width = int(max(element.max(initial=0), self.element.max(initial=0))) + 1
        top = int(max(key.max(initial=0), self.key.max(initial=0)))
        if not len(self.key) or min(key.min(initial=0), self.key.min(initial=0)) < 0 or (
            (top + 1) * width >= WIDE
        ):
            asked, routed = _pair_codes(element, key, self.element, self.key)
            return np.isin(asked, routed)
        routed = self.key * width + self.element  # sorted: the pairs are by (key, element)
        asked = key * width + element
        at = np.minimum(np.searchsorted(routed, asked), len(routed) - 1)
        return routed[at] == asked

    def next_instant(self, key: Ids, after: Ids) -> tuple[Ids, np.ndarray]:
        """For each (key, time): the partition's first instant of the batch later than
        ``after``, and whether it has one."""
        at, found = self.next_index(key, after)
        if not len(self.instant_key):
            return np.zeros(len(key), dtype=np.int64), found
        return self.instant_time[np.minimum(at, len(self.instant_key) - 1)], found

    def next_index(self, key: Ids, after: Ids) -> tuple[Ids, np.ndarray]:
        """``next_instant`` as an index among the instants (meaningless where there is
        none), and whether there is one. Only the keys with instants here are searched
        (most of a ``B+`` state's waiting runs have none in a span)."""
        count = len(self.instant_key)
        at = np.zeros(len(key), dtype=np.int64)
        if not count or not len(key):
            return at, np.zeros(len(key), dtype=bool)
        start = self._starts(key)
        found = start >= 0
        key, after, start = key[found], after[found], start[found]
        times = self.instant_time
        if "bounds" not in self._codes:
            self._codes["bounds"] = np.array([times.min(), times.max()])
        low, high = self._codes["bounds"].tolist()
        span = high - low + 2  # an ``after`` before every instant is low - 1
        if count * span < WIDE:  # a key's rank is where its instants start: no unique
            mine = self._codes.get("mine")
            if mine is None:
                mine = self._codes["mine"] = self._starts(self.instant_key) * span + (
                    times - low + 1)
            theirs = start * span + (np.minimum(np.maximum(after, low - 1), high) - low + 1)
        else:
            _, inverse = np.unique(np.concatenate([self.instant_key, key]), return_inverse=True)
            ranks, order = np.unique(np.concatenate([times, after]), return_inverse=True)
            base = len(ranks) + 1
            inverse, order = inverse.reshape(-1), order.reshape(-1)
            mine = inverse[:count] * base + order[:count]  # sorted: by (key, time)
            theirs = inverse[count:] * base + order[count:]
        mine_at = np.searchsorted(mine, theirs, side="right")
        inside = mine_at < count
        inside[inside] = self.instant_key[mine_at[inside]] == key[inside]
        at[found] = mine_at
        found[found] = inside
        return at, found

    def _starts(self, key: Ids) -> Ids:
        """Each key's first index among the instants (sorted by key), -1 where it has
        none: a gather from a table over the instants' keys' range where that range is
        narrow (a binary search of each of a span's unsorted run keys took 85 ns, most
        of a ``B+`` step), else a binary search."""
        table = self._codes.get("starts")
        if table is None:
            keys = self.instant_key
            low, high = int(keys[0]), int(keys[-1])
            if high - low >= DENSE * (len(keys) + 1024):
                table = self._codes["starts"] = np.empty(0, dtype=np.int64)
            else:
                first = np.flatnonzero(np.append(True, keys[1:] != keys[:-1]))
                table = self._codes["starts"] = np.full(high - low + 1, -1, dtype=np.int64)
                table[keys[first] - low] = first
        low = int(self.instant_key[0])
        if not len(table):
            at = np.minimum(np.searchsorted(self.instant_key, key), len(self.instant_key) - 1)
            return np.where(self.instant_key[at] == key, at, -1)
        inside = (key >= low) & (key < low + len(table))
        return np.where(inside, table[np.where(inside, key - low, 0)], -1)


class OwnedKeys:
    """The partition values an engine keeps (``owns``, as ``PartitionedQuery.owns``), asked
    once per distinct key id and cached by id: ids are never given twice, and a forgotten
    id's entry goes with it (an ``IdCache``)."""

    def __init__(self, owns: Callable[[Term], bool], dictionary: Dictionary) -> None:
        self.owns = owns
        self.dictionary = dictionary
        self.known: dict[int, bool] = {}
        dictionary.watch(self)

    def forget_ids(self, dropped: set[int]) -> None:
        for i in dropped:
            self.known.pop(i, None)

    def mask(self, keys: Ids) -> np.ndarray:
        """Whether each key id is owned."""
        if not len(keys):
            return np.zeros(0, dtype=bool)
        distinct_keys, inverse = np.unique(keys, return_inverse=True)
        known, decode = self.known, self.dictionary.decode
        for key in distinct_keys.tolist():
            if key not in known:
                known[key] = self.owns(decode(key))
        kept = np.array([known[key] for key in distinct_keys.tolist()], dtype=bool)
        return kept[inverse.reshape(-1)]


def _pair_codes(e1: Ids, k1: Ids, e2: Ids, k2: Ids) -> tuple[Ids, Ids]:
    """(element, key) pairs of two sets as one integer each (equal pairs, equal codes)."""
    _, inverse = np.unique(np.concatenate([k1, k2]), return_inverse=True)
    inverse = inverse.reshape(-1)
    width = int(max(e1.max(initial=0), e2.max(initial=0))) + 1
    codes = inverse * width + np.concatenate([e1, e2])
    return codes[: len(e1)], codes[len(e1) :]


def candidates(
    matches: EventMatches, routing: Routing, plan: po.PhysicalPlan, slot: int | None,
    of_stream: Ids,
) -> Table:
    """A state's candidates: its GPM's rows on the elements of its stream (``of_stream``:
    a mask over elements), each on an element routed to the partition it binds (any,
    ``slot`` None: no PARTITION BY), with the element's time (``TIME``) instead of the
    element; each (time, row) once (the matches at one instant are a set: made distinct
    where two elements share a time, the GPM's rows being each (element, row) once)."""
    table = matches.gpm(plan)
    if (slot is not None and slot not in table.columns) or not table.size:
        return Table({k: v[:0] for k, v in table.columns.items() if k != ELEMENT}
                     | {TIME: np.empty(0, dtype=np.int64)}, 0)
    element = table.columns[ELEMENT]
    keep = of_stream[element]
    if slot is not None:
        keep &= routing.members(element, table.columns[slot])
    kept = table.take(np.flatnonzero(keep))
    columns = {k: v for k, v in kept.columns.items() if k != ELEMENT}
    columns[TIME] = matches.times[kept.columns[ELEMENT]]
    table = Table(columns, kept.size)  # (element, row) once: (time, row) too, a time each
    if matches.one_per_time or table.size < 2:
        return table
    times = matches.times[of_stream]  # the stream's own elements, a time each (W7's
    return table if (times[1:] != times[:-1]).all() else distinct(table)  # three sensors)
