"""The physical plan as text, for ``sepia explain``: one operator per line, indented."""

from __future__ import annotations

from typing import assert_never

from sepia.algebra import to_sexpr
from sepia.engine.cep.automaton import Bop, Conj, Disj, Gpm
from sepia.engine.cep.epsparql import OccurrenceLeaf
from sepia.engine.cep.event_trees import (
    Combined,
    EventFilter,
    EventLeaf,
    EventSeq,
    EventTree,
    Extreme,
    Negated,
    OptionalJoin,
    consumes,
    grows,
)
from sepia.engine.cep.seq_chains import seq_chain
from sepia.engine.plan.physical import (
    EventPlan,
    MatchesPlan,
    PhysicalQuery,
    SequencePlan,
    WindowPlan,
)
from sepia.engine.plan.split import explain_split
from sepia.engine.r2r import aggregates
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.delta import plan_of
from sepia.engine.r2s.streams import operator_of
from sepia.engine.rows import Slots
from sepia.rdf.dictionary import Dictionary


def explain(
    physical: PhysicalQuery, dictionary: Dictionary, columnar: bool | str = False
) -> str:
    """Windows, report policy, then the R2R operator tree (fallbacks marked FALLBACK);
    ``columnar``: True when the columnar core runs the plan, else why not (a text), or
    False when not asked (``sepia.engine.explain`` asks ``sepia.engine.columnar``)."""
    lines = [f"R2S {operator_of(physical.query).__name__}"]
    windows = physical.windows.items()
    lines += [f"S2R window {name} on <{stream}>: {op.spec}" for name, (stream, op) in windows]
    lines.append(f"report {physical.query.report}")
    lines.append(_path(physical) if columnar is True else _evaluation(physical))
    if isinstance(columnar, str):
        lines.append(f"path: rows (not the columnar core: {columnar})")
    lines += _tree(physical.root, physical.slots, dictionary, 0, columnar is True)
    match physical.kind:
        case WindowPlan():
            pass
        case SequencePlan() as sequence:
            lines += _automaton(sequence, physical.slots, dictionary)
        case MatchesPlan(trees, schedule):
            when = "arrival" if schedule is None else "report instant"
            for number, tree in enumerate(trees):
                lines.append(f"event pattern of MATCH {number} (every mapping at each {when})")
                lines += _events(tree, physical.slots, dictionary, 1)
        case EventPlan(tree, horizon=horizon, schedule=schedule):
            when = "arrival" if schedule is None else "report instant"
            how = f"derivations over the whole windows at each {when}, consuming"
            if not consumes(tree):
                how = ("mappings ending at each arrival" if schedule is None
                       else "every mapping over the windows at each report instant")  # fmt: skip
            lines.append(f"event pattern ({how})")
            if horizon is not None and grows(tree):
                implied = isinstance(tree, EventFilter) and tree.within == horizon
                alone = "; the FILTER of it alone keeps all those: not evaluated"
                lines.append(
                    f"  horizon getDURATION() {horizon.text()}: every operand reads only the "
                    "mappings that start within it before the arrival; older occurrences "
                    f"are forgotten{alone if implied and horizon.exact else ''}"
                )
            lines += _events(tree, physical.slots, dictionary, 1)
            chain = None if schedule is not None or consumes(tree) else seq_chain(tree)
            if chain is not None:
                lines.append(
                    f"  sequence chain: the {len(chain.levels)} range-indexed SEQ levels above "
                    "kept per value of their shared variables, sorted by each index's key "
                    "(exact numbers; other values tested by the FILTER); each arrival's right "
                    "mappings find their partners by bisection, the pairs found are the next "
                    "level's left mappings"
                )
        case _:
            assert_never(physical.kind)
    if physical.partition is not None:
        lines += _partition(physical, dictionary)
    if isinstance(physical.kind, WindowPlan):
        lines.append(explain_split(physical.query))
    return "\n".join(lines)


def _path(physical: PhysicalQuery) -> str:
    """The columnar core's line (``sepia.engine.columnar``), or why the row engine runs."""
    if isinstance(physical.kind, SequencePlan):
        routing = (
            "PARTITION BY as a group-by on the key column" if physical.partition is not None
            else "no PARTITION BY: the streamset as one partition"
        )
        return (
            f"path: columnar: {routing} (each distinct BGP matched once per batch of events), "
            "the automaton stepping candidate rows only (, as a shift to the partition's next "
            "instant, ; as the earliest later option, & as a join of candidates at one instant)"
        )
    if isinstance(physical.kind, EventPlan) and physical.kind.occurrences:
        return (
            "path: columnar: fed batches of id columns, cut into instants, each instant's "
            "elements closed under RDFS if it runs and stepped by the row engine's "
            "occurrences (the answers and their order the row engine's)"
        )
    if isinstance(physical.kind, EventPlan):
        return (
            "path: columnar: the SEQ chain's basic event patterns matched once per span of "
            "elements, joined right to left as vector joins on the shared variables with "
            "the matches each window still shows (time tests as vector comparisons); the "
            "graph pattern run by the row engine at each instant a match completes"
        )
    return (
        "evaluation: columnar, full at each instant: windows as time-sorted id columns, "
        "scans as masks, joins as vector joins, FILTERs as vector expressions where exact "
        "(numbers, term equality, IN, BOUND, term kinds; a function of one variable once per "
        "distinct term), the rest of a FILTER and BINDs once per distinct input, "
        "GROUP BY as vector reductions per group (under RDFS entailment: the row engine)"
    )


