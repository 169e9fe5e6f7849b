"""Delta evaluation of window joins (CQELS's incremental approach, issue #5).

A query whose pattern is a join of BGPs over window and background graphs, under row-local
operators (FILTER, BIND, projection) and at most a DISTINCT on top, has as answer the set of
mappings that instantiate every triple pattern into its graph, each mapped to its output
row. Between two evaluations the windows' graphs change by a few triples (their journals,
``TripleIndex.watch``), so instead of re-joining whole windows the answer is maintained:

- a mapping that used a triple which left its window leaves the answer (mappings are
  indexed by the window triples they use);
- the new mappings are those using at least one triple that entered: for each pattern over
  a window that changed, its matches among the entered triples, joined with every other
  pattern over the current graphs (the delta join), duplicates (a mapping using two new
  triples) counted once.

The answer is kept as the output bag and the changes of one evaluation, which is what
IStream and DStream stream out (``r2s.delta_step``); RStream streams the whole bag. The
maintained mappings are a cache of the windows' contents, not state: after a restore (new
window objects) they are rebuilt by one full evaluation. Anything else (OPTIONAL, UNION,
MINUS, VALUES, GRAPH ?g, fallbacks, event patterns, ASK / CONSTRUCT, expressions that are not
functions of the row) is evaluated in full at each instant: ``plan_of`` says why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sepia.algebra import query as qa
from sepia.engine import operators as po
from sepia.engine.graph import EncodedTriple, Journal, TripleIndex
from sepia.engine.rows import Row

Key = tuple[int | None, ...]
"""A row of the answer: the output slots of a mapping."""
RowLocal = po.Select | po.Bind | po.Keep
REBUILD = 0.25
"""A change above this share of the windows' triples is evaluated in full: W1's 5-minute
window sliding by 1 minute changes by about 40% between evaluations, and there its delta
joins (index nested loops from each changed triple) took 6x the time of full hash joins."""
GraphOf = Callable[[po.GraphRef], TripleIndex]
Runner = Callable[[po.PhysicalPlan], list[Row]]
NOT_COVERED = {
    po.LeftOuterJoin: "OPTIONAL",
    po.UnionAll: "UNION",
    po.AntiJoin: "MINUS",
    po.Table: "VALUES",
    po.HashJoin: "GRAPH ?g",
    po.Dedup: "DISTINCT inside the pattern",
    po.Keep: "a sub-select joined with other patterns",
    po.Select: "a FILTER joined with other patterns",
    po.Bind: "a BIND joined with other patterns",
    po.Fallback: "a pyoxigraph fallback (aggregates, paths, EXISTS, sub-selects with modifiers)",
    po.NestedPath: "a path with nested tests",
    po.Matches: "MATCH",
}
"""Why a pattern is evaluated in full, by the operator the delta path does not cover."""


@dataclass(frozen=True, slots=True)
class DeltaPlan:
    """A pattern the delta path maintains: a join of triple patterns (``core``, as
    ``atoms``), row-local operators above it (innermost first), an optional DISTINCT."""

    core: po.PhysicalPlan
    atoms: tuple[tuple[po.GraphRef, po.EncodedPattern], ...]
    steps: tuple[RowLocal, ...]
    distinct: bool

    @property
    def windows(self) -> list[po.WindowGraph]:
        return list(dict.fromkeys(g for g, _ in self.atoms if isinstance(g, po.WindowGraph)))


def plan_of(form: qa.QueryForm, root: po.PhysicalPlan, events: bool) -> DeltaPlan | str:
    """The delta plan of a query's pattern, or why it is evaluated in full."""
    top = row_local_top(form, root, events)
    if isinstance(top, str):
        return top
    node, steps, distinct = top
    atoms = _atoms(node)
    if isinstance(atoms, str):
        return atoms
    return DeltaPlan(node, atoms, steps, distinct)


