"""The planner: a query's algebra -> its physical plan (style.md 4: logical and physical
plans are separate types).

Windows become ``WindowOperator``s, the report policy a ``Schedule``, the graph pattern a
tree of physical operators (:mod:`sepia.engine.r2r.operators`) over one slot table, with the
pattern constants dictionary-encoded once. A sub-pattern the engine has no native operator
for yet becomes a ``Fallback`` node that pyoxigraph evaluates; ``explain`` shows which.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import pyoxigraph as ox

from sepia.algebra import dataset as ds
from sepia.algebra import event as ev
from sepia.algebra import expression as ex
from sepia.algebra import pattern as gp
from sepia.algebra import query as qa
from sepia.algebra import report as rp
from sepia.engine.cep.automaton import (
    Automaton,
    Bop,
    Conj,
    Disj,
    Gpm,
    State,
    elements,
    is_sequence,
    split_filters,
    stream_of,
)
from sepia.engine.cep.epsparql import Horizon, OccurrenceLeaf
from sepia.engine.cep.events import (
    Combined,
    EventFilter,
    EventLeaf,
    EventSeq,
    EventTree,
    Extreme,
    Negated,
    OptionalJoin,
)
from sepia.engine.cep.runs import Within
from sepia.engine.r2r import aggregates
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.expressions import ExpressionEvaluator, calls, has_exists, variables_of
from sepia.engine.r2r.fallback import EVENT_GRAPH
from sepia.engine.rows import BLANK, FROM, HIDDEN, TO, Slots, interval_slots
from sepia.engine.s2r.report import Schedule
from sepia.engine.s2r.windows import WindowOperator
from sepia.rdf.dictionary import Dictionary
from sepia.semantics.partition import event_leaves
from sepia.semantics.sparql import has_nested_test
from sepia.semantics.variables import bop_variables, pattern_variables

RSEPQL_POLICIES = (
    ev.SelectionPolicy.UNRESTRICTED,
    ev.SelectionPolicy.NAIVE,
    ev.SelectionPolicy.CHRONOLOGICAL,
    ev.SelectionPolicy.RECENT,
)
"""The RSEP-QL event policies (CHRONOLOGICAL and RECENT consume: ``events.Consumption``)."""
COMBINED = {
    ev.Or: "or",
    ev.IntervalJoin: "join",
    ev.EventJoin: "covering-join",
    ev.EqJoin: "eq-join",
    ev.And: "same-time",
}
"""The binary event operators ``events.Combined`` applies, by their algebra node."""


Functions = dict[ox.NamedNode, Callable[..., ox.Literal | None]]
"""Extension functions by IRI, as pyoxigraph's ``custom_functions`` takes them."""


class Unsupported(ValueError):
    """A query the engine cannot run yet (the message says which construct)."""


@dataclass(frozen=True, slots=True)
class Partition:
    """PARTITION BY ?v (language.md 4b): the variable's slot, and the plan of every basic
    event pattern of the query in full (FILTERs on other elements' variables included, as
    the reference reads them): an event joins partition x when one of them binds ?v = x."""

    slot: int | None
    """None when no pattern mentions ?v: no event joins any partition."""
    leaves: tuple[po.PhysicalPlan, ...]


class GpmRows:
    """The rows of GPM plans on the events of one instant, shared by the queries that run
    one ``PhysicalQuery`` (PARTITION BY's router, then the partitions, match each event with
    structurally equal plans): a cache of pure results (``ContinuousQuery._gpm``), not
    state. Plans are keyed by their identity, each mapped once to the first equal plan."""

    LIMIT = 1 << 12

    def __init__(self) -> None:
        self.rows: dict[tuple, tuple[object, list]] = {}
        self._same: dict[int, tuple[po.PhysicalPlan, int]] = {}
        self._plans: dict[po.PhysicalPlan, po.PhysicalPlan] = {}

    def plan_key(self, plan: po.PhysicalPlan) -> int:
        """One number for all the plans equal to ``plan`` (kept alive here, so that no
        other object takes its identity)."""
        found = self._same.get(id(plan))
        if found is None:
            found = self._same[id(plan)] = (plan, id(self._plans.setdefault(plan, plan)))
        return found[1]


