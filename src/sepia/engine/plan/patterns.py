"""Graph patterns -> physical R2R operators (:mod:`sepia.engine.r2r.operators`) over one
slot table, with the pattern constants dictionary-encoded once. A sub-pattern the engine has
no native operator for yet becomes a ``Fallback`` node that pyoxigraph evaluates."""

from __future__ import annotations

from dataclasses import dataclass

import pyoxigraph as ox

from sepia.algebra import dataset as ds
from sepia.algebra import pattern as gp
from sepia.algebra.query import Unsupported
from sepia.algebra.scope import nodes
from sepia.algebra.sparql import has_nested_test
from sepia.engine.plan.physical import Functions
from sepia.engine.r2r import aggregates
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.expressions import ExpressionEvaluator, calls, has_exists
from sepia.engine.r2r.fallback import EVENT_GRAPH
from sepia.engine.rows import BLANK, Slots
from sepia.rdf.dictionary import Dictionary


@dataclass(frozen=True, slots=True)
class PatternPlanner:
    """Plans the graph patterns of one query (its slots, dataset and constants)."""

    slots: Slots
    dictionary: Dictionary
    default: tuple[po.GraphRef, ...]
    dataset: ds.Dataset
    named: tuple[ox.NamedNode, ...]
    functions: Functions
    base: str | None
    """The query's BASE (IRI() of a relative IRI)."""
    numbers: dict[int, int]
    """Each MATCH node's number (by identity), the slots its interval goes in."""

    def plan(self, p: gp.GraphPattern, graphs: tuple[po.GraphRef, ...]) -> po.PhysicalPlan:
        """The physical operator for ``p`` read in the active graph ``graphs``."""
        match p:
            case gp.Bgp(triples):
                return po.Scan(graphs, tuple(self._encode(t) for t in triples))
            case gp.Join():
                return self._join([self.plan(x, graphs) for x in _join_operands(p)])
            case gp.LeftJoin(left, right, condition) if condition is None or not has_exists(
                condition
            ):
                a, b = self.plan(left, graphs), self.plan(right, graphs)
                test = None if condition is None else self.expression(condition, True)
                return po.LeftOuterJoin(a, b, _keys(a, b), test)
            case gp.Filter(condition, inner) if not has_exists(condition):
                return po.Select(self.plan(inner, graphs), self.expression(condition, True))
            case gp.Extend(inner, variable, value) if not has_exists(value):
                return po.Bind(
                    self.plan(inner, graphs),
                    self.slots.index(variable.value),
                    self.expression(value, False),
                )
            case gp.Union(left, right):
                return po.UnionAll(self.plan(left, graphs), self.plan(right, graphs))
            case gp.Minus(left, right):
                return po.AntiJoin(self.plan(left, graphs), self.plan(right, graphs))
            case gp.Project(inner, variables):
                names = [v.value for v in variables] + self.slots.hidden()
                kept = tuple(self.slots.index(n) for n in names)
                return po.Keep(self.plan(inner, graphs), kept)
            case gp.Match():
                return po.Matches(self.numbers[id(p)])
            case gp.Distinct(inner):
                return po.Dedup(self.plan(inner, graphs))
            case gp.OrderBy(inner, _):
                return self.plan(inner, graphs)  # rows are ordered per evaluation (rdf.order)
            case gp.Values(variables, rows):
                return po.Table(tuple(self._values_row(variables, r) for r in rows))
            case gp.Window(name, inner):
                return self.plan(inner, (po.WindowGraph(name),))
            case gp.Graph(ox.NamedNode() as name, inner) if self.readable(name):
                return self.plan(inner, (po.BackgroundGraph(name),))
            case gp.Graph(ox.NamedNode(), _):
                return po.Table(())  # not a graph of the query's dataset: no solutions
            case gp.Graph(ox.Variable() as variable, inner):
                return self._graph_variable(variable, inner)
            case gp.PathPattern(subject, path, obj) if has_nested_test(path):
                return self._nested_path(subject, path, obj, graphs)
            case gp.Group():
                return self._group(p, graphs)
            case _:
                return self._fallback(p, graphs)

    def _nested_path(self, subject, path, obj, graphs: tuple[po.GraphRef, ...]) -> po.NestedPath:
        """A path with nested tests over the active graph (``engine.paths``): a window, a
        background graph or one event's graph."""
        if isinstance(subject, ox.BlankNode) or isinstance(obj, ox.BlankNode):
            raise Unsupported("a blank node at an end of a path with nested tests")
        return po.NestedPath(graphs, self._position(subject), path, self._position(obj))

    def _join(self, inputs: list[po.PhysicalPlan]) -> po.PhysicalPlan:
        """One ``MultiJoin`` of a tree of joins; scans of the same graph merge into one BGP."""
        merged: list[po.PhysicalPlan] = []
        for node in inputs:
            same = [
                i for i, m in enumerate(merged)
                if isinstance(m, po.Scan) and isinstance(node, po.Scan) and m.graphs == node.graphs
            ]
            if not same:
                merged.append(node)
                continue
            scan = merged[same[0]]
            assert isinstance(scan, po.Scan) and isinstance(node, po.Scan)
            merged[same[0]] = po.Scan(scan.graphs, scan.patterns + node.patterns)
        if len(merged) == 1:
            return merged[0]
        return po.MultiJoin(tuple(merged), tuple(po.certain(m) for m in merged))

    def _graph_variable(self, variable: ox.Variable, inner: gp.GraphPattern) -> po.PhysicalPlan:
        """GRAPH ?g: the union over the dataset's named graphs, each binding ?g to its name
        (never a window's graph: those are not named graphs of the dataset)."""
        slot = self.slots.index(variable.value)
        branches: list[po.PhysicalPlan] = []
        for name in self.named:
            row: list[int | None] = [None] * len(self.slots.names)
            row[slot] = self.dictionary.encode(name)
            part = self.plan(inner, (po.BackgroundGraph(name),))
            table = po.Table((tuple(row),))
            branches.append(po.HashJoin(table, part, _keys(table, part)))
        if not branches:
            return po.Table(())
        union = branches[0]
        for branch in branches[1:]:
            union = po.UnionAll(union, branch)
        return union

    def readable(self, name: ox.NamedNode) -> bool:
        """Whether GRAPH <name> reads a graph of the dataset (FROM NAMED, when given)."""
        declared = self.dataset.default_graphs or self.dataset.named_graphs
        return not declared or name in self.dataset.named_graphs

    def _group(self, p: gp.Group, graphs: tuple[po.GraphRef, ...]) -> po.Fallback:
        """GROUP BY: pyoxigraph's fallback, which the engine maintains itself where it is
        the query's top (``engine.aggregates``) if its aggregates and pattern allow."""
        fallback = self._fallback(p, graphs)
        if graphs == (po.EventGraph(),):
            return fallback
        try:
            inner = self.plan(p.inner, graphs)
        except Unsupported:
            return fallback
        return aggregates.native(p, fallback, inner, self.slots.index) or fallback

    def _fallback(self, p: gp.GraphPattern, graphs: tuple[po.GraphRef, ...]) -> po.Fallback:
        """Hand ``p`` to pyoxigraph, wrapped so that it reads the same active graph (one
        event's graph: ``fallback.EVENT_GRAPH``, written there for each event)."""
        if graphs == (po.EventGraph(),):
            return po.Fallback(gp.Graph(EVENT_GRAPH, p), ())
        if graphs != self.default:
            (ref,) = graphs
            assert not isinstance(ref, po.EventGraph)  # (returned above)
            p = gp.Window(ref.name, p) if isinstance(ref, po.WindowGraph) else gp.Graph(ref.name, p)  # type: ignore[arg-type]
        if calls(p, "TIMESTAMP"):
            raise Unsupported("C-SPARQL timestamp() inside a sub-pattern only pyoxigraph runs")
        named = {n.name for n in nodes(p, gp.Window)}
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

    def expression(self, e, boolean: bool) -> ExpressionEvaluator:
        return ExpressionEvaluator(
            e, self.slots, self.dictionary, boolean=boolean, functions=self.functions,
            base=self.base,
        )

    def _values_row(self, variables: tuple[ox.Variable, ...], row: tuple) -> tuple:
        values: list[int | None] = [None] * len(self.slots.names)
        for variable, term in zip(variables, row, strict=True):
            if term is not None:
                values[self.slots.index(variable.value)] = self.dictionary.encode(term)
        return tuple(values)


def _join_operands(p: gp.GraphPattern) -> list[gp.GraphPattern]:
    """The operands of a tree of joins, left to right (join is associative)."""
    if isinstance(p, gp.Join):
        return _join_operands(p.left) + _join_operands(p.right)
    return [p]


def _keys(a: po.PhysicalPlan, b: po.PhysicalPlan) -> tuple[int, ...]:
    return tuple(sorted(po.certain(a) & po.certain(b)))


def _terms(t: gp.TriplePattern) -> tuple[object, object, object]:
    return (t.subject, t.predicate, t.object)
