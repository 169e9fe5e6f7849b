"""Physical R2R operators: graph patterns evaluated over indexed, encoded graphs.

The planner (:mod:`sepia.engine.plan.planner`) turns the algebra into a tree of these nodes once;
``run`` evaluates the tree at each evaluation instant against the graphs the runtime keeps
(windows and background data, all ``TripleIndex``es of term ids). Rows are tuples indexed
by the query's slot table (:mod:`sepia.engine.rows`). What the engine does not evaluate
natively yet is a ``Fallback`` node, evaluated by pyoxigraph over the same data.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Protocol, assert_never

import pyoxigraph as ox

from sepia.algebra import path as pa
from sepia.algebra import pattern as gp
from sepia.engine.graph import TripleIndex
from sepia.engine.r2r.expressions import ExpressionEvaluator
from sepia.engine.r2r.scan import (
    CompiledScans,
    Constant,
    EncodedPattern,
    Position,
    Slot,
    scan,
)
from sepia.engine.rows import Row, compatible, merge, shares_binding


@dataclass(frozen=True, slots=True)
class WindowGraph:
    """The instantaneous graph of a named window."""

    name: ox.NamedNode


@dataclass(frozen=True, slots=True)
class BackgroundGraph:
    """A background graph: a named one, or the default graph (``name`` None)."""

    name: ox.NamedNode | None = None


@dataclass(frozen=True, slots=True)
class EventGraph:
    """The graph of the event being matched by a GPM (SPAseq Definition 7)."""


GraphRef = WindowGraph | BackgroundGraph | EventGraph




@dataclass(frozen=True, slots=True)
class Scan:
    """A BGP over the union of ``graphs``: index nested-loop joins, in an order chosen at
    each evaluation from the index sizes (most selective connected pattern first)."""

    graphs: tuple[GraphRef, ...]
    patterns: tuple[EncodedPattern, ...]
    compiled: CompiledScans = field(default_factory=dict, init=False, compare=False, repr=False)
    """Its scans over an event's few triples, compiled once per set of seeded slots."""


@dataclass(frozen=True, slots=True)
class HashJoin:
    """Join: hash on the slots bound on both sides (``keys``), compatibility on the rest."""

    left: PhysicalPlan
    right: PhysicalPlan
    keys: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MultiJoin:
    """A join of several inputs, ordered at each evaluation: the smallest input first, then
    always the smallest one that shares a bound slot with what is joined so far (no cross
    product while a connected input remains). ``certain`` holds each input's always-bound
    slots, from which the hash keys of each step follow."""

    inputs: tuple[PhysicalPlan, ...]
    certain: tuple[frozenset[int], ...]


@dataclass(frozen=True, slots=True)
class LeftOuterJoin:
    """LeftJoin (OPTIONAL), its condition evaluated on each merged row."""

    left: PhysicalPlan
    right: PhysicalPlan
    keys: tuple[int, ...]
    condition: ExpressionEvaluator | None


@dataclass(frozen=True, slots=True)
class UnionAll:
    left: PhysicalPlan
    right: PhysicalPlan


@dataclass(frozen=True, slots=True)
class AntiJoin:
    """MINUS: drop left rows with a compatible right row that shares a variable."""

    left: PhysicalPlan
    right: PhysicalPlan


@dataclass(frozen=True, slots=True)
class Select:
    """FILTER: keep rows whose condition's effective boolean value is true."""

    inner: PhysicalPlan
    condition: ExpressionEvaluator


@dataclass(frozen=True, slots=True)
class Bind:
    """Extend (BIND): one more slot from an expression (unbound on error)."""

    inner: PhysicalPlan
    slot: int
    value: ExpressionEvaluator


@dataclass(frozen=True, slots=True)
class Keep:
    """Projection: the slots outside ``slots`` become unbound."""

    inner: PhysicalPlan
    slots: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Dedup:
    """DISTINCT."""

    inner: PhysicalPlan


@dataclass(frozen=True, slots=True)
class Table:
    """VALUES: constant rows."""

    rows: tuple[Row, ...]