def row_local_top(
    form: qa.QueryForm, root: po.PhysicalPlan, events: bool
) -> tuple[po.PhysicalPlan, tuple[RowLocal, ...], bool] | str:
    """A SELECT's pattern under its row-local operators (innermost first) and whether a
    DISTINCT is on top; or why that is not how it is maintained."""
    if events:
        return "an event pattern"
    if not isinstance(form, qa.Select):
        return f"a {type(form).__name__} form"
    distinct = isinstance(root, po.Dedup)
    node = root.inner if isinstance(root, po.Dedup) else root
    steps: list[RowLocal] = []
    while isinstance(node, RowLocal):
        test = node.value if isinstance(node, po.Bind) else getattr(node, "condition", None)
        if test is not None and not test.row_local:
            return "an expression that is not a function of its row"
        steps.append(node)
        node = node.inner
    return node, tuple(reversed(steps)), distinct


def _atoms(node: po.PhysicalPlan) -> tuple[tuple[po.GraphRef, po.EncodedPattern], ...] | str:
    match node:
        case po.Scan(graphs, patterns):
            if len(graphs) != 1 or isinstance(graphs[0], po.EventGraph):
                return "a BGP over a merge of graphs"
            return tuple((graphs[0], p) for p in patterns)
        case po.MultiJoin(inputs, _):
            found: list[tuple[po.GraphRef, po.EncodedPattern]] = []
            for part in map(_atoms, inputs):
                if isinstance(part, str):
                    return part
                found += part
            return tuple(found)
        case _:
            kinds = (why for kind, why in NOT_COVERED.items() if isinstance(node, kind))
            return next(kinds, type(node).__name__)  # (a GroupBy is a Fallback)