def _evaluation(physical: PhysicalQuery) -> str:
    """Whether each evaluation maintains the answer from the windows' changes (``delta``)."""
    events = not isinstance(physical.kind, WindowPlan)
    found = plan_of(physical.query.form, physical.root, events)
    if not isinstance(found, str):
        return "evaluation: delta (CQELS): only mappings using window triples that entered or left"
    grouped = aggregates.plan_of(physical.query.form, physical.root, events, lambda _: True)
    if not isinstance(grouped, str):
        return (
            "evaluation: GROUP BY maintained from the delta (CQELS) of its pattern: only the "
            "groups whose mappings changed (a C-SPARQL window merged with a non-empty default "
            "graph: full at each instant)"
        )
    return f"evaluation: full at each instant (delta evaluation does not cover {found})"


def _partition(physical: PhysicalQuery, dictionary: Dictionary) -> list[str]:
    """PARTITION BY: the key, and the leaf plans that route each event to partitions."""
    partition, slots = physical.partition, physical.slots
    assert partition is not None
    if partition.slot is None:
        return ["partition by a variable no event pattern binds: no event joins a partition"]
    lines = [
        f"partition by ?{slots.names[partition.slot]}: one run buffer per value; an event "
        f"joins the partitions these {len(partition.leaves)} patterns bind on it"
    ]
    for leaf in partition.leaves:
        lines += _tree(leaf, slots, dictionary, 1)
    return lines


def _events(tree: EventTree, slots: Slots, dictionary: Dictionary, depth: int) -> list[str]:
    """An event pattern tree: its operators, then each leaf's plan over one event graph."""
    pad = "  " * depth
    below = lambda *children: [  # noqa: E731
        line for c in children if c is not None
        for line in _events(c, slots, dictionary, depth + 1)
    ]
    match tree:
        case EventLeaf(window, plan):
            return [f"{pad}EVENT over window {window}", *_tree(plan, slots, dictionary, depth + 1)]
        case OccurrenceLeaf(patterns):
            return [f"{pad}occurrence BGP (delta join per arrival, indexed by value)",
                    *(line for p in patterns for line in _tree(p, slots, dictionary, depth + 1))]
        case EventSeq(left, right, policy):
            return [f"{pad}SEQ {policy.value}", *below(left, right)]
        case Extreme(inner, last):
            return [f"{pad}{'LAST' if last else 'FIRST'}", *below(inner)]
        case Combined(operator, left, right):
            return [f"{pad}{operator.upper()}", *below(left, right)]
        case Negated(left, negated, right):
            kind = "NO_HEAD" if left is None else "NO_TAIL" if right is None else "SEQ_WO"
            return [f"{pad}{kind}", *below(left), f"{pad}  not:", *below(negated), *below(right)]
        case EventFilter(condition, inner, pair):
            index = [] if pair is None else [f"{pad}  {pair.text}"]
            return [f"{pad}FILTER {condition.text}", *index, *below(inner)]
        case OptionalJoin(required, optional, condition, equal):
            kind = "EQUALSOPTIONAL" if equal else "OPTIONALSEQ"
            test = "" if condition is None else f" {condition.text}"
            return [f"{pad}{kind}{test}", *below(required), f"{pad}  optional:", *below(optional)]
        case _:
            assert_never(tree)


def _automaton(sequence: SequencePlan, slots: Slots, dictionary: Dictionary) -> list[str]:
    """The automaton's states, and the edges that leave each one."""
    automaton = sequence.automaton
    lines = [f"automaton: {len(automaton)} states, match at state {len(automaton)}"
             + (f", {sequence.within}" if sequence.within else "")]
    for i, state in enumerate(automaton.states):
        strategy = "first" if state.strategy is None else state.strategy.value
        edges = [f"take -> {i + 1} ({strategy})"]
        if state.kleene:
            edges.append(f"take -> {i} (again, {';' if i == 0 else ','})")
        if state.optional:
            edges.append(f"skip -> {i + 1}")
        if state.negated:
            edges = [f"guard on state {i + 1}" if i + 1 < len(automaton) else "wait to horizon"]
        own = [slots.names[k] for k in state.own] if state.kleene else []
        check = "" if state.check is None else f" check {state.check.text}"
        lines.append(f"  state {i}: {'; '.join(edges)}{check}" + (f" own {own}" if own else ""))
        lines += _bop(state.bop, slots, dictionary, 2)
    return lines