@dataclass(frozen=True, slots=True)
class Fallback:
    """A sub-pattern the engine does not evaluate natively yet: pyoxigraph evaluates it over
    the same background data and window contents (marked as such in ``sepia explain``)."""

    pattern: gp.GraphPattern
    windows: tuple[ox.NamedNode, ...]


@dataclass(frozen=True, slots=True)
class NestedPath:
    """``s path o`` where the path holds a nested test (CQELS-CEP): the pairs the path
    relates in the union of ``graphs`` (:mod:`sepia.engine.r2r.paths`)."""

    graphs: tuple[GraphRef, ...]
    subject: Position
    path: pa.Path
    object: Position
    tables: PathTables = field(default_factory=dict, init=False, compare=False, repr=False)
    """Its rows hashed on each set of join keys, kept while the context gives the same rows
    (``_kept_table``)."""


PathTables = dict[tuple[int, ...], tuple[list[Row], dict[tuple, list[tuple[int, Row]]]]]
"""A nested path's rows (the very list its context gave) and, by the values at the join
keys, each row with its place among them."""


@dataclass(frozen=True, slots=True)
class Matches:
    """MATCH: the rows of the matches the event automaton completed at this instant (of
    a query's ``number``-th MATCH: with several, every match it has at the instant)."""

    number: int = 0


PhysicalPlan = (
    Scan | HashJoin | MultiJoin | LeftOuterJoin | UnionAll | AntiJoin | Select | Bind | Keep
    | Dedup | Table | Fallback | Matches | NestedPath
)


class Context(Protocol):
    """What a plan reads at an evaluation instant."""

    width: int

    def graph(self, ref: GraphRef) -> TripleIndex: ...

    def fallback(self, node: Fallback) -> list[Row]: ...

    def matches(self, number: int) -> list[Row]: ...

    def path(self, node: NestedPath) -> list[Row]: ...


def run(plan: PhysicalPlan, ctx: Context) -> list[Row]:
    """The solutions of a physical plan at the current instant (a bag, as a list)."""
    match plan:
        case Scan(graphs, patterns):
            return scan([ctx.graph(g) for g in graphs], patterns, ctx.width, compiled=plan.compiled)
        case HashJoin(left, right, keys):
            return list(_joined(run(left, ctx), run(right, ctx), keys))
        case MultiJoin(inputs, certain):
            return _multi_join(inputs, list(certain), ctx)
        case LeftOuterJoin(left, right, keys, condition):
            return _left_outer(run(left, ctx), run(right, ctx), keys, condition)
        case UnionAll(left, right):
            return run(left, ctx) + run(right, ctx)
        case AntiJoin(left, right):
            others = run(right, ctx)
            return [
                r for r in run(left, ctx)
                if not any(compatible(r, o) and shares_binding(r, o) for o in others)
            ]
        case Select(inner, condition):
            rows = run(inner, ctx)
            return [r for r, ok in zip(rows, condition.truths(rows), strict=True) if ok]
        case Bind(inner, slot, value):
            rows = run(inner, ctx)
            return bind_rows(rows, slot, value.values(rows))
        case Keep(inner, slots):
            return keep_rows(run(inner, ctx), slots)
        case Dedup(inner):
            return list(Counter(run(inner, ctx)))
        case Table(rows):
            return list(rows)
        case Fallback():
            return ctx.fallback(plan)
        case Matches(number):
            return ctx.matches(number)
        case NestedPath():
            return ctx.path(plan)
        case _:
            assert_never(plan)


def bind_rows(rows: list[Row], slot: int, values: list[int | None]) -> list[Row]:
    """BIND: each row with ``slot`` set to its value."""
    return [(*r[:slot], v, *r[slot + 1 :]) for r, v in zip(rows, values, strict=True)]


def keep_rows(rows: list[Row], slots: tuple[int, ...]) -> list[Row]:
    """Projection: the slots outside ``slots`` unbound, each row copied once with them
    set to None (W9 projects the few rows of each of 14,995 evaluations)."""
    if not rows:
        return []
    keep = set(slots)
    dropped = [i for i in range(len(rows[0])) if i not in keep]
    out = []
    for r in rows:
        values = list(r)
        for i in dropped:
            values[i] = None
        out.append(tuple(values))
    return out