@dataclass(frozen=True, slots=True)
class PhysicalQuery:
    """Everything the engine needs to run one query continuously."""

    query: qa.Query
    slots: Slots
    root: po.PhysicalPlan
    windows: dict[ox.NamedNode, tuple[str, WindowOperator]]
    schedule: Schedule | None
    default_graph: tuple[po.GraphRef, ...]
    automaton: Automaton | None = None
    within: Within | None = None
    events: EventTree | None = None
    occurrences: tuple[OccurrenceLeaf, ...] = ()
    """EP-SPARQL's BGPs over triple occurrences in ``events``."""
    horizon: Horizon | None = None
    """A top-level getDURATION() bound on the event pattern (what occurrences can be
    forgotten, when the pattern only grows)."""
    partition: Partition | None = None
    trees: tuple[EventTree, ...] = ()
    """With several MATCHes, the event tree of each (``events`` is the first's)."""
    gpm_rows: GpmRows = dataclasses.field(default_factory=lambda: GpmRows(), compare=False)
    """GPM plans' rows on one event, shared by the queries running this plan."""


def plan(
    query: qa.Query,
    dictionary: Dictionary,
    named_graphs: tuple[ox.NamedNode, ...] = (),
    functions: Functions | None = None,
) -> PhysicalQuery:
    """Compile a query; raises ``Unsupported`` for what the engine cannot run.
    ``named_graphs`` are the background's named graphs (what GRAPH ?g ranges over when the
    query has no FROM / FROM NAMED); ``functions`` answer the extension functions that read
    the engine's state (C-SPARQL timestamp())."""
    matches = _nodes(query.pattern, gp.Match)
    if query.partition_by is not None and not matches:
        raise Unsupported("PARTITION BY on a query without an event pattern")
    if matches and calls(query.pattern, "TIMESTAMP"):
        raise Unsupported("C-SPARQL timestamp() in an event query")
    windows = {
        w.name: (w.stream.value, WindowOperator(w.spec)) for w in query.dataset.windows
    }
    windows |= _stream_windows(matches)
    default = _default_graph(query.dataset)
    default += tuple(po.WindowGraph(w.name) for w in query.dataset.windows if w.into_default)
    names = _slot_names(query.pattern) | _slot_names(query.form)  # CONSTRUCT template
    if matches:
        names |= set(HIDDEN) | {n for k in range(1, len(matches)) for n in interval_slots(k)}
    slots = Slots.of(names)
    dataset = query.dataset
    visible = named_graphs
    if dataset.default_graphs or dataset.named_graphs:
        visible = dataset.named_graphs
    numbers = {id(m): k for k, m in enumerate(matches)}
    planner = _Planner(
        slots, dictionary, default, dataset, tuple(visible), functions or {}, query.base, numbers
    )
    schedule = Schedule(query.report, windows) if isinstance(query.report, rp.Report) else None
    root = planner.plan(query.pattern, default)
    if not matches:
        return PhysicalQuery(query, slots, root, windows, schedule, default)
    if len(matches) > 1:
        trees = _several_matches(query, planner, matches)
        return PhysicalQuery(query, slots, root, windows, None, default, events=trees[0],
                             trees=trees)  # fmt: skip
    event = matches[0].event
    partition = planner.partition(query.partition_by, event)
    if not is_sequence(event):
        if query.event_policy not in RSEPQL_POLICIES:
            raise Unsupported(f"event patterns: EVENT POLICY {query.event_policy.value}")
        leaves: list[OccurrenceLeaf] = []
        tree = planner.event_tree(event, query.event_policy, leaves)
        horizon = _horizon(event) if leaves else None
        return PhysicalQuery(
            query, slots, root, windows, None, default, events=tree, occurrences=tuple(leaves),
            horizon=horizon, partition=partition,
        )
    automaton = planner.automaton(event)
    within = None if query.within is None else Within(query.within.width, query.within.tumbling)
    return PhysicalQuery(
        query, slots, root, windows, None, default, automaton, within, partition=partition
    )


ORIGIN = -(1 << 62)
"""Before every time: a stream's events are those of a landmark window from here."""


