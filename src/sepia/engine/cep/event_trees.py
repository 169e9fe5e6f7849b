"""Event patterns of RSEP-QL, CQELS-CEP and EP-SPARQL, pushed as they complete (seed 001
section 4, seed 000 section 4.2, seed 003 section 4.2).

The tree's leaves are basic event patterns ``EVENT w { P }`` (RSEP-QL, and CQELS-CEP's
sequence elements, over a window's event graphs) and EP-SPARQL's BGPs over triple
occurrences (``epsparql.Occurrences``). At an arrival instant t, <<E>>^t is computed over the
windows' contents at t (and the occurrences so far), and only the event mappings that end at
t are new (they are reported at their end, as the reference pushes them). So each operator
passes "ends at t" on to the operands whose end its result's end is (the right of a SEQ, both
sides of an EqJoin or an interval JOIN, ...): the right spine is matched against the events
stamped t only, and each left side of a SEQ against the events that end before its right
partner starts (Eq. 7's W^sqcup[0, t3 - 1]). Negations (CQELS-CEP SEQ_WO, NO_HEAD, NO_TAIL,
EP-SPARQL's optional joins) read their negated operand over the whole scope. Each element's
matches of a pattern are cached by its triples: a pattern over one event graph never
changes its answer.

CHRONOLOGICAL and RECENT (SEQ^c / SEQ^r with consumption) cannot be computed from the events
ending at t alone: the reference re-evaluates the whole pattern over the windows at every
instant, and consumption is a side effect of each evaluation (a right mapping that ended
earlier can take a partner later). ``Consumption`` does the same, step for step, over the
windows' encoded contents and EP-SPARQL's occurrences, with every operator of the tree: the
mappings are then derivations (row, from, to, support), equal mappings of different
supports kept apart, as the reference's ``Derivation``s. It keeps the consumed occurrences
as rows; each element's graph name is kept beside the window's own deque.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import TYPE_CHECKING, NamedTuple

import pyoxigraph as ox

from sepia.algebra.event import SelectionPolicy
from sepia.algebra.sparql import time_literal
from sepia.engine.cep import cqels_cep, epsparql
from sepia.engine.cep.epsparql import (
    EncodedTriple,
    Matcher,
    OccurrenceLeaf,
)
from sepia.engine.cep.intervals import EventMapping, ending, joined, pairs
from sepia.engine.cep.ranges import PairTest
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.expressions import ExpressionEvaluator
from sepia.engine.rows import FROM, TO, Row, Slots, compatible, merge
from sepia.engine.s2r.windows import WindowState
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.time import TimeKind

if TYPE_CHECKING:
    from sepia.engine.cep.consumption import Consumption, Notes
    from sepia.engine.cep.epsparql import Solutions
    from sepia.engine.cep.leaves import LeafMatches, Leaves
    from sepia.engine.cep.occurrences import OccurrenceHistory

Condition = ExpressionEvaluator
"""A FILTER over event mappings, compiled with the interval in the hidden slots."""


@dataclass(frozen=True, slots=True)
class EventLeaf:
    """``EVENT w { P }``: P over each event graph window w shows."""

    window: ox.NamedNode
    plan: po.PhysicalPlan


@dataclass(frozen=True, slots=True)
class Extreme:
    """``FIRST E`` / ``LAST E`` (Eqs. 5-6): the mappings of E no other precedes / follows,
    in the order by end, then start."""

    inner: EventTree
    last: bool


@dataclass(frozen=True, slots=True)
class EventSeq:
    """``E1 SEQ E2``: compatible pairs with end(E1) < start(E2), stamped [from1, to2];
    NAIVE is SEQ^n (Eq. 9): only the last mapping of each side; CHRONOLOGICAL and RECENT
    consume (``Consumption``). CQELS-CEP's SEQ and EP-SPARQL's SeqJoin are the same set."""

    left: EventTree
    right: EventTree
    policy: SelectionPolicy = SelectionPolicy.UNRESTRICTED


@dataclass(frozen=True, slots=True)
class Combined:
    """A binary operator applied to its operands' sets: CQELS-CEP OR and JOIN (interval
    intersection), EP-SPARQL Join (covering interval) and EqJoin (``OPERATORS``)."""

    operator: str
    left: EventTree
    right: EventTree


@dataclass(frozen=True, slots=True)
class Negated:
    """CQELS-CEP SEQ_WO(O1, !O2, O3), NO_HEAD(!O2, O3) and NO_TAIL(O1, !O2): ``left`` or
    ``right`` is None where the sequence has no element."""

    left: EventTree | None
    negated: EventTree
    right: EventTree | None


@dataclass(frozen=True, slots=True)
class EventFilter:
    """EP-SPARQL Filter(F, Psi): F reads each mapping's interval through getDURATION(),
    getSTARTTIME() and getENDTIME(). ``pair``: a conjunct of F comparing a value of an
    unrestricted SEQ's left mapping with one of its right mapping (``ranges``), where the
    inner pattern is that SEQ."""

    condition: Condition
    inner: EventTree
    pair: PairTest | None = None
    within: epsparql.Horizon | None = None
    """F is exactly this ``getDURATION() < d`` (or <=): where the horizon bounds the scope,
    every mapping within it passes F (``Horizon.implies``), so F is not evaluated."""


@dataclass(frozen=True, slots=True)
class OptionalJoin:
    """EP-SPARQL OPTIONALSEQ (SeqRightJoin: the optional part first, ending before the
    required one starts) or EQUALSOPTIONAL (EqLeftJoin: the optional part over the same
    interval), with the optional part's FILTER as condition."""

    required: EventTree
    optional: EventTree
    condition: Condition | None
    equal: bool