def _joined(left: list[Row], right: list[Row], keys: tuple[int, ...]) -> Iterator[Row]:
    """Compatible pairs, merged; the smaller side hashed on ``keys`` (bound on every row of
    both sides), the larger one probing it (merging is symmetric)."""
    if len(right) > len(left):
        left, right = right, left
    table = _hashed(right, keys)
    for l_row in left:
        for r in table.get(tuple(l_row[k] for k in keys), ()):
            if compatible(l_row, r):
                yield merge(l_row, r)


def _multi_join(
    inputs: tuple[PhysicalPlan, ...], certain: list[frozenset[int]], ctx: Context
) -> list[Row]:
    """Join every input (see ``MultiJoin``). BGPs are not read whole unless they are the
    cheapest start: their size is estimated from the indexes, and once rows are joined a
    BGP connected to them with more estimated matches than rows is probed with them (a
    bound join: a GPM's few rows look up the knowledge base instead of reading all of it,
    a window close's few coupons look up the shoppers near their shops in a 12k-triple
    window). The other inputs are evaluated; always a connected input next, the smallest
    (no cross product while a connected input remains, e.g. W1's two unrelated windows
    joined through the background)."""
    evaluated = {i: run(p, ctx) for i, p in enumerate(inputs) if not isinstance(p, Scan)}
    certain = [c or _bound_in(evaluated.get(i, ())) for i, c in enumerate(certain)]
    sizes = {
        i: len(evaluated[i]) if i in evaluated else _estimate(p, ctx)  # type: ignore[arg-type]
        for i, p in enumerate(inputs)
    }
    remaining = sorted(sizes, key=sizes.__getitem__)
    first = remaining.pop(0)
    rows = evaluated[first] if first in evaluated else run(inputs[first], ctx)
    bound = set(certain[first])
    while remaining and rows:
        connected = [i for i in remaining if certain[i] & bound]
        chosen = min(connected or remaining, key=sizes.__getitem__)
        remaining.remove(chosen)
        if chosen in evaluated:
            keys = tuple(sorted(bound & certain[chosen]))
            node, others = inputs[chosen], evaluated[chosen]
            if isinstance(node, NestedPath):
                rows = _joined_kept(rows, others, _kept_table(node, others, keys), keys)
            else:
                rows = list(_joined(rows, others, keys))
        elif certain[chosen] & bound and len(rows) < sizes[chosen]:
            rows = _probe(rows, inputs[chosen], certain[chosen], bound, ctx)
        else:
            keys = tuple(sorted(bound & certain[chosen]))
            rows = list(_joined(rows, run(inputs[chosen], ctx), keys))
        bound |= certain[chosen]
    return rows if not remaining else []


def _kept_table(
    node: NestedPath, rows: list[Row], keys: tuple[int, ...]
) -> dict[tuple, list[tuple[int, Row]]]:
    """The path's ``rows`` hashed on ``keys``, made again only when the context gives
    another list: the relation's rows are cached by the versions of the graphs it reads
    (``paths.PathRelations``), so over background data the table is made once, not walked
    at every CQELS-CEP match (W9: 40 rows at each of 14,995 evaluations)."""
    kept = node.tables.get(keys)
    if kept is None or kept[0] is not rows:
        table: dict[tuple, list[tuple[int, Row]]] = {}
        for i, r in enumerate(rows):
            table.setdefault(tuple([r[k] for k in keys]), []).append((i, r))
        kept = node.tables[keys] = (rows, table)
    return kept[1]


def _joined_kept(
    rows: list[Row], others: list[Row], table: dict[tuple, list[tuple[int, Row]]],
    keys: tuple[int, ...],
) -> list[Row]:
    """``_joined(rows, others, keys)``, in its order, ``others`` probed through its kept
    ``table``: where ``_joined`` would walk ``others`` (the larger side), the pairs are put
    in ``others``' order."""
    pairs = [
        (i, r, o) for r in rows for i, o in table.get(tuple([r[k] for k in keys]), ())
        if compatible(r, o)
    ]
    if len(others) > len(rows):
        pairs.sort(key=itemgetter(0))
    return [merge(r, o) for _, r, o in pairs]