def stream_window(stream: ox.NamedNode) -> ox.NamedNode:
    """The implicit window an EVENT over a stream reads (a SPAseq GPM outside a sequence)."""
    return ox.NamedNode(f"urn:sepia:stream-events:{stream.value}")


def _stream_windows(matches: list[gp.Match]) -> dict[ox.NamedNode, tuple[str, WindowOperator]]:
    """An EVENT over a stream (not inside a SPAseq sequence, which reads its streams
    itself) sees every element of the stream so far, as the reference's does: a landmark
    window from before every time, named after the stream (``stream_window``)."""
    return {
        stream_window(e.stream): (e.stream.value, WindowOperator(ds.Landmark(ORIGIN)))
        for m in matches
        if not is_sequence(m.event)
        for e in _nodes(m.event, ev.Event)
        if e.window is None and e.stream is not None
    }


def _several_matches(
    query: qa.Query, planner: _Planner, matches: list[gp.Match]
) -> tuple[EventTree, ...]:
    """The event tree of each MATCH of a query with several: each gives, at an instant,
    every match it has then (not only those ending then), so that a new match of one
    joins the earlier matches of the others (``ContinuousQuery._several``)."""
    if query.partition_by is not None:
        raise Unsupported("PARTITION BY over several MATCHes")
    if any(is_sequence(m.event) for m in matches):
        raise Unsupported(
            "a SPAseq sequence among several MATCHes (every match of it would be kept for "
            "the whole input)"
        )
    if query.event_policy not in (ev.SelectionPolicy.UNRESTRICTED, ev.SelectionPolicy.NAIVE):
        raise Unsupported(f"several MATCHes under EVENT POLICY {query.event_policy.value}")
    trees = []
    for m in matches:
        leaves: list[OccurrenceLeaf] = []
        tree = planner.event_tree(m.event, query.event_policy, leaves)
        consuming = (ev.SelectionPolicy.CHRONOLOGICAL, ev.SelectionPolicy.RECENT)
        if leaves or any(s.policy in consuming for s in _nodes(tree, EventSeq)):
            raise Unsupported(
                "EP-SPARQL occurrences or CHRONOLOGICAL / RECENT among several MATCHes"
            )
        trees.append(tree)
    return tuple(trees)