def _bop(bop: Bop, slots: Slots, dictionary: Dictionary, depth: int) -> list[str]:
    pad = "  " * depth
    match bop:
        case Gpm(stream, plan):
            return [f"{pad}GPM on <{stream}>", *_tree(plan, slots, dictionary, depth + 1)]
        case Conj(left, right) | Disj(left, right):
            sign = "&" if isinstance(bop, Conj) else "|"
            return [f"{pad}{sign}", *_bop(left, slots, dictionary, depth + 1),
                    *_bop(right, slots, dictionary, depth + 1)]


def _tree(
    node: po.PhysicalPlan, slots: Slots, dictionary: Dictionary, depth: int,
    columnar: bool = False,
) -> list[str]:
    pad = "  " * depth
    name = lambda i: "?" + slots.names[i]  # noqa: E731
    below = lambda *children: [  # noqa: E731
        line for c in children for line in _tree(c, slots, dictionary, depth + 1, columnar)
    ]
    match node:
        case po.Scan(graphs, patterns):
            shown = [" ".join(_position(p, slots, dictionary) for p in t) for t in patterns]
            where = " + ".join(map(_graph, graphs))
            how = (
                "columnar: a mask per pattern, vector joins" if columnar
                else "index nested loops, order by index sizes"
            )
            return [f"{pad}Scan {where} {shown} ({how})"]
        case po.HashJoin(left, right, keys) | po.LeftOuterJoin(left, right, keys, _):
            kind = type(node).__name__
            how = " (columnar: sort and binary search)" if columnar else ""
            return [f"{pad}{kind} on {[name(k) for k in keys]}{how}", *below(left, right)]
        case po.MultiJoin(inputs, _):
            how = "columnar vector joins, " if columnar else ""
            return [f"{pad}MultiJoin ({how}smallest connected input next, at each evaluation)",
                    *below(*inputs)]
        case po.UnionAll(left, right) | po.AntiJoin(left, right):
            return [f"{pad}{type(node).__name__}", *below(left, right)]
        case po.Select(inner, condition):
            return [f"{pad}Select {condition.text}", *below(inner)]
        case po.Bind(inner, slot, value):
            how = " (columnar: once per distinct input)" if columnar else ""
            return [f"{pad}Bind {name(slot)} := {value.text}{how}", *below(inner)]
        case po.Keep(inner, kept):
            return [f"{pad}Keep {[name(k) for k in kept]}", *below(inner)]
        case po.Dedup(inner):
            return [f"{pad}Dedup", *below(inner)]
        case po.Table(rows):
            return [f"{pad}Table ({len(rows)} rows)"]
        case po.Matches(number):
            return [f"{pad}Matches {number} (rows of the matches the automaton completes)"]
        case po.NestedPath(graphs, subject, path, obj):
            ends = [_position(x, slots, dictionary) for x in (subject, obj)]
            where = " + ".join(map(_graph, graphs))
            return [f"{pad}NestedPath {where} {ends[0]} {to_sexpr(path)} {ends[1]} "
                    "(pairs cached per graph version)"]
        case aggregates.GroupBy(inner=inner, keys=keys, aggregates=specs):
            shown = [
                f"{name(a.target)} := {a.function}({'DISTINCT ' if a.distinct else ''}"
                f"{'*' if a.argument is None else name(a.argument)})"
                for a in specs
            ]
            how = (
                "columnar: groups numbered from the key columns, exact vector sums and "
                "extremes per group at each evaluation" if columnar
                else "per-group state updated by the changed mappings; pyoxigraph where not "
                "at the query's top"
            )
            return [f"{pad}GroupBy {[name(k) for k in keys]} {shown} ({how})", *below(inner)]
        case po.Fallback(pattern, _):
            return [f"{pad}FALLBACK pyoxigraph {to_sexpr(pattern)}"]
        case _:
            assert_never(node)


def _graph(ref: po.GraphRef) -> str:
    if isinstance(ref, po.EventGraph):
        return "event graph"
    if isinstance(ref, po.WindowGraph):
        return f"window {ref.name}"
    return "background default graph" if ref.name is None else f"background graph {ref.name}"


def _position(p: po.Position, slots: Slots, dictionary: Dictionary) -> str:
    return "?" + slots.names[p.index] if isinstance(p, po.Slot) else dictionary.decode_text(p.id)
