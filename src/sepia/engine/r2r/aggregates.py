"""GROUP BY maintained from the windows' journals: per-group state updated by the delta of
the matches (W3's C-SPARQL ``AVG(?price)`` per company over a sliding window).

The aggregated pattern (a join of BGPs over windows and background graphs under FILTER and
BIND: ``delta.local_join``) keeps its mappings from the journals: at each
evaluation only the mappings that used a triple which left, and those using a triple that
entered, change. Each changed mapping updates its group's state (a count, an exact sum, a
multiset of values for MIN / MAX and DISTINCT), so a window close recomputes only the
groups that changed; the operators above the group (HAVING, the SELECT expressions, the
projection) run on those groups' rows.

Exactness against the reference (pyoxigraph over a store holding the window, with the
set functions of ``rdf.aggregates`` where SPARQL leaves the answer open):

- pyoxigraph's store keeps each literal in its canonical form ("03" and "3"^^xsd:int are
  "3"^^xsd:integer there), and a graph is a set: mappings are grouped and aggregated by
  the canonical forms of their terms, and mappings equal in those forms count once.
  Canonical forms and numeric values are pyoxigraph's own (``Terms``), as are the result
  literals' lexical forms (each result is written to a store and read back).
- SUM / AVG are ``rdf.numbers``' (the evaluators' too): integers and decimals exact
  (pyoxigraph's fixed point with 18 fractional digits, AVG its truncating division),
  floats and doubles summed exactly and rounded once; a non-numeric or unbound value makes
  the group's SUM and AVG unbound; an empty implicit group gives COUNT 0, SUM 0, AVG 0;
  an integer or decimal sum is unbound when its total overflows pyoxigraph's 64-bit
  integers / 128-bit decimals.
- MIN / MAX keep a multiset of values per group (for eviction); among equal values of
  different terms (1 and 1.0), which SPARQL leaves unordered, MIN takes the least in the
  total order on terms and MAX the greatest (``rdf.aggregates.extreme``, as both
  evaluators do).

Not maintained (``plan_of`` says why; pyoxigraph's fallback evaluates them): GROUP_CONCAT,
SAMPLE, aggregates of expressions other than a variable, patterns other than such a join
(OPTIONAL, UNION, MINUS, paths ...), a group under other operators than HAVING, BIND,
projection and DISTINCT. The group states are a cache of the windows (as delta evaluation's
mappings): after a restore they are rebuilt from the restored windows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from itertools import compress

import pyoxigraph as ox

from sepia.algebra import pattern as gp
from sepia.algebra import query as qa
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.counting import CountedJoin
from sepia.engine.r2r.delta import (
    Atoms,
    Key,
    RowLocal,
    fold,
    local_join,
    query_pattern,
    under_row_local,
)
from sepia.engine.r2r.maintained import GraphOf, Runner, through
from sepia.engine.r2r.numbers import INTEGER, Sum, Terms, average, extreme, number_literal
from sepia.engine.rows import Row
from sepia.rdf.dictionary import Dictionary

FUNCTIONS = {"COUNT", "SUM", "AVG", "MIN", "MAX", "PARTIAL_SUM"}
SUMS = ("SUM", "AVG", "PARTIAL_SUM")
"""The functions of a ``Sum`` state (PARTIAL_SUM: the state itself, ``rdf.aggregates``)."""


@dataclass(frozen=True, slots=True)
class AggregateSpec:
    """One aggregate of a group: its function, the slot it reads (None: ``COUNT(*)``),
    DISTINCT, and the slot its value is bound to."""

    function: str
    argument: int | None
    distinct: bool
    target: int


@dataclass(frozen=True, slots=True)
class GroupBy(po.Fallback):
    """A GROUP BY the engine maintains when it is the query's top (``plan_of``); anywhere
    else it is the ``Fallback`` it extends, evaluated by pyoxigraph."""

    inner: po.PhysicalPlan
    keys: tuple[int, ...]
    aggregates: tuple[AggregateSpec, ...]


def native(
    group: gp.Group, fallback: po.Fallback, inner: po.PhysicalPlan, slot: Callable[[str], int]
) -> GroupBy | None:
    """The maintainable GROUP BY of ``group`` (None: only pyoxigraph evaluates it): COUNT,
    SUM, AVG, MIN, MAX of a variable (or ``COUNT(*)``), PARTIAL_SUM without DISTINCT."""
    specs = []
    for binding in group.aggregates:
        a = binding.aggregate
        if a.function.value not in FUNCTIONS or (a.distinct and a.function.value == "PARTIAL_SUM"):
            return None
        if a.args and not isinstance(a.args[0], ox.Variable):
            return None
        argument = slot(a.args[0].value) if a.args else None  # type: ignore[union-attr]
        specs.append(AggregateSpec(a.function.value, argument, a.distinct,
                                   slot(binding.variable.value)))  # fmt: skip
    keys = tuple(slot(v.value) for v in group.variables)
    return GroupBy(fallback.pattern, fallback.windows, inner, keys, tuple(specs))


@dataclass(frozen=True, slots=True)
class GroupPlan:
    """A query whose pattern is a maintained GROUP BY: the aggregated pattern (a join of
    triple patterns under FILTER and BIND, innermost first), the group, the row-local
    operators above it (innermost first), DISTINCT on top."""

    atoms: Atoms
    inner: tuple[po.Select | po.Bind, ...]
    group: GroupBy
    steps: tuple[RowLocal, ...]
    distinct: bool


def plan_of(
    form: qa.QueryForm,
    root: po.PhysicalPlan,
    events: bool,
    empty: Callable[[po.GraphRef], bool],
) -> GroupPlan | str:
    """The maintained GROUP BY of a query, or why it is not maintained. ``empty`` says
    which background graphs are empty: C-SPARQL merges its windows with the default graph,
    which is then the window alone."""
    top = query_pattern(form, root, events)
    if isinstance(top, str):
        return top
    pattern, distinct = top
    found = under_row_local(pattern)
    if isinstance(found, str):
        return found
    node, steps = found
    if not isinstance(node, GroupBy):
        return (
            "a GROUP BY under other operators, or aggregates other than COUNT, SUM, AVG, MIN, "
            "MAX of a variable"
        )
    inner = local_join(_unmerged(node.inner, empty))
    if isinstance(inner, str):
        return f"{inner} inside the group"
    atoms, inner_steps = inner
    if not any(isinstance(graph, po.WindowGraph) for graph, _ in atoms):
        return "a group over background data only (no window change to maintain it from)"
    return GroupPlan(atoms, inner_steps, node, steps, distinct)


def _unmerged(node: po.PhysicalPlan, empty: Callable[[po.GraphRef], bool]) -> po.PhysicalPlan:
    """``node`` with the empty background graphs left out of its BGPs' merged graphs."""
    match node:
        case po.Scan(graphs, _) if len(graphs) > 1:
            kept = tuple(g for g in graphs if not (isinstance(g, po.BackgroundGraph) and empty(g)))
            return replace(node, graphs=kept) if kept else node
        case po.MultiJoin(inputs, _):
            return replace(node, inputs=tuple(_unmerged(i, empty) for i in inputs))
        case po.Select() | po.Bind() | po.Keep() | po.Dedup():
            return replace(node, inner=_unmerged(node.inner, empty))
        case _:
            return node