class MaintainedAnswer:
    """The answer of a ``DeltaPlan``, kept up to date from the windows' journals."""

    def __init__(self, plan: DeltaPlan, kept: list[int], width: int) -> None:
        self.plan = plan
        self.kept = kept
        """The slots of an output row."""
        self.width = width
        self.answer: Counter[Key] = Counter()
        """The output bag (as ``ContinuousQuery._answer`` makes it)."""
        self._counts: Counter[Key] = Counter()
        """Under DISTINCT: how many mappings give each output row."""
        self._mappings: dict[Row, Key | None] = {}
        """Every mapping of the join, with its output row (None: filtered out)."""
        self._using: dict[tuple[po.WindowGraph, EncodedTriple], set[Row]] = {}
        self._watched: dict[po.WindowGraph, tuple[TripleIndex, Journal]] = {}
        self._built = False
        self._atoms: list[po.Atom] = []
        """Each pattern with its graph (the background's do not change: see
        ``ContinuousQuery._maintained``), resolved at each rebuild."""
        self._in_windows = [
            (i, g) for i, (g, _) in enumerate(plan.atoms) if isinstance(g, po.WindowGraph)
        ]
        """The atoms over windows: the triples a mapping uses there are indexed."""

    def __len__(self) -> int:
        """The mappings of the join kept (``ContinuousQuery.state_size``)."""
        return len(self._mappings)

    def update(self, graph: GraphOf, run: Runner) -> tuple[Counter[Key], Counter[Key]] | None:
        """Bring the answer to the graphs' present contents: (rows added, rows removed),
        or None when it was rebuilt by a full evaluation: on the first call, after a
        restore (new window graphs), and when the windows changed by more than ``REBUILD``
        of what they hold (a sliding window's whole step: a hash join of the windows then
        costs less than index nested loops from every changed triple)."""
        watched = self._watched
        if not self._built or any(
            watched.get(w, (None,))[0] is not graph(w) for w in self.plan.windows
        ):
            self._rebuild(graph, run)
            return None
        changed = sum(len(journal) for _, journal in watched.values())
        if changed > REBUILD * sum(len(index) for index, _ in watched.values()):
            self._rebuild(graph, run)
            return None
        gone: list[Row] = []
        entered: dict[po.WindowGraph, list[EncodedTriple]] = {}
        for window, (_, journal) in self._watched.items():
            for triple, sign in journal.items():
                if sign > 0:
                    entered.setdefault(window, []).append(triple)
                else:
                    gone += self._using.pop((window, triple), ())
            journal.clear()
        removed = [self._forget(m) for m in set(gone)]
        added = self._remember(self._new_mappings(entered))
        return self._apply(added, removed)

    def _rebuild(self, graph: GraphOf, run: Runner) -> None:
        """Every mapping from a full evaluation; journals from now on."""
        self._mappings, self._using, self._counts, self.answer = {}, {}, Counter(), Counter()
        for window in self.plan.windows:
            index = graph(window)
            if self._watched.get(window, (None,))[0] is index:
                self._watched[window][1].clear()
            else:
                self._watched[window] = (index, index.watch())
        self._atoms = [(pattern, [graph(g)]) for g, pattern in self.plan.atoms]
        self._built = True
        self._apply(self._remember(run(self.plan.core)), [])

    def _new_mappings(self, entered: dict[po.WindowGraph, list[EncodedTriple]]) -> list[Row]:
        """The mappings that use at least one entered triple (each once)."""
        if not entered:
            return []
        atoms = self._atoms
        found: dict[Row, None] = {}
        for i, (ref, pattern) in enumerate(self.plan.atoms):
            triples = entered.get(ref) if isinstance(ref, po.WindowGraph) else None
            if not triples:
                continue
            seeds = po.extend([(None,) * self.width], pattern, [TripleIndex(triples)], set())
            bound = {p.index for p in pattern if isinstance(p, po.Slot)}
            rest = atoms[:i] + atoms[i + 1 :]
            found.update(dict.fromkeys(po.extend_all(seeds, rest, bound)))
        return list(found)

    def _remember(self, mappings: list[Row]) -> list[Key | None]:
        """Record new mappings (their output rows computed in one batch)."""
        keys = self._outputs(mappings)
        for mapping, key in zip(mappings, keys, strict=True):
            self._mappings[mapping] = key
            for i, window in self._in_windows:
                self._using.setdefault((window, self._triple(i, mapping)), set()).add(mapping)
        return keys

    def _forget(self, mapping: Row) -> Key | None:
        """Drop a mapping that lost a triple; its output row."""
        for i, window in self._in_windows:
            used = (window, self._triple(i, mapping))
            users = self._using.get(used)
            if users is not None:
                users.discard(mapping)
                if not users:
                    del self._using[used]
        return self._mappings.pop(mapping)

    def _triple(self, atom: int, mapping: Row) -> EncodedTriple:
        s, p, o = (
            x.id if isinstance(x, po.Constant) else mapping[x.index]
            for x in self.plan.atoms[atom][1]
        )
        return (s, p, o)  # type: ignore[return-value]

    def _outputs(self, mappings: list[Row]) -> list[Key | None]:
        return outputs(self.plan.steps, self.kept, mappings)

    def _apply(
        self, added: Iterable[Key | None], removed: Iterable[Key | None]
    ) -> tuple[Counter[Key], Counter[Key]]:
        """Fold the output rows of new and lost mappings into the answer; the answer's
        change as (rows added, rows removed)."""
        plus = Counter(k for k in added if k is not None)
        minus = Counter(k for k in removed if k is not None)
        if not self.plan.distinct:
            _fold(self.answer, plus, minus)
            return plus, minus
        touched = set(plus) | set(minus)
        before = {k for k in touched if self._counts[k] > 0}
        _fold(self._counts, plus, minus)
        after = {k for k in touched if self._counts[k] > 0}
        plus, minus = Counter(after - before), Counter(before - after)
        _fold(self.answer, plus, minus)
        return plus, minus


def outputs(steps: Iterable[RowLocal], kept: list[int], mappings: list[Row]) -> list[Key | None]:
    """Each mapping's output row (its ``kept`` slots) through the row-local operators
    (None: filtered out)."""
    rows: list[Row] = list(mappings)
    alive = list(range(len(rows)))
    for step in steps:
        match step:
            case po.Select(_, condition):
                truths = condition.truths(rows)
                alive = [i for i, ok in zip(alive, truths, strict=True) if ok]
                rows = [r for r, ok in zip(rows, truths, strict=True) if ok]
            case po.Bind(_, slot, value):
                rows = po.bind_rows(rows, slot, value.values(rows))
            case po.Keep(_, slots):
                rows = po.keep_rows(rows, slots)
    keys: list[Key | None] = [None] * len(mappings)
    for i, row in zip(alive, rows, strict=True):
        keys[i] = tuple(row[k] for k in kept)
    return keys


def _fold(bag: Counter[Key], plus: Counter[Key], minus: Counter[Key]) -> None:
    """bag + plus - minus, in place, without zero counts."""
    bag.update(plus)
    for key, count in minus.items():
        left = bag[key] - count
        if left > 0:
            bag[key] = left
        else:
            del bag[key]