EventTree = (
    EventLeaf | OccurrenceLeaf | EventSeq | Extreme | Combined | Negated | EventFilter
    | OptionalJoin
)

OPERATORS: dict[str, Callable[[list[EventMapping], list[EventMapping]], set[EventMapping]]] = {
    "or": lambda a, b: set(a) | set(b),
    "join": cqels_cep.join,
    "covering-join": epsparql.join,
    "eq-join": epsparql.eq_join,
    "same-time": lambda a, b: {
        (merge(x[0], y[0]), x[1], x[2]) for x, y in pairs(a, b) if x[2] == y[2]
    },  # SPAseq's & outside a sequence (Definition 8): stamped with the left's interval
}


@dataclass(slots=True)
class Inputs:
    """What an event pattern reads at instant t: the windows, each occurrence BGP's
    solutions, a pattern's rows over one event graph, and how to apply a FILTER."""

    t: int
    windows: dict[ox.NamedNode, WindowState]
    match: Matcher
    occurrences: OccurrenceHistory | None = None
    keep: Callable[[Condition, list[EventMapping]], set[EventMapping]] | None = None
    starts: Notes | None = None
    """The start of each element the windows show (interval-stamped elements)."""
    consumption: Consumption | None = None
    """CHRONOLOGICAL / RECENT: mappings are derivations, consuming SEQs serve them."""
    leaves: Leaves | None = None
    """Each basic event pattern's matches kept between instants (else matched anew)."""


def interval_filter(
    slots: Slots, dictionary: Dictionary, kind: TimeKind
) -> Callable[[Condition, list[EventMapping]], set[EventMapping]]:
    """FILTER over event mappings, with sigma applied: each mapping's interval is put in the
    hidden slots as the reference's filters see it (integers, or xsd:dateTime so that
    getDURATION() is a duration). The stamps' ids are cached in this filter's own closure
    (one per query, bounded, gone with the query), not in a process-wide table."""
    start, end = slots.index(FROM), slots.index(TO)

    @lru_cache(maxsize=1 << 12)
    def stamp(time: int) -> int:
        return dictionary.encode(time_literal(time, kind))

    def keep(condition: Condition, mappings: list[EventMapping]) -> set[EventMapping]:
        rows: list[Row] = [m[0] for m in mappings]
        if start in condition.positions or end in condition.positions:
            rows = [stamped(m[0], stamp(m[1]), stamp(m[2])) for m in mappings]
        return {m for m, ok in zip(mappings, condition.truths(rows), strict=True) if ok}

    def stamped(row: Row, first: int, last: int) -> Row:
        found = list(row)
        found[start], found[end] = first, last
        return tuple(found)

    return keep


def completed(tree: EventTree, inputs: Inputs) -> set[EventMapping]:
    """The event mappings of ``tree`` at t that end at t (under a ``getDURATION()``
    horizon, only those built of occurrences it has not passed)."""
    history = inputs.occurrences
    if history is None and _ends_elsewhere(tree, inputs):
        return set()
    since = None if history is None else history.since(inputs.t)
    scope = Scope(inputs.t, None, since)
    chained = _chain_answer(tree, inputs, scope)
    if chained is not None:
        return chained
    return tree_mappings(tree, inputs, scope, exact=inputs.t)


