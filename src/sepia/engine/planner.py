"""The planner: a query's algebra -> its physical plan (style.md 4: logical and physical
plans are separate types).

Windows become ``WindowOperator``s, the report policy a ``Schedule``, the graph pattern a
tree of physical operators (:mod:`sepia.engine.operators`) over one slot table, with the
pattern constants dictionary-encoded once. A sub-pattern the engine has no native operator
for yet becomes a ``Fallback`` node that pyoxigraph evaluates; ``explain`` shows which.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pyoxigraph as ox

from sepia.algebra import pattern as gp
from sepia.algebra import query as qa
from sepia.algebra import report as rp
from sepia.engine import operators as po
from sepia.engine.expressions import ExpressionEvaluator, has_exists
from sepia.engine.report import Schedule
from sepia.engine.rows import BLANK, Slots
from sepia.engine.windows import WindowOperator
from sepia.rdf.dictionary import Dictionary
from sepia.semantics.sparql import has_nested_test


class Unsupported(ValueError):
    """A query the engine cannot run yet (the message says which construct)."""


@dataclass(frozen=True, slots=True)
class PhysicalQuery:
    """Everything the engine needs to run one query continuously."""

    query: qa.Query
    slots: Slots
    root: po.PhysicalPlan
    windows: dict[ox.NamedNode, tuple[str, WindowOperator]]
    schedule: Schedule | None
    default_graph: tuple[po.GraphRef, ...]


def plan(query: qa.Query, dictionary: Dictionary) -> PhysicalQuery:
    """Compile a query; raises ``Unsupported`` for what the engine cannot run."""
    if isinstance(query.report, rp.PushMatches) or _has(query.pattern, gp.Match):
        raise Unsupported("event patterns (MATCH, SEQ, ...) are not in the engine yet")
    if isinstance(query.form, qa.Describe):
        raise Unsupported("DESCRIBE")
    if isinstance(query.form, qa.Construct) and any(
        isinstance(term, ox.BlankNode) for t in query.form.template for term in _terms(t)
    ):
        raise Unsupported("CONSTRUCT templates with blank nodes")
    windows = {
        w.name: (w.stream.value, WindowOperator(w.spec)) for w in query.dataset.windows
    }
    default = tuple(po.BackgroundGraph(g) for g in query.dataset.default_graphs) or (
        po.BackgroundGraph(None),
    )
    default += tuple(po.WindowGraph(w.name) for w in query.dataset.windows if w.into_default)
    slots = Slots.of(_slot_names(query.pattern) | _slot_names(query.form))  # CONSTRUCT template
    planner = _Planner(slots, dictionary, default)
    schedule = Schedule(query.report, windows) if isinstance(query.report, rp.Report) else None
    root = planner.plan(query.pattern, default)
    return PhysicalQuery(query, slots, root, windows, schedule, default)


@dataclass(frozen=True, slots=True)
class _Planner:
    slots: Slots
    dictionary: Dictionary
    default: tuple[po.GraphRef, ...]

    def plan(self, p: gp.GraphPattern, graphs: tuple[po.GraphRef, ...]) -> po.PhysicalPlan:
        """The physical operator for ``p`` read in the active graph ``graphs``."""
        match p:
            case gp.Bgp(triples):
                return po.Scan(graphs, tuple(self._encode(t) for t in triples))
            case gp.Join(left, right):
                a, b = self.plan(left, graphs), self.plan(right, graphs)
                return po.HashJoin(a, b, _keys(a, b))
            case gp.LeftJoin(left, right, condition) if condition is None or not has_exists(
                condition
            ):
                a, b = self.plan(left, graphs), self.plan(right, graphs)
                test = None if condition is None else self._expression(condition, True)
                return po.LeftOuterJoin(a, b, _keys(a, b), test)
            case gp.Filter(condition, inner) if not has_exists(condition):
                return po.Select(self.plan(inner, graphs), self._expression(condition, True))
            case gp.Extend(inner, variable, value) if not has_exists(value):
                return po.Bind(
                    self.plan(inner, graphs),
                    self.slots.index(variable.value),
                    self._expression(value, False),
                )
            case gp.Union(left, right):
                return po.UnionAll(self.plan(left, graphs), self.plan(right, graphs))
            case gp.Minus(left, right):
                return po.AntiJoin(self.plan(left, graphs), self.plan(right, graphs))
            case gp.Project(inner, variables):
                kept = tuple(self.slots.index(v.value) for v in variables)
                return po.Keep(self.plan(inner, graphs), kept)
            case gp.Distinct(inner):
                return po.Dedup(self.plan(inner, graphs))
            case gp.OrderBy(inner, _):
                return self.plan(inner, graphs)  # results are compared as bags: order is moot
            case gp.Values(variables, rows):
                return po.Table(tuple(self._values_row(variables, r) for r in rows))
            case gp.Window(name, inner):
                return self.plan(inner, (po.WindowGraph(name),))
            case gp.Graph(ox.NamedNode() as name, inner):
                return self.plan(inner, (po.BackgroundGraph(name),))
            case gp.PathPattern(_, path, _) if has_nested_test(path):
                raise Unsupported("paths with nested tests are not in the engine yet")
            case _:
                return self._fallback(p, graphs)

    def _fallback(self, p: gp.GraphPattern, graphs: tuple[po.GraphRef, ...]) -> po.Fallback:
        """Hand ``p`` to pyoxigraph, wrapped so that it reads the same active graph."""
        if graphs != self.default:
            (ref,) = graphs
            p = gp.Window(ref.name, p) if isinstance(ref, po.WindowGraph) else gp.Graph(ref.name, p)  # type: ignore[arg-type]
        named = {n.name for n in _nodes(p, gp.Window)}  # type: ignore[attr-defined]
        named |= {g.name for g in self.default if isinstance(g, po.WindowGraph)}
        return po.Fallback(p, tuple(sorted(named, key=str)))

    def _encode(self, t: gp.TriplePattern) -> po.EncodedPattern:
        s, p, o = (self._position(x) for x in _terms(t))
        return (s, p, o)

    def _position(self, term: object) -> po.Position:
        match term:
            case ox.Variable():
                return po.Slot(self.slots.index(term.value))
            case ox.BlankNode():
                return po.Slot(self.slots.index(BLANK + term.value))
            case _:
                return po.Constant(self.dictionary.encode(term))  # type: ignore[arg-type]

    def _expression(self, e, boolean: bool) -> ExpressionEvaluator:
        return ExpressionEvaluator(e, self.slots, self.dictionary, boolean=boolean)

    def _values_row(self, variables: tuple[ox.Variable, ...], row: tuple) -> tuple:
        values: list[int | None] = [None] * len(self.slots.names)
        for variable, term in zip(variables, row, strict=True):
            if term is not None:
                values[self.slots.index(variable.value)] = self.dictionary.encode(term)
        return tuple(values)


def certain(node: po.PhysicalPlan) -> frozenset[int]:
    """The slots bound in every row a node produces (join keys come from these)."""
    match node:
        case po.Scan(_, patterns):
            return frozenset(p.index for t in patterns for p in t if isinstance(p, po.Slot))
        case po.HashJoin(left, right, _):
            return certain(left) | certain(right)
        case po.UnionAll(left, right):
            return certain(left) & certain(right)
        case po.LeftOuterJoin(left, _, _, _) | po.AntiJoin(left, _):
            return certain(left)
        case po.Select(inner, _) | po.Bind(inner, _, _) | po.Dedup(inner):
            return certain(inner)
        case po.Keep(inner, slots):
            return certain(inner) & frozenset(slots)
        case po.Table(rows):
            width = len(rows[0]) if rows else 0
            return frozenset(i for i in range(width) if all(r[i] is not None for r in rows))
        case po.Fallback():
            return frozenset()


def _keys(a: po.PhysicalPlan, b: po.PhysicalPlan) -> tuple[int, ...]:
    return tuple(sorted(certain(a) & certain(b)))


def _terms(t: gp.TriplePattern) -> tuple[object, object, object]:
    return (t.subject, t.predicate, t.object)


def _nodes(node: object, kind: type) -> list:
    """Every node of type ``kind`` inside an algebra tree."""
    found = [node] if isinstance(node, kind) else []
    if isinstance(node, tuple):
        return found + [m for x in node for m in _nodes(x, kind)]
    if dataclasses.is_dataclass(node):
        return found + [
            m for f in dataclasses.fields(node) for m in _nodes(getattr(node, f.name), kind)
        ]
    return found


def _has(node: object, kind: type) -> bool:
    return bool(_nodes(node, kind))


def _slot_names(pattern: object) -> set[str]:
    """Every variable of an algebra tree, and every blank node of its triple patterns."""
    names = {v.value for v in _nodes(pattern, ox.Variable)}
    return names | {BLANK + b.value for b in _nodes(pattern, ox.BlankNode)}