class _Group:
    """One group's state: its mappings' count and each aggregate's state."""

    __slots__ = ("output", "rows", "states")

    def __init__(self, specs: tuple[AggregateSpec, ...]) -> None:
        self.rows = 0
        self.states: list[Counter[Row | int | None] | Sum | list[int]] = [
            Sum() if s.function in SUMS and not s.distinct
            else [0] if s.function == "COUNT" and not s.distinct
            else Counter()
            for s in specs
        ]  # fmt: skip
        self.output: Key | None = None
        """The answer row this group gives now (None: none, or filtered out)."""


class MaintainedGroups:
    """The answer of a ``GroupPlan``, kept up to date from the windows' journals (the same
    interface as ``delta.MaintainedAnswer``)."""

    def __init__(
        self, plan: GroupPlan, kept: list[int], width: int, dictionary: Dictionary
    ) -> None:
        self.plan = plan
        self.kept = kept
        self.width = width
        self.terms = Terms(dictionary)
        self.join = CountedJoin(plan.atoms, width, self.terms.canonical)
        self.answer: Counter[Key] = Counter()
        self._counts: Counter[Key] = Counter()
        """Under DISTINCT: how many groups give each answer row."""
        self._groups: dict[Key, _Group] = {}
        self._all = list(range(width))

    def __len__(self) -> int:
        """The triples the join's match sets hold (``ContinuousQuery.state_size``)."""
        return len(self.join)

    def state_rows(self) -> int:
        """The aggregate state held: a row per group and per value of a group's multisets."""
        return sum(
            1 + sum(len(s) for s in g.states if isinstance(s, Counter))
            for g in self._groups.values()
        )

    def update(self, graph: GraphOf, run: Runner) -> tuple[Counter[Key], Counter[Key]] | None:
        """Bring the answer to the windows' present contents: (rows added, rows removed), or
        None when the join was rebuilt (first call, after a restore: then the answer is
        rebuilt whole)."""
        gained, lost, rebuilt = self.join.update(graph)
        if rebuilt:
            self.answer, self._counts, self._groups = Counter(), Counter(), {}
        changed: dict[Key, _Group] = {}
        if not self.plan.group.keys and () not in self._groups:  # exists without rows
            changed[()] = self._groups[()] = _Group(self.plan.group.aggregates)
        for rows, sign in ((lost, -1), (gained, 1)):
            self._fold_rows(rows, sign, changed)
        plus, minus = self._report(changed)
        return None if rebuilt else (plus, minus)

    def _fold_rows(self, mappings: list[Row], sign: int, changed: dict[Key, _Group]) -> None:
        """Each mapping (through FILTER and BIND) into its group's state."""
        if not mappings:
            return
        keys, specs = self.plan.group.keys, self.plan.group.aggregates
        rows: list[Row | None] = list(mappings)
        if self.plan.inner:  # FILTER, BIND (which may make terms not seen yet)
            rows = outputs(self.plan.inner, self._all, mappings)
            self.terms.canonical(
                r[s.argument] for r in rows if r for s in specs if s.argument is not None
            )
        groups = self._groups
        for row in rows:
            if row is None:
                continue
            key = tuple([row[k] for k in keys])
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Group(specs)
            changed[key] = group
            self._add(group, row, sign)

    def _add(self, group: _Group, row: Row, sign: int) -> None:
        group.rows += sign
        numbers = self.terms.numbers
        for spec, state in zip(self.plan.group.aggregates, group.states, strict=True):
            argument = spec.argument
            value = None if argument is None else row[argument]
            if isinstance(state, Sum):
                state.add(numbers.get(value), sign)  # type: ignore[arg-type]
            elif isinstance(state, list):
                state[0] += sign if argument is None or value is not None else 0
            else:
                item = row if argument is None else value
                left = state.get(item, 0) + sign
                if left:
                    state[item] = left
                else:
                    del state[item]

    def _report(self, changed: dict[Key, _Group]) -> tuple[Counter[Key], Counter[Key]]:
        """Each changed group's new answer row; the answer's change."""
        plus: Counter[Key] = Counter()
        minus: Counter[Key] = Counter()
        rows, live = [], []
        for key, group in changed.items():
            if group.output is not None:
                minus[group.output] += 1
                group.output = None
            if group.rows == 0 and key:
                del self._groups[key]
                continue
            rows.append(self._row(key, group))
            live.append(group)
        for group, out in zip(live, outputs(self.plan.steps, self.kept, rows), strict=True):
            group.output = out
            if out is not None:
                plus[out] += 1
        if self.plan.distinct:
            touched = set(plus) | set(minus)
            before = {k for k in touched if self._counts[k] > 0}
            fold(self._counts, plus, minus)
            after = {k for k in touched if self._counts[k] > 0}
            plus, minus = Counter(after - before), Counter(before - after)
        common = plus & minus  # a group whose row did not change
        plus, minus = plus - common, minus - common
        fold(self.answer, plus, minus)
        return plus, minus

    def _row(self, key: Key, group: _Group) -> Row:
        """The group's row: its key and each aggregate's value."""
        row: list[int | None] = [None] * self.width
        for slot, value in zip(self.plan.group.keys, key, strict=True):
            row[slot] = value
        for spec, state in zip(self.plan.group.aggregates, group.states, strict=True):
            row[spec.target] = self._value(spec, state, group.rows)
        return tuple(row)

    def _value(self, spec: AggregateSpec, state, rows: int) -> int | None:
        terms = self.terms
        if isinstance(state, list):
            return terms.literal(str(state[0]), INTEGER)
        if spec.function == "COUNT":
            return terms.literal(str(sum(1 for v in state if v is not None)), INTEGER)
        if spec.function in ("MIN", "MAX"):
            return extreme(state, spec.function == "MAX", terms)
        if isinstance(state, Counter):  # SUM / AVG (DISTINCT): the distinct values
            total = Sum()
            for value in state:
                total.add(terms.number(value), 1)
            state = total
        if spec.function == "SUM":
            return number_literal(state.total(), terms)
        if spec.function == "PARTIAL_SUM":
            return terms.partial(state)
        return average(state, terms)


def outputs(steps: Iterable[RowLocal], kept: list[int], rows: list[Row]) -> list[Key | None]:
    """Each row's output (its ``kept`` slots) through FILTER, BIND and projection (None:
    filtered out)."""
    keys: list[Key | None] = [None] * len(rows)
    alive = list(range(len(rows)))
    for step in steps:
        rows, passed = through(step, rows)
        if passed is not None:
            alive = list(compress(alive, passed))
    for i, row in zip(alive, rows, strict=True):
        keys[i] = tuple([row[k] for k in kept])
    return keys