def _ends_elsewhere(tree: EventTree, inputs: Inputs) -> bool:
    """Whether no basic event pattern that can end a mapping of ``tree`` (``end_leaves``)
    has a mapping ending at t, its matches kept (``Leaves``): then no mapping of ``tree``
    ends at t, and it is not evaluated (most arrivals complete nothing)."""
    leaves = inputs.leaves
    if leaves is None or inputs.consumption is not None:
        return False
    ends = leaves.ends(tree, end_leaves)
    return ends is not None and not any(
        _leaf_matches(leaf, inputs).ends_at(inputs.t) for leaf in ends
    )


def end_leaves(tree: EventTree) -> list[EventLeaf] | None:
    """The basic event patterns whose mappings' ends can be the end of a mapping of
    ``tree``: every operator stamps its mappings with the end of one of its operands'
    (a SEQ, SEQ_WO and NO_HEAD with the right one's, NO_TAIL with the left one's, the
    joins with the earlier or later of the two, an optional join with the required
    one's), so a mapping of ``tree`` ends at t only if one of these has one ending at t.
    None where an EP-SPARQL occurrence BGP can (its ends are the occurrences')."""
    match tree:
        case EventLeaf():
            return [tree]
        case EventSeq(_, right) | Negated(_, _, right) if right is not None:
            return end_leaves(right)
        case Negated(left, _, None) if left is not None:
            return end_leaves(left)
        case Extreme(inner) | EventFilter(_, inner):
            return end_leaves(inner)
        case Combined(_, left, right) | OptionalJoin(left, right):
            found = [end_leaves(left), end_leaves(right)]
            return None if None in found else [x for f in found if f for x in f]
        case _:
            return None


def _leaf_matches(leaf: EventLeaf, inputs: Inputs) -> LeafMatches:
    """``leaf``'s kept matches, caught up with its window."""
    assert inputs.leaves is not None
    starts = None if inputs.starts is None else inputs.starts.get(leaf.window)
    return inputs.leaves.of(
        leaf, leaf.window, leaf.plan, inputs.windows[leaf.window], starts, inputs.match
    )


def _chain_answer(tree: EventTree, inputs: Inputs, scope: Scope) -> set[EventMapping] | None:
    """The mappings of ``tree`` ending at t from the kept chain's answer (``seq_chains``),
    where it is the chain's top under FILTERs (each applied as ``evaluate_tree`` does, in
    the same scope), else None."""
    history = inputs.occurrences
    chain = None if history is None else history.chain
    if chain is None:
        return None
    if tree is chain.chain.top:
        return chain.answer(inputs.t)
    if not isinstance(tree, EventFilter):
        return None
    found = _chain_answer(tree.inner, inputs, scope)
    if not found or (tree.within is not None and _implied(tree.within, inputs, scope)):
        return found  # none (most arrivals complete nothing): no FILTER to apply
    assert inputs.keep is not None
    return inputs.keep(tree.condition, list(found))


def current(tree: EventTree, inputs: Inputs) -> set[EventMapping]:
    """Every event mapping of ``tree`` at t, ending then or earlier (several MATCHes: a
    new match of one joins the earlier ones of the others)."""
    return tree_mappings(tree, inputs, Scope(inputs.t, None), exact=None)


class Scope(NamedTuple):
    """Where a sub-pattern is evaluated: events ending by ``before``, compatible with the
    right partners' mapping ``mu`` (RSEP-QL Eq. 7's mu2(E1) under W^sqcup[0, t3 - 1]). As in
    the reference, the scope restricts the leaves; the operators combine what is left. A
    named tuple: one is made per instant and per right partner (a frozen dataclass cost
    ~1 us more to make)."""

    before: int
    mu: Row | None
    since: int | None = None
    """EP-SPARQL under a horizon (``epsparql.Horizon``), the tree growing: only mappings
    starting after this time, as every mapping built on one that starts by it starts by it
    too (SEQ and the joins cover their operands' intervals) and ends at t or later, so its
    duration fails the top-level ``getDURATION() < d``: dropping it early changes no answer.
    Only occurrence BGPs and kept operands read it (a growing tree has no other leaf)."""


def tree_mappings(
    tree: EventTree, inputs: Inputs, scope: Scope, exact: int | None
) -> set[EventMapping]:
    """Event mappings within ``scope`` (ending at ``exact``, when given: every operator
    passes it on to the operands whose end its result's end is): each compatible with the
    scope's mu, as the leaves select only such mappings and the operators merge them."""
    history = inputs.occurrences
    kept = None if history is None else history.materialized.get(id(tree))
    if kept is not None:
        return set(kept.select(scope.before, scope.mu, exact, scope.since))
    return evaluate_tree(tree, inputs, scope, exact)


