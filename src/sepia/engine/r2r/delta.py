"""Delta evaluation of continuous queries (CQELS's incremental approach, issue #5).

A query's answer is maintained instead of re-joining whole windows at each evaluation.
Between two evaluations the windows' graphs change by a few triples (their journals,
``TripleIndex.watch``). The joins of triple patterns over windows and background graphs
(``WindowJoin``) keep every mapping, indexed by the window triples it uses:

- a mapping that used a triple which left its window leaves the answer;
- the new mappings are those using at least one triple that entered: for each pattern over
  a window that changed, its matches among the entered triples, joined with every other
  pattern over the current graphs (the delta join), duplicates (a mapping using two new
  triples) counted once.

Above them the operators of ``engine.maintained`` (FILTER, BIND, projection, UNION,
OPTIONAL, MINUS, joins of those, DISTINCT, VALUES, GRAPH ?g) turn their inputs' changes into
their own. The answer is kept as the output bag and the changes of one evaluation, which is
what IStream and DStream stream out (``r2s.delta_step``); RStream streams the whole bag.
What is maintained is a cache of the windows' contents, not state: after a restore (new
window objects) it is rebuilt by one full evaluation. Fallbacks (aggregates, paths,
EXISTS), nested paths, BGPs over merged graphs, event patterns, ASK / CONSTRUCT and
expressions that are not functions of the row are evaluated in full at each instant:
``plan_of`` says why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter

from sepia.algebra import query as qa
from sepia.engine.graph import EncodedTriple, Journal, TripleIndex
from sepia.engine.r2r import maintained as mt
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.maintained import Change, GraphOf, Maintained, Moved, Runner
from sepia.engine.r2r.scan import Atom, PatternMatcher, extend
from sepia.engine.rows import Row

Key = tuple[int | None, ...]
"""A row of the answer: the output slots of a mapping."""
RowLocal = po.Select | po.Bind | po.Keep
Atoms = tuple[tuple[po.GraphRef, po.EncodedPattern], ...]
"""The triple patterns of a join of BGPs, each with the one graph it matches in."""
REBUILD = 0.25
"""A change above this share of the windows' triples is evaluated in full: W1's 5-minute
window sliding by 1 minute changes by about 40% between evaluations, and there its delta
joins (index nested loops from each changed triple) took 6x the time of full hash joins."""
NOT_COVERED = {
    po.Fallback: "a pyoxigraph fallback (aggregates, paths, EXISTS, sub-selects with modifiers)",
    po.NestedPath: "a path with nested tests",
    po.Matches: "MATCH",
}
"""Why a pattern is evaluated in full, by the operator the delta path does not cover."""


@dataclass(frozen=True, slots=True)
class DeltaPlan:
    """A pattern the delta path maintains (``root``, under at most a DISTINCT)."""

    root: po.PhysicalPlan
    distinct: bool


def plan_of(form: qa.QueryForm, root: po.PhysicalPlan, events: bool) -> DeltaPlan | str:
    """The delta plan of a query's pattern, or why it is evaluated in full."""
    top = query_pattern(form, root, events)
    if isinstance(top, str):
        return top
    node, distinct = top
    built = _Builder(0).build(node)
    return built if isinstance(built, str) else DeltaPlan(node, distinct)


def query_pattern(
    form: qa.QueryForm, root: po.PhysicalPlan, events: bool
) -> tuple[po.PhysicalPlan, bool] | str:
    """A SELECT's pattern and whether a DISTINCT is on top of it; or why the query is not
    maintained (also ``engine.aggregates``'s start)."""
    if events:
        return "an event pattern"
    if not isinstance(form, qa.Select):
        return f"a {type(form).__name__} form"
    if isinstance(root, po.Dedup):
        return root.inner, True
    return root, False