@dataclass(frozen=True, slots=True)
class _Planner:
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

    def automaton(self, event: ev.EventPattern) -> Automaton:
        """Compile a SPAseq sequence into its automaton (one state per element)."""
        steps = elements(event)
        bops = [_unmodified(e) for _, e in steps]
        variables = [bop_variables(b) for b in bops]
        states = []
        for i, ((strategy, element), bop) in enumerate(zip(steps, bops, strict=True)):
            others = set().union(*(v for j, v in enumerate(variables) if j != i))
            deferred: list = []
            compiled = self._bop(bop, deferred)
            check = None
            if deferred:
                check = self._expression(_conjunction(deferred), True)
            own = tuple(sorted(self.slots.index(n) for n in variables[i] - others))
            kleene, optional = isinstance(element, ev.Kleene), isinstance(element, ev.Optional)
            negated = isinstance(element, ev.Negation)
            states.append(State(compiled, strategy, kleene, optional, negated, own, check))
        return Automaton(tuple(states))

    def event_tree(
        self, e: ev.EventPattern, default: ev.SelectionPolicy, leaves: list[OccurrenceLeaf]
    ) -> EventTree:
        """An RSEP-QL, CQELS-CEP or EP-SPARQL event pattern; a SEQ that says UNRESTRICTED
        follows the query's EVENT POLICY. EP-SPARQL's occurrence BGPs are numbered into
        ``leaves`` (their solutions are kept by ``epsparql.Occurrences``)."""
        sub = lambda x: self.event_tree(x, default, leaves)  # noqa: E731
        match e:
            case ev.Event(pattern, ox.NamedNode() as window):
                return EventLeaf(window, self._event_plan(pattern))
            case ev.Event(pattern, None, ox.NamedNode() as stream):
                return EventLeaf(stream_window(stream), self._event_plan(pattern))
            case ev.Event():
                raise Unsupported("event patterns: an EVENT naming neither window nor stream")
            case ev.OccurrencePattern(bgp):
                plans = tuple(self._event_plan(gp.Bgp((t,))) for t in bgp.triples)
                leaves.append(OccurrenceLeaf(plans, len(leaves)))
                return leaves[-1]
            case ev.Seq(left, right, policy) | ev.SeqJoin(left, right, policy) if (
                policy in RSEPQL_POLICIES
            ):
                if policy is ev.SelectionPolicy.UNRESTRICTED:
                    policy = default
                return EventSeq(sub(left), sub(right), policy)
            case ev.First(inner) | ev.Last(inner):
                return Extreme(sub(inner), isinstance(e, ev.Last))
            case ev.Or(left, right) | ev.IntervalJoin(left, right) | ev.EventJoin(
                left, right
            ) | ev.EqJoin(left, right) | ev.And(left, right):
                return Combined(COMBINED[type(e)], sub(left), sub(right))
            case ev.SeqWithout(left, negated, right):
                return Negated(sub(left), sub(negated), sub(right))
            case ev.NoHead(negated, right):
                return Negated(None, sub(negated), sub(right))
            case ev.NoTail(left, negated):
                return Negated(sub(left), sub(negated), None)
            case ev.EventFilter(condition, inner):
                return self._event_filter(_conjuncts(condition), sub(inner))
            case ev.SeqRightJoin(optional, required, condition):
                test = None if condition is None else self._expression(condition, True)
                return OptionalJoin(sub(required), sub(optional), test, equal=False)
            case ev.EqLeftJoin(left, right, condition):
                test = None if condition is None else self._expression(condition, True)
                return OptionalJoin(sub(left), sub(right), test, equal=True)
            case _:
                raise Unsupported(
                    f"event patterns: {type(e).__name__} outside a SPAseq sequence"
                )

    def partition(self, variable: ox.Variable | None, e: ev.EventPattern) -> Partition | None:
        """The plans that say which partitions an event joins (None: not partitioned)."""
        if variable is None:
            return None
        if variable.value not in self.slots.names:
            return Partition(None, ())
        leaves = tuple(self._event_plan(p) for p in event_leaves(e))
        return Partition(self.slots.index(variable.value), leaves)

    def _event_filter(self, conjuncts: list[ex.Expression], tree: EventTree) -> EventTree:
        """Filter(F, Psi), each conjunct of F that reads no interval sunk to the deepest
        operand that binds all its variables through SEQ and the joins, whose mappings pass
        on unchanged into their results: it then prunes before pairing (exact, as A && B
        holds exactly when both hold)."""
        kept = []
        for conjunct in conjuncts:
            names = variables_of(conjunct)
            sunk = None
            if not has_exists(conjunct) and names <= set(self.slots.names) - {FROM, TO}:
                sunk = self._sink(tree, conjunct, {self.slots.index(n) for n in names})
            if sunk is None:
                kept.append(conjunct)
            else:
                tree = sunk
        if not kept:
            return tree
        return EventFilter(self._expression(_conjunction(kept), True), tree)

    def _sink(self, tree: EventTree, conjunct: ex.Expression, slots: set[int]) -> EventTree | None:
        """``tree`` with ``conjunct`` applied inside it, or None where it must stay above."""
        match tree:
            case EventSeq(left, right, ev.SelectionPolicy.UNRESTRICTED) | Combined(
                "covering-join" | "eq-join" | "join" | "same-time", left, right
            ):
                for field, side in (("left", left), ("right", right)):
                    if slots <= bound_slots(side):
                        inner = self._sink(side, conjunct, slots) or EventFilter(
                            self._expression(conjunct, True), side
                        )
                        return dataclasses.replace(tree, **{field: inner})
            case EventFilter(_, inner) if slots <= bound_slots(inner):
                sunk = self._sink(inner, conjunct, slots)
                return dataclasses.replace(tree, inner=sunk) if sunk is not None else None
        return None

    def _event_plan(self, pattern: gp.GraphPattern) -> po.PhysicalPlan:
        """A pattern over one event graph (a GPM or an EVENT's pattern), fully native."""
        return self.plan(pattern, (po.EventGraph(),))

    def _bop(self, p: ev.EventPattern, deferred: list) -> Bop:
        match p:
            case ev.Event(pattern):
                stream = stream_of(p)
                pattern = split_filters(pattern, pattern_variables(pattern), deferred)
                return Gpm(stream, self._event_plan(pattern))
            case ev.And(left, right):
                return Conj(self._bop(left, deferred), self._bop(right, deferred))
            case ev.Or(left, right):
                return Disj(self._bop(left, deferred), self._bop(right, deferred))
            case _:
                raise Unsupported(f"{type(p).__name__} as a SPAseq sequence element")

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
            row = [None] * len(self.slots.names)
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
            p = gp.Window(ref.name, p) if isinstance(ref, po.WindowGraph) else gp.Graph(ref.name, p)  # type: ignore[arg-type]
        if calls(p, "TIMESTAMP"):
            raise Unsupported("C-SPARQL timestamp() inside a sub-pattern only pyoxigraph runs")
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