def evaluate_tree(
    tree: EventTree, inputs: Inputs, scope: Scope, exact: int | None
) -> set[EventMapping]:
    sub = lambda x, at=None: tree_mappings(x, inputs, scope, at)  # noqa: E731
    match tree:
        case EventLeaf(window, plan):
            if inputs.consumption is None and inputs.leaves is not None:
                return _leaf_matches(tree, inputs).select(scope.before, scope.mu, exact)
            starts = None if inputs.starts is None else inputs.starts.get(window)
            shown = _shown(inputs.windows[window], starts, scope.before, exact)
            if inputs.consumption is not None:
                return inputs.consumption.events(window, plan, shown, inputs.match, scope)
            return {
                (row, start, time)
                for _, start, time, triples in shown
                for row in inputs.match(plan, time, triples)
                if scope.mu is None or compatible(row, scope.mu)
            }
        case OccurrenceLeaf() if inputs.consumption is not None:
            return inputs.consumption.occurrences.select(tree, scope)
        case OccurrenceLeaf():
            assert inputs.occurrences is not None
            seen = inputs.occurrences.seen
            return set(seen.select(tree, scope.before, scope.mu, exact, scope.since))
        case EventSeq(left, right, SelectionPolicy.NAIVE):
            lefts = _latest(sub(left))
            rights = _latest(sub(right))
            return {
                joined(a, b, a[1], b[2])
                for a in lefts
                for b in rights
                if compatible(a[0], b[0]) and a[2] < b[1] and exact in (None, b[2])
            }
        case EventSeq(policy=SelectionPolicy.CHRONOLOGICAL | SelectionPolicy.RECENT):
            assert inputs.consumption is not None
            return inputs.consumption.seq(tree, inputs, scope)
        case EventSeq(left, right, _):
            found: set[EventMapping] = set()
            for b in sub(right, exact):
                mu = b[0] if scope.mu is None else merge(scope.mu, b[0])
                inner = Scope(min(b[1] - 1, scope.before), mu, scope.since)
                found.update(  # within a scope: compatible with mu, so with b
                    joined(a, b, a[1], b[2]) for a in tree_mappings(left, inputs, inner, None)
                )
            return found
        case Extreme(inner, last):
            every = sub(inner)
            chosen = _latest(every) if last else _earliest(every)
            return {m for m in chosen if exact in (None, m[2])}
        case Combined("covering-join", left, right) if exact is not None:
            lefts, rights = sub(left), sub(right)  # one of the two ends at t
            return epsparql.join(ending(lefts, exact), rights) | epsparql.join(
                lefts, ending(rights, exact)
            )
        case Combined(operator, left, right):
            # OR, JOIN (intersection) and EqJoin end where both operands (or either) end
            return OPERATORS[operator](list(sub(left, exact)), list(sub(right, exact)))
        case Negated(None, negated, right):
            return cqels_cep.no_head(sub(negated), sub(right, exact))
        case Negated(left, _, None) if exact == inputs.t:
            return sub(left, exact)  # nothing lies in (t, t]: NO_TAIL keeps all that ends at t
        case Negated(left, negated, None):
            return cqels_cep.no_tail(sub(left, exact), sub(negated), inputs.t)
        case Negated(left, negated, right):
            return cqels_cep.seq_wo(sub(left), sub(negated), sub(right, exact))
        case EventFilter(condition, EventSeq() as seq, PairTest() as pair) if (
            kept_lefts := _kept(seq.left, inputs)
        ) is not None:
            return _ranged(condition, seq, pair, kept_lefts, inputs, scope, exact)
        case EventFilter(inner=inner, within=epsparql.Horizon() as within) if _implied(
            within, inputs, scope
        ):
            return sub(inner, exact)
        case EventFilter(condition, inner):
            assert inputs.keep is not None
            return inputs.keep(condition, list(sub(inner, exact)))
        case OptionalJoin(required, optional, condition, equal):
            keep = None
            if condition is not None:
                assert inputs.keep is not None
                keep = partial(inputs.keep, condition)
            if equal:
                return epsparql.eq_left_join(sub(required, exact), sub(optional, exact), keep)
            return epsparql.seq_right_join(sub(optional), sub(required, exact), keep)


def _implied(within: epsparql.Horizon, inputs: Inputs, scope: Scope) -> bool:
    """Whether the scope is the occurrences' horizon ``within`` (mappings ending by t,
    starting after its bound at t), which implies a FILTER made of its duration test."""
    history = inputs.occurrences
    return (
        history is not None and inputs.consumption is None and history.horizon == within
        and history.kind is not None and scope.since == history.since(inputs.t)
        and within.implies(inputs.t, history.kind)
    )