class _Builder:
    """The maintained operators of a physical plan (or why it has none); the window joins
    made are kept in ``joins`` (they read the windows' journals)."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.joins: list[WindowJoin] = []

    def build(self, node: po.PhysicalPlan) -> Maintained | str:
        match node:
            case po.Scan() | po.MultiJoin() if (atoms := _atoms(node)) is not None:
                join = WindowJoin(node, atoms, self.width)
                self.joins.append(join)
                return join
            case po.Scan():
                return "a BGP over an event's graph or a merge of graphs"
            case po.MultiJoin(inputs, sets):
                return self._multi_join(inputs, sets)
            case po.HashJoin(left, right, keys):
                return self._binary(mt.Join, left, right, keys)
            case po.LeftOuterJoin(left, right, keys, condition):
                if condition is not None and not condition.row_local:
                    return "an expression that is not a function of its row"
                parts = self._both(left, right)
                return parts if isinstance(parts, str) else mt.LeftJoin(*parts, keys, condition)
            case po.AntiJoin(left, right):
                keys = tuple(sorted(po.certain(left) & po.certain(right)))
                return self._binary(mt.Minus, left, right, keys)
            case po.UnionAll(left, right):
                parts = self._both(left, right)
                return parts if isinstance(parts, str) else mt.Union(*parts)
            case po.Select(inner, test) | po.Bind(inner, _, test) if not test.row_local:
                return "an expression that is not a function of its row"
            case po.Keep(inner, slots) if _keeps_all(inner, slots):
                return self.build(inner)
            case po.Select(inner) | po.Bind(inner) | po.Keep(inner):
                found = self.build(inner)
                return found if isinstance(found, str) else mt.Local(node, found)
            case po.Dedup(inner):
                found = self.build(inner)
                return found if isinstance(found, str) else mt.Distinct(found)
            case po.Table(rows):
                return mt.Constant(rows)
            case _:
                kinds = (why for kind, why in NOT_COVERED.items() if isinstance(node, kind))
                return next(kinds, type(node).__name__)  # (a GroupBy is a Fallback)

    def _both(
        self, left: po.PhysicalPlan, right: po.PhysicalPlan
    ) -> tuple[Maintained, Maintained] | str:
        a = self.build(left)
        if isinstance(a, str):
            return a
        b = self.build(right)
        return b if isinstance(b, str) else (a, b)

    def _binary(
        self, kind: type[mt.Join | mt.Minus], left: po.PhysicalPlan, right: po.PhysicalPlan,
        keys: tuple[int, ...],
    ) -> Maintained | str:
        parts = self._both(left, right)
        return parts if isinstance(parts, str) else kind(*parts, keys)

    def _multi_join(
        self, inputs: tuple[po.PhysicalPlan, ...], sets: tuple[frozenset[int], ...]
    ) -> Maintained | str:
        """The BGPs of a join in one ``WindowJoin``, the other inputs joined to it one by
        one, always one sharing a slot with what is joined so far when there is one."""
        scans = [p for p in inputs if _atoms(p) is not None]
        rest = [(p, s) for p, s in zip(inputs, sets, strict=True) if _atoms(p) is None]
        found: Maintained | str
        if scans:
            joined = po.MultiJoin(tuple(scans), tuple(po.certain(p) for p in scans))
            found = self.build(joined if len(scans) > 1 else scans[0])
            bound = frozenset().union(*(po.certain(p) for p in scans))
        else:
            first, bound = rest.pop(0)
            found = self.build(first)
        while rest and not isinstance(found, str):
            chosen = next((i for i, (_, s) in enumerate(rest) if s & bound), 0)
            plan, slots = rest.pop(chosen)
            other = self.build(plan)
            if isinstance(other, str):
                return other
            found = mt.Join(found, other, tuple(sorted(bound & slots)))
            bound |= slots
        return found


def _keeps_all(node: po.PhysicalPlan, slots: tuple[int, ...]) -> bool:
    """Whether a projection of a join of BGPs keeps every slot the join binds (it then
    changes nothing: W2's SELECT of all its variables)."""
    atoms = _atoms(node)
    return atoms is not None and all(
        p.index in slots for _, pattern in atoms for p in pattern if isinstance(p, po.Slot)
    )


def under_row_local(node: po.PhysicalPlan) -> tuple[po.PhysicalPlan, tuple[RowLocal, ...]] | str:
    """The operator under a chain of FILTER, BIND and projection, and that chain (innermost
    first); or why those are not functions of their row (``engine.aggregates``: above
    and under a GROUP BY)."""
    steps: list[RowLocal] = []
    while isinstance(node, RowLocal):
        test = node.value if isinstance(node, po.Bind) else getattr(node, "condition", None)
        if test is not None and not test.row_local:
            return "an expression that is not a function of its row"
        steps.append(node)
        node = node.inner
    return node, tuple(reversed(steps))


def local_join(node: po.PhysicalPlan) -> tuple[Atoms, tuple[po.Select | po.Bind, ...]] | str:
    """A join of BGPs each over one window or background graph (its triple patterns) under
    FILTER and BIND (innermost first); or why ``node`` is not one (``engine.aggregates``
    maintains such a join by counting, ``engine.counting``)."""
    found = under_row_local(node)
    if isinstance(found, str):
        return found
    core, steps = found
    if any(isinstance(s, po.Keep) for s in steps):
        return "a sub-select"
    atoms = _atoms(core)
    if atoms is None:
        why = _Builder(0).build(core)
        return why if isinstance(why, str) else "OPTIONAL, UNION, MINUS, VALUES or GRAPH ?g"
    return atoms, steps  # type: ignore[return-value]


def _atoms(node: po.PhysicalPlan) -> Atoms | None:
    """The triple patterns of a join of BGPs each over one window or background graph."""
    match node:
        case po.Scan(graphs, patterns):
            if len(graphs) != 1 or isinstance(graphs[0], po.EventGraph):
                return None
            return tuple((graphs[0], p) for p in patterns)
        case po.MultiJoin(inputs, _):
            found: list[tuple[po.GraphRef, po.EncodedPattern]] = []
            for part in map(_atoms, inputs):
                if part is None:
                    return None
                found += part
            return tuple(found)
        case _:
            return None


class MaintainedAnswer:
    """The answer of a ``DeltaPlan``, kept up to date from the windows' journals."""

    def __init__(self, plan: DeltaPlan, kept: list[int], width: int) -> None:
        self.plan = plan
        self.kept = kept
        """The slots of an output row."""
        builder = _Builder(width)
        root = builder.build(plan.root)
        assert not isinstance(root, str)
        self.root: Maintained = root
        self.joins = builder.joins
        self.windows = list(dict.fromkeys(w for j in self.joins for w in j.windows))
        self.answer: Counter[Key] = Counter()
        """The output bag (as ``ContinuousQuery._answer`` makes it)."""
        self._counts: Counter[Key] = Counter()
        """Under DISTINCT: how many rows give each output row."""
        self._watched: dict[po.WindowGraph, tuple[TripleIndex, Journal]] = {}
        self._built = False

    def __len__(self) -> int:
        """The rows kept: the joins' mappings, the inputs kept by OPTIONAL, MINUS and the
        other binary operators, DISTINCT's counts (``ContinuousQuery.state_size``)."""
        return self.root.size() + len(self._counts)

    def update(self, graph: GraphOf, run: Runner) -> tuple[Counter[Key], Counter[Key]] | None:
        """Bring the answer to the graphs' present contents: (rows added, rows removed),
        or None when it was rebuilt by a full evaluation: on the first call, after a
        restore (new window graphs), and when the windows changed by more than ``REBUILD``
        of what they hold (a sliding window's whole step: a hash join of the windows then
        costs less than index nested loops from every changed triple)."""
        watched = self._watched
        if not self._built or any(index is not graph(w) for w, (index, _) in watched.items()):
            self._rebuild(graph, run)
            return None
        changed = sum(len(journal) for _, journal in watched.values())
        if not changed:
            return Counter(), Counter()
        if changed > REBUILD * sum(len(index) for index, _ in watched.values()):
            self._rebuild(graph, run)
            return None
        moved: Moved = {}
        for window, (_, journal) in watched.items():
            if journal:
                entered = [t for t, sign in journal.items() if sign > 0]
                moved[window] = (entered, [t for t, sign in journal.items() if sign < 0])
                journal.clear()
        return self._apply(self.root.change(moved))

    def _rebuild(self, graph: GraphOf, run: Runner) -> None:
        """Everything from a full evaluation; journals from now on."""
        self._counts, self.answer = Counter(), Counter()
        for window in self.windows:
            index = graph(window)
            if self._watched.get(window, (None,))[0] is index:
                self._watched[window][1].clear()
            else:
                self._watched[window] = (index, index.watch())
        self._built = True
        self._apply(self.root.reset(graph, run))

    def _apply(self, change: Change) -> tuple[Counter[Key], Counter[Key]]:
        """Fold the root's change into the answer; the answer's change as (rows added,
        rows removed)."""
        if not change:
            return Counter(), Counter()
        kept = self.kept
        net: Counter[Key] = Counter()
        for row, count in change.items():
            net[tuple([row[k] for k in kept])] += count
        if self.plan.distinct:
            net = self._crossing(net)
        plus = Counter({k: c for k, c in net.items() if c > 0})
        minus = Counter({k: -c for k, c in net.items() if c < 0})
        fold(self.answer, plus, minus)
        return plus, minus

    def _crossing(self, net: Counter[Key]) -> Counter[Key]:
        """DISTINCT: the output rows whose count left zero (+1) or returned to it (-1)."""
        out: Counter[Key] = Counter()
        for key, count in net.items():
            before = self._counts[key]
            after = before + count
            if after:
                self._counts[key] = after
            else:
                del self._counts[key]
            if (before > 0) != (after > 0):
                out[key] = 1 if after > 0 else -1
        return out


class WindowJoin:
    """A join of triple patterns over window and background graphs: every mapping, indexed
    by the window triples it uses (a mapping uses each of its triples once, so the answer
    is a set)."""

    def __init__(
        self,
        node: po.PhysicalPlan,
        atoms: tuple[tuple[po.GraphRef, po.EncodedPattern], ...],
        width: int,
    ) -> None:
        self.node = node
        self.atoms = atoms
        self.width = width
        self.windows = list(dict.fromkeys(g for g, _ in atoms if isinstance(g, po.WindowGraph)))
        self._mappings: dict[Row, None] = {}
        self._using: list[dict[EncodedTriple, set[Row]]] = [{} for _ in self.windows]
        """Per window (by position), the mappings using each of its triples."""
        self._resolved: list[Atom] = []
        """Each pattern with its graph (the background's do not change: see
        ``ContinuousQuery._maintained``), resolved at each reset."""
        self._slots = [frozenset(_slots(pattern)) for _, pattern in atoms]
        self._constants, self._uses = _uses(atoms, self.windows, width)
        orders = _delta_orders(atoms)
        self._seeds = [
            (self.windows.index(g), PatternMatcher(pattern, width), self._slots[i], orders[i])
            for i, (g, pattern) in enumerate(atoms)
            if isinstance(g, po.WindowGraph)
        ]
        """Per pattern over a window: the window's position, the pattern compiled to match
        entered triples, its slots and the order to join the other patterns in."""

    def size(self) -> int:
        return len(self._mappings)

    def reset(self, graph: GraphOf, run: Runner) -> Change:
        self._mappings, self._using = {}, [{} for _ in self.windows]
        self._resolved = [(pattern, [graph(g)]) for g, pattern in self.atoms]
        rows = run(self.node)
        self._remember(rows)
        return dict.fromkeys(rows, 1)

    def change(self, moved: Moved) -> Change:
        if not self.windows:
            return {}
        gone: set[Row] = set()
        entered: list[list[EncodedTriple] | None] = []
        for window, using in zip(self.windows, self._using, strict=True):
            found = moved.get(window)
            entered.append(None if found is None else found[0])
            if found is not None:
                for triple in found[1]:
                    gone.update(using.pop(triple, ()))
        out: Change = dict.fromkeys(map(self._forget, gone), -1)
        added = self._new_mappings(entered)
        self._remember(added)
        out.update(dict.fromkeys(added, 1))
        return out

    def _new_mappings(self, entered: list[list[EncodedTriple] | None]) -> list[Row]:
        """The mappings that use at least one entered triple (each once): from each pattern
        over a window that changed, its matches among the entered triples joined with the
        other patterns in the order ``_orders`` fixed."""
        resolved = self._resolved
        found: dict[Row, None] = {}
        for window, matcher, seeded, order in self._seeds:
            triples = entered[window]
            if not triples:
                continue
            rows = matcher.rows(triples)
            bound = set(seeded)
            for j in order:
                if not rows:
                    break
                pattern, graphs = resolved[j]
                rows = extend(rows, pattern, graphs, bound)
                bound.update(self._slots[j])
            found.update(dict.fromkeys(rows))
        return list(found)

    def _remember(self, mappings: list[Row]) -> None:
        using, kept, constants = self._using, self._mappings, self._constants
        for mapping in mappings:
            kept[mapping] = None
            extended = mapping + constants
            for window, used in self._uses:
                using[window].setdefault(used(extended), set()).add(mapping)

    def _forget(self, mapping: Row) -> Row:
        """Drop a mapping that lost a triple."""
        extended = mapping + self._constants
        for window, used in self._uses:
            using = self._using[window]
            triple = used(extended)
            users = using.get(triple)
            if users is not None:
                users.discard(mapping)
                if not users:
                    del using[triple]
        del self._mappings[mapping]
        return mapping


def _slots(pattern: po.EncodedPattern) -> list[int]:
    return [p.index for p in pattern if isinstance(p, po.Slot)]


def _delta_orders(atoms: tuple[tuple[po.GraphRef, po.EncodedPattern], ...]) -> list[list[int]]:
    """For each pattern a new triple matches, the order to join the others in, fixed once:
    next always a pattern sharing a slot with what is bound (no cross product while one
    remains), the one with the most positions bound (constants or bound slots) first. From a
    single new triple the rows are few, so index lookups on the most bound pattern win;
    choosing by index sizes at each step cost more than the lookups (W2)."""
    orders = []
    for i, (_, seed) in enumerate(atoms):
        bound, order = set(_slots(seed)), []
        remaining = [j for j in range(len(atoms)) if j != i]
        while remaining:
            ranks = {j: _rank(atoms[j][1], frozenset(bound)) for j in remaining}
            chosen = min(remaining, key=ranks.__getitem__)
            remaining.remove(chosen)
            order.append(chosen)
            bound.update(_slots(atoms[chosen][1]))
        orders.append(order)
    return orders


def _rank(pattern: po.EncodedPattern, bound: frozenset[int]) -> tuple[bool, int]:
    """Unconnected last, then the most positions bound first."""
    fixed = sum(isinstance(p, po.Constant) or p.index in bound for p in pattern)
    connected = any(isinstance(p, po.Slot) and p.index in bound for p in pattern)
    return (not connected, -fixed)


def _uses(
    atoms: tuple[tuple[po.GraphRef, po.EncodedPattern], ...],
    windows: list[po.WindowGraph],
    width: int,
) -> tuple[tuple[int, ...], list[tuple[int, Callable[[Row], EncodedTriple]]]]:
    """The constants of the patterns, and for each pattern over a window the window's
    position and the function giving the triple a mapping uses there, read from the
    mapping followed by those constants."""
    constants = tuple(p.id for _, pattern in atoms for p in pattern if isinstance(p, po.Constant))
    uses: list[tuple[int, Callable[[Row], EncodedTriple]]] = []
    where = width
    for graph, pattern in atoms:
        positions = []
        for p in pattern:
            if isinstance(p, po.Constant):
                positions.append(where)
                where += 1
            else:
                positions.append(p.index)
        if isinstance(graph, po.WindowGraph):
            uses.append((windows.index(graph), itemgetter(*positions)))
    return constants, uses


def fold(bag: Counter[Key], plus: Counter[Key], minus: Counter[Key]) -> None:
    """bag + plus - minus, in place, without zero counts."""
    bag.update(plus)
    for key, count in minus.items():
        left = bag[key] - count
        if left > 0:
            bag[key] = left
        else:
            del bag[key]
