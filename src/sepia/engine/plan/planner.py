"""The planner: a query's algebra -> its physical plan (style.md 4: logical and physical
plans are separate types).

Windows become ``WindowOperator``s, the report policy a ``Schedule``, the graph pattern a
tree of physical operators (:mod:`sepia.engine.r2r.operators`) over one slot table, with the
pattern constants dictionary-encoded once. A sub-pattern the engine has no native operator
for yet becomes a ``Fallback`` node that pyoxigraph evaluates; ``explain`` shows which.
"""

from __future__ import annotations

import pyoxigraph as ox

from sepia.algebra import dataset as ds
from sepia.algebra import event as ev
from sepia.algebra import pattern as gp
from sepia.algebra import query as qa
from sepia.algebra import report as rp
from sepia.algebra.query import Unsupported
from sepia.algebra.scope import nodes
from sepia.engine.cep.automaton import (
    is_sequence,
)
from sepia.engine.cep.epsparql import OccurrenceLeaf
from sepia.engine.cep.event_trees import EventSeq, EventTree
from sepia.engine.cep.runs import Within
from sepia.engine.plan.events import ORIGIN, RSEPQL_POLICIES, EventPlanner, horizon, stream_window
from sepia.engine.plan.physical import (
    EventPlan,
    Functions,
    MatchesPlan,
    PhysicalQuery,
    QueryPlan,
    SequencePlan,
    WindowPlan,
)
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.expressions import calls
from sepia.engine.rows import BLANK, HIDDEN, Slots, interval_slots
from sepia.engine.s2r.report import Schedule
from sepia.engine.s2r.windows import WindowOperator
from sepia.rdf.dictionary import Dictionary


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
    matches = nodes(query.pattern, gp.Match)
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
    planner = EventPlanner(
        slots, dictionary, default, dataset, tuple(visible), functions or {}, query.base, numbers
    )
    root = planner.plan(query.pattern, default)
    return PhysicalQuery(
        query, slots, root, windows, default, _kind(query, planner, matches, windows)
    )


def _kind(
    query: qa.Query,
    planner: EventPlanner,
    matches: list[gp.Match],
    windows: dict[ox.NamedNode, tuple[str, WindowOperator]],
) -> QueryPlan:
    """Which of the four kinds of query this is, with what that kind needs."""
    report = query.report
    if not matches:
        return WindowPlan(Schedule(report, windows) if isinstance(report, rp.Report) else None)
    schedule = _reported(query, matches, windows) if isinstance(report, rp.Report) else None
    if len(matches) > 1:
        return MatchesPlan(_several_matches(query, planner, matches), schedule)
    event = matches[0].event
    partition = planner.partition(query.partition_by, event)
    if not is_sequence(event):
        if query.event_policy not in RSEPQL_POLICIES:
            raise Unsupported(f"event patterns: EVENT POLICY {query.event_policy.value}")
        leaves: list[OccurrenceLeaf] = []
        tree = planner.event_tree(event, query.event_policy, leaves)
        if leaves and schedule is not None:
            raise Unsupported("EP-SPARQL triple occurrences under a REPORT clause")
        bound = horizon(event) if leaves else None
        return EventPlan(tree, tuple(leaves), bound, partition, schedule)
    within = None if query.within is None else Within(query.within.width, query.within.tumbling)
    return SequencePlan(planner.automaton(event), within, partition)


def _reported(
    query: qa.Query,
    matches: list[gp.Match],
    windows: dict[ox.NamedNode, tuple[str, WindowOperator]],
) -> Schedule:
    """The schedule of an event query under a REPORT clause: its event patterns are
    evaluated over the windows at the report policy's instants (language.md section 3: only
    without one are they push-based). Its instants come from the declared windows; the
    patterns must read only those."""
    assert isinstance(query.report, rp.Report)
    if any(is_sequence(m.event) for m in matches):
        raise Unsupported("a SPAseq sequence under a REPORT clause")
    if query.partition_by is not None:
        raise Unsupported("PARTITION BY under a REPORT clause")
    declared = {w.name for w in query.dataset.windows}
    if any(e.window not in declared for m in matches for e in nodes(m.event, ev.Event)):
        raise Unsupported("an EVENT over a stream (not a window) under a REPORT clause")
    return Schedule(query.report, {n: w for n, w in windows.items() if n in declared})


def _stream_windows(matches: list[gp.Match]) -> dict[ox.NamedNode, tuple[str, WindowOperator]]:
    """An EVENT over a stream (not inside a SPAseq sequence, which reads its streams
    itself) sees every element of the stream so far, as the reference's does: a landmark
    window from before every time, named after the stream (``stream_window``)."""
    return {
        stream_window(e.stream): (e.stream.value, WindowOperator(ds.Landmark(ORIGIN)))
        for m in matches
        if not is_sequence(m.event)
        for e in nodes(m.event, ev.Event)
        if e.window is None and e.stream is not None
    }


def _several_matches(
    query: qa.Query, planner: EventPlanner, matches: list[gp.Match]
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
        if leaves or any(s.policy in consuming for s in nodes(tree, EventSeq)):
            raise Unsupported(
                "EP-SPARQL occurrences or CHRONOLOGICAL / RECENT among several MATCHes"
            )
        trees.append(tree)
    return tuple(trees)


def _default_graph(dataset: ds.Dataset) -> tuple[po.GraphRef, ...]:
    """The FROM graphs; none with FROM NAMED alone; else the background default graph
    (SPARQL 1.1 section 13.2)."""
    if dataset.default_graphs or dataset.named_graphs:
        return tuple(po.BackgroundGraph(g) for g in dataset.default_graphs)
    return (po.BackgroundGraph(None),)


def _slot_names(pattern: object) -> set[str]:
    """Every variable of an algebra tree, and every blank node of its triple patterns."""
    names = {v.value for v in nodes(pattern, ox.Variable)}
    return names | {BLANK + b.value for b in nodes(pattern, ox.BlankNode)}
