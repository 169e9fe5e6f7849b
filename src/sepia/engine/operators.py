"""Physical R2R operators: graph patterns evaluated over indexed, encoded graphs.

The planner (:mod:`sepia.engine.planner`) turns the algebra into a tree of these nodes once;
``run`` evaluates the tree at each evaluation instant against the graphs the runtime keeps
(windows and background data, all ``TripleIndex``es of term ids). Rows are tuples indexed
by the query's slot table (:mod:`sepia.engine.rows`). What the engine does not evaluate
natively yet is a ``Fallback`` node, evaluated by pyoxigraph over the same data.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Protocol, assert_never

import pyoxigraph as ox

from sepia.algebra import path as pa
from sepia.algebra import pattern as gp
from sepia.engine.expressions import ExpressionEvaluator
from sepia.engine.graph import EncodedTriple, TripleIndex
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
class Slot:
    """A pattern position holding a variable (or a pattern blank node): its slot."""

    index: int


@dataclass(frozen=True, slots=True)
class Constant:
    """A pattern position holding a term: its id."""

    id: int


Position = Slot | Constant
EncodedPattern = tuple[Position, Position, Position]


@dataclass(frozen=True, slots=True)
class Scan:
    """A BGP over the union of ``graphs``: index nested-loop joins, in an order chosen at
    each evaluation from the index sizes (most selective connected pattern first)."""

    graphs: tuple[GraphRef, ...]
    patterns: tuple[EncodedPattern, ...]


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
    relates in the union of ``graphs`` (:mod:`sepia.engine.paths`)."""

    graphs: tuple[GraphRef, ...]
    subject: Position
    path: pa.Path
    object: Position


@dataclass(frozen=True, slots=True)
class Matches:
    """MATCH: the rows of the matches the event automaton completed at this instant."""


PhysicalPlan = (
    Scan | HashJoin | MultiJoin | LeftOuterJoin | UnionAll | AntiJoin | Select | Bind | Keep
    | Dedup | Table | Fallback | Matches | NestedPath
)


class Context(Protocol):
    """What a plan reads at an evaluation instant."""

    width: int

    def graph(self, ref: GraphRef) -> TripleIndex: ...

    def fallback(self, node: Fallback) -> list[Row]: ...

    def matches(self) -> list[Row]: ...

    def path(self, node: NestedPath) -> list[Row]: ...


def run(plan: PhysicalPlan, ctx: Context) -> list[Row]:
    """The solutions of a physical plan at the current instant (a bag, as a list)."""
    match plan:
        case Scan(graphs, patterns):
            return scan([ctx.graph(g) for g in graphs], patterns, ctx.width)
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
            values = value.values(rows)
            return [(*r[:slot], v, *r[slot + 1 :]) for r, v in zip(rows, values, strict=True)]
        case Keep(inner, slots):
            kept = set(slots)
            rows = run(inner, ctx)
            return [tuple(v if i in kept else None for i, v in enumerate(r)) for r in rows]
        case Dedup(inner):
            return list(Counter(run(inner, ctx)))
        case Table(rows):
            return list(rows)
        case Fallback():
            return ctx.fallback(plan)
        case Matches():
            return ctx.matches()
        case NestedPath():
            return ctx.path(plan)
        case _:
            assert_never(plan)


def scan(
    graphs: list[TripleIndex],
    patterns: tuple[EncodedPattern, ...],
    width: int,
    seeds: list[Row] | None = None,
    seeded: frozenset[int] = frozenset(),
) -> list[Row]:
    """Evaluate a BGP over the union of ``graphs`` by index nested-loop joins, from
    ``seeds`` (rows binding exactly the slots ``seeded`` among the BGP's) if given."""
    rows: list[Row] = [(None,) * width] if seeds is None else seeds
    remaining = list(patterns)
    bound: set[int] = set(seeded)
    while remaining and rows:
        pattern = _most_selective(remaining, bound, graphs)
        remaining.remove(pattern)
        rows = _extend(rows, pattern, graphs, bound)
        bound |= {p.index for p in pattern if isinstance(p, Slot)}
    return rows


def _most_selective(
    patterns: list[EncodedPattern], bound: set[int], graphs: list[TripleIndex]
) -> EncodedPattern:
    """Next pattern: connected to what is bound (no cross product) and smallest by index."""

    def cost(pattern: EncodedPattern) -> tuple[bool, int]:
        connected = not bound or any(isinstance(p, Slot) and p.index in bound for p in pattern)
        consts = [p.id if isinstance(p, Constant) else None for p in pattern]
        return (not connected, sum(g.estimate(*consts) for g in graphs))

    return min(patterns, key=cost)