def _bound_in(rows: Sequence[Row]) -> frozenset[int]:
    """The slots every row binds: of an input whose plan cannot say (a MATCH's rows, whose
    event pattern may leave slots unbound), so that it is joined on them, and the BGPs
    connected to it probed with its few rows, rather than crossed with everything."""
    if not rows:
        return frozenset()
    slots = [i for i, v in enumerate(rows[0]) if v is not None]
    for row in rows:
        slots = [i for i in slots if row[i] is not None]
    return frozenset(slots)


def _estimate(plan: Scan, ctx: Context) -> int:
    """A BGP's size as its most selective pattern's index bucket (an ordering hint; the
    empty BGP has one row)."""
    graphs = [ctx.graph(g) for g in plan.graphs]
    return min(
        sum(
            g.estimate(*(p.id if isinstance(p, Constant) else None for p in pattern))
            for g in graphs
        )
        for pattern in plan.patterns
    ) if plan.patterns else 1


def _probe(
    rows: list[Row], plan: PhysicalPlan, certain: frozenset[int], bound: set[int], ctx: Context
) -> list[Row]:
    """A BGP joined to ``rows``: looked up from each row when they share a slot and the
    BGP's other slots are unbound in every row, else evaluated and hash-joined."""
    assert isinstance(plan, Scan)
    free = certain - bound
    if certain & bound and not any(r[i] is not None for r in rows for i in free):
        graphs = [ctx.graph(g) for g in plan.graphs]
        return scan(
            graphs, plan.patterns, ctx.width, rows, frozenset(bound), compiled=plan.compiled
        )
    keys = tuple(sorted(bound & certain))
    return list(_joined(rows, run(plan, ctx), keys))


def _left_outer(
    left: list[Row],
    right: list[Row],
    keys: tuple[int, ...],
    condition: ExpressionEvaluator | None,
) -> list[Row]:
    """Each left row with its compatible right rows that pass the condition, else alone."""
    table = _hashed(right, keys)
    pairs = [
        (i, merge(l_row, r))
        for i, l_row in enumerate(left)
        for r in table.get(tuple(l_row[k] for k in keys), ())
        if compatible(l_row, r)
    ]
    if condition is not None:
        truths = condition.truths([m for _, m in pairs])
        pairs = [p for p, ok in zip(pairs, truths, strict=True) if ok]
    by_left: dict[int, list[Row]] = {}
    for i, m in pairs:
        by_left.setdefault(i, []).append(m)
    return [row for i, l_row in enumerate(left) for row in by_left.get(i, [l_row])]


def _hashed(rows: list[Row], keys: tuple[int, ...]) -> dict[tuple[int | None, ...], list[Row]]:
    table: dict[tuple[int | None, ...], list[Row]] = {}
    for r in rows:
        table.setdefault(tuple(r[k] for k in keys), []).append(r)
    return table


def certain(node: PhysicalPlan) -> frozenset[int]:
    """The slots bound in every row a node produces (join keys come from these)."""
    match node:
        case Scan(_, patterns):
            return frozenset(p.index for t in patterns for p in t if isinstance(p, Slot))
        case HashJoin(left, right, _):
            return certain(left) | certain(right)
        case MultiJoin(_, sets):
            return frozenset().union(*sets)
        case UnionAll(left, right):
            return certain(left) & certain(right)
        case LeftOuterJoin(left, _, _, _) | AntiJoin(left, _):
            return certain(left)
        case Select(inner, _) | Bind(inner, _, _) | Dedup(inner):
            return certain(inner)
        case Keep(inner, slots):
            return certain(inner) & frozenset(slots)
        case Table(rows):
            width = len(rows[0]) if rows else 0
            return frozenset(i for i in range(width) if all(r[i] is not None for r in rows))
        case NestedPath(_, subject, _, obj):
            return frozenset(p.index for p in (subject, obj) if isinstance(p, Slot))
        case Fallback() | Matches():
            return frozenset()