def _default_graph(dataset: ds.Dataset) -> tuple[po.GraphRef, ...]:
    """The FROM graphs; none with FROM NAMED alone; else the background default graph
    (SPARQL 1.1 section 13.2)."""
    if dataset.default_graphs or dataset.named_graphs:
        return tuple(po.BackgroundGraph(g) for g in dataset.default_graphs)
    return (po.BackgroundGraph(None),)


def _unmodified(e: ev.EventPattern) -> ev.EventPattern:
    """A sequence element without its modifier (+, ?, !)."""
    return e.inner if isinstance(e, ev.Kleene | ev.Optional | ev.Negation) else e


def _conjunction(expressions: list) -> ex.Expression:
    """F1 && F2 && ...: the deferred FILTERs of one GPM, checked together."""
    result = expressions[0]
    for e in expressions[1:]:
        result = ex.Binary(ex.BinaryOperator.AND, result, e)
    return result


def bound_slots(tree: EventTree) -> frozenset[int]:
    """The slots every event mapping of ``tree`` binds."""
    match tree:
        case EventLeaf(_, plan):
            return po.certain(plan)
        case OccurrenceLeaf(patterns):
            return frozenset().union(*(po.certain(p) for p in patterns))
        case EventSeq(left, right) | Combined(
            "covering-join" | "eq-join" | "join" | "same-time", left, right
        ):
            return bound_slots(left) | bound_slots(right)
        case Combined(_, left, right):
            return bound_slots(left) & bound_slots(right)
        case Extreme(inner) | EventFilter(_, inner) | OptionalJoin(inner):
            return bound_slots(inner)
        case Negated(left, _, right):
            return frozenset().union(*(bound_slots(x) for x in (left, right) if x is not None))


def _horizon(event: ev.EventPattern) -> Horizon | None:
    """``getDURATION() < d`` (or <=) among the conjuncts of a top-level event FILTER."""
    if not isinstance(event, ev.EventFilter):
        return None
    for c in _conjuncts(event.expression):
        if (
            isinstance(c, ex.Binary)
            and c.operator in (ex.BinaryOperator.LESS, ex.BinaryOperator.LESS_OR_EQUAL)
            and isinstance(c.left, ex.Call)
            and c.left.function == "GETDURATION"
        ):
            found = Horizon.of(c.right, c.operator is ex.BinaryOperator.LESS)
            if found is not None:
                return found
    return None


def _conjuncts(e: ex.Expression) -> list[ex.Expression]:
    """The operands of a chain of &&."""
    if isinstance(e, ex.Binary) and e.operator is ex.BinaryOperator.AND:
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def _join_operands(p: gp.GraphPattern) -> list[gp.GraphPattern]:
    """The operands of a tree of joins, left to right (join is associative)."""
    if isinstance(p, gp.Join):
        return _join_operands(p.left) + _join_operands(p.right)
    return [p]


def _keys(a: po.PhysicalPlan, b: po.PhysicalPlan) -> tuple[int, ...]:
    return tuple(sorted(po.certain(a) & po.certain(b)))


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


def _slot_names(pattern: object) -> set[str]:
    """Every variable of an algebra tree, and every blank node of its triple patterns."""
    names = {v.value for v in _nodes(pattern, ox.Variable)}
    return names | {BLANK + b.value for b in _nodes(pattern, ox.BlankNode)}