def _kept(tree: EventTree, inputs: Inputs) -> Solutions | None:
    """Where EP-SPARQL keeps ``tree``'s mappings between arrivals (an occurrence BGP's
    solutions, a kept SEQ operand), or None (not kept; or consuming: derivations)."""
    history = inputs.occurrences
    if history is None or inputs.consumption is not None:
        return None
    kept = history.materialized.get(id(tree))
    if kept is None and isinstance(tree, OccurrenceLeaf):
        kept = history.seen.solutions[tree.number]
    return kept


def _ranged(
    condition: Condition, seq: EventSeq, pair: PairTest, lefts: Solutions, inputs: Inputs,
    scope: Scope, exact: int | None,
) -> set[EventMapping]:
    """Filter(F, left SEQ right) with F's conjunct ``pair`` answered by a range index on
    the kept left mappings: each right mapping is paired only with the left ones the
    conjunct surely keeps, and with those whose values the index cannot order (tested by
    F as before). The pairs left out fail the conjunct, so F (an &&) rejects them."""
    assert inputs.keep is not None
    index = lefts.range(pair)
    sure: set[EventMapping] = set()
    tested: set[EventMapping] = set()
    for b in tree_mappings(seq.right, inputs, scope, exact):
        mu = b[0] if scope.mu is None else merge(scope.mu, b[0])
        before = min(b[1] - 1, scope.before)
        found = index.partners(b[0])
        kept, others = found or ([], range(len(lefts.mappings)))
        # a bucket agrees with mu on its slots: only other slots both may bind can differ
        agree = found is not None and not any(
            mu[s] is not None for s in lefts.ever if s not in pair.slots
        )
        for positions, into in ((kept, sure if pair.whole else tested), (others, tested)):
            into.update(
                joined(a, b, a[1], b[2])
                for a in lefts.taken(positions, before, None if agree else mu, scope.since)
            )
    return sure | inputs.keep(condition, list(tested)) if tested else sure


def grows(tree: EventTree) -> bool:
    """Over occurrences only, and every operator monotone and end-preserving."""
    match tree:
        case OccurrenceLeaf():
            return True
        case EventSeq(left, right, SelectionPolicy.UNRESTRICTED) | Combined(
            "or" | "covering-join" | "eq-join", left, right
        ):
            return grows(left) and grows(right)
        case EventFilter(_, inner):
            return grows(inner)
        case _:
            return False


def children_of(tree: EventTree) -> list[EventTree]:
    match tree:
        case EventSeq(left, right) | Combined(_, left, right):
            return [left, right]
        case Extreme(inner) | EventFilter(_, inner):
            return [inner]
        case Negated(left, negated, right):
            return [x for x in (left, negated, right) if x is not None]
        case OptionalJoin(required, optional):
            return [required, optional]
        case _:
            return []


Shown = Iterator[tuple[int, int, int, tuple[EncodedTriple, ...]]]
"""(position in the window, start, end, triples) of the elements a window shows."""


def _shown(window: WindowState, starts: deque | None, before: int, exact: int | None) -> Shown:
    """The window's elements ending by ``before`` (at ``exact``, when given), read from the
    newest back: an arrival's own elements are at the end of the window. Without ``starts``
    every element is a point."""
    for i in range(len(window.elements) - 1, -1, -1):
        time, triples = window.elements[i]
        if exact is not None and time < exact:
            return
        if time <= before and (exact is None or time == exact):
            yield i, (time if starts is None else starts[i]), time, triples


def _order(m: EventMapping) -> tuple[int, int]:
    """The order FIRST, LAST and the policies use: by end, then start."""
    return (m[2], m[1])


def _earliest(mappings: set[EventMapping]) -> set[EventMapping]:
    least = min(map(_order, mappings), default=None)
    return {m for m in mappings if _order(m) == least}


def _latest(mappings: set[EventMapping]) -> set[EventMapping]:
    greatest = max(map(_order, mappings), default=None)
    return {m for m in mappings if _order(m) == greatest}


def consumes(tree: EventTree) -> bool:
    """Whether a pattern has a SEQ with a consumption policy."""
    if isinstance(tree, EventSeq) and tree.policy in (
        SelectionPolicy.CHRONOLOGICAL, SelectionPolicy.RECENT
    ):
        return True
    return any(map(consumes, children_of(tree)))