def _extend(
    rows: list[Row], pattern: EncodedPattern, graphs: list[TripleIndex], bound: set[int]
) -> list[Row]:
    """Each row extended by each triple matching the pattern under it. Every row of a BGP
    binds the same slots (``bound``), so which positions bind what, and which must repeat
    an earlier position (``?x :p ?x``), is worked out once for the step."""
    free: dict[int, int] = {}
    repeats: list[tuple[int, int]] = []
    for position, term in enumerate(pattern):
        if isinstance(term, Slot) and term.index not in bound:
            if term.index in free:
                repeats.append((free[term.index], position))
            else:
                free[term.index] = position
    assignments = list(free.items())
    out: list[Row] = []
    for row in rows:
        query = [t.id if isinstance(t, Constant) else row[t.index] for t in pattern]
        for triple in _matches(graphs, query[0], query[1], query[2]):
            if repeats and any(triple[a] != triple[b] for a, b in repeats):
                continue
            values = list(row)
            for slot, position in assignments:
                values[slot] = triple[position]
            out.append(tuple(values))
    return out


def _matches(
    graphs: list[TripleIndex], s: int | None, p: int | None, o: int | None
) -> Iterator[EncodedTriple]:
    if len(graphs) == 1:
        return graphs[0].match(s, p, o)
    return iter(set(chain.from_iterable(g.match(s, p, o) for g in graphs)))


def _joined(left: list[Row], right: list[Row], keys: tuple[int, ...]) -> Iterator[Row]:
    """Compatible pairs, merged; hashed on ``keys`` (bound on every row of both sides)."""
    table = _hashed(right, keys)
    for l_row in left:
        for r in table.get(tuple(l_row[k] for k in keys), ()):
            if compatible(l_row, r):
                yield merge(l_row, r)


def _multi_join(
    inputs: tuple[PhysicalPlan, ...], certain: list[frozenset[int]], ctx: Context
) -> list[Row]:
    """Join every input (see ``MultiJoin``): BGPs over background graphs only, whose size
    does not shrink with the stream, are probed with the rows joined from the others (a
    bound join: a GPM's few rows look up the knowledge base instead of reading all of it);
    the rest are evaluated and hash-joined, smallest connected input next."""
    probed = [i for i, p in enumerate(inputs) if _background_scan(p)]
    if len(probed) == len(inputs):
        probed = []
    evaluated = {i: run(p, ctx) for i, p in enumerate(inputs) if i not in probed}
    rows, bound = _hash_joins(evaluated, certain)
    while probed and rows:
        chosen = next((i for i in probed if certain[i] & bound), probed[0])
        probed.remove(chosen)
        plan = inputs[chosen]
        assert isinstance(plan, Scan)
        free = certain[chosen] - bound
        if certain[chosen] & bound and not any(r[i] is not None for r in rows for i in free):
            graphs = [ctx.graph(g) for g in plan.graphs]
            rows = scan(graphs, plan.patterns, ctx.width, rows, frozenset(bound))
        else:
            keys = tuple(sorted(bound & certain[chosen]))
            rows = list(_joined(rows, run(plan, ctx), keys))
        bound |= certain[chosen]
    return rows if not probed else []


def _background_scan(plan: PhysicalPlan) -> bool:
    return isinstance(plan, Scan) and all(isinstance(g, BackgroundGraph) for g in plan.graphs)


def _hash_joins(
    inputs: dict[int, list[Row]], certain: list[frozenset[int]]
) -> tuple[list[Row], set[int]]:
    """Hash-join evaluated inputs, smallest connected next; (rows, slots bound in all)."""
    order = sorted(inputs, key=lambda i: len(inputs[i]))
    first = order.pop(0)
    rows, bound = inputs[first], set(certain[first])
    while order and rows:
        connected = [i for i in order if certain[i] & bound] or order
        chosen = min(connected, key=lambda i: len(inputs[i]))
        order.remove(chosen)
        keys = tuple(sorted(bound & certain[chosen]))
        rows = list(_joined(rows, inputs[chosen], keys))
        bound |= certain[chosen]
    return (rows if not order else []), bound


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
