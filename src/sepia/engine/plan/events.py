"""Event patterns -> the CEP operators: a SPAseq sequence into its automaton, RSEP-QL,
CQELS-CEP and EP-SPARQL patterns into event trees, FILTERs sunk into them where exact, and
the plans PARTITION BY matches each event with."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, cast

import pyoxigraph as ox

from sepia.algebra import event as ev
from sepia.algebra import expression as ex
from sepia.algebra import pattern as gp
from sepia.algebra.query import Unsupported
from sepia.algebra.scope import bop_variables, event_leaves, pattern_variables
from sepia.algebra.sparql import expression_text
from sepia.engine.cep.automaton import (
    Automaton,
    Bop,
    Conj,
    Disj,
    Gpm,
    State,
    elements,
    split_filters,
    stream_of,
)
from sepia.engine.cep.epsparql import Horizon, OccurrenceLeaf
from sepia.engine.cep.event_trees import (
    Combined,
    EventFilter,
    EventLeaf,
    EventSeq,
    EventTree,
    Extreme,
    Negated,
    OptionalJoin,
)
from sepia.engine.cep.ranges import FLIPPED, PairTest
from sepia.engine.plan.patterns import PatternPlanner
from sepia.engine.plan.physical import Partition
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.expressions import has_exists, variables_of
from sepia.engine.r2r.numeric import Values, operand
from sepia.engine.rows import FROM, TO

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
ORDERS = {
    ex.BinaryOperator.EQUAL: "=",
    ex.BinaryOperator.LESS: "<",
    ex.BinaryOperator.LESS_OR_EQUAL: "<=",
    ex.BinaryOperator.GREATER: ">",
    ex.BinaryOperator.GREATER_OR_EQUAL: ">=",
}
"""The comparisons a SEQ's range index answers (``cep.ranges``)."""


ORIGIN = -(1 << 62)
"""Before every time: a stream's events are those of a landmark window from here."""


def stream_window(stream: ox.NamedNode) -> ox.NamedNode:
    """The implicit window an EVENT over a stream reads (a SPAseq GPM outside a sequence)."""
    return ox.NamedNode(f"urn:sepia:stream-events:{stream.value}")


@dataclass(frozen=True, slots=True)
class EventPlanner(PatternPlanner):
    """Plans the event patterns of one query, their graph patterns as ``PatternPlanner``."""

    def automaton(self, event: ev.EventPattern) -> Automaton:
        """Compile a SPAseq sequence into its automaton (one state per element)."""
        steps = elements(event)
        bops = [_unmodified(e) for _, e in steps]
        variables = [bop_variables(b) for b in bops]
        states = []
        for i, ((strategy, element), bop) in enumerate(zip(steps, bops, strict=True)):
            others = set().union(*(v for j, v in enumerate(variables) if j != i))
            deferred: list = []
            compiled = self._bop(bop, deferred, set().union(*variables))
            check = None
            if any(has_exists(x) for x in deferred):
                raise Unsupported(
                    "a SPAseq GPM's FILTER EXISTS reading a variable another GPM binds (it "
                    "must read its own event's graph, which the automaton's checks do not "
                    "hold): the reference evaluator runs it"
                )
            if deferred:
                check = self.expression(_conjunction(deferred), True)
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
                return EventLeaf(window, self.event_plan(pattern))
            case ev.Event(pattern, None, ox.NamedNode() as stream):
                return EventLeaf(stream_window(stream), self.event_plan(pattern))
            case ev.Event():
                raise Unsupported("event patterns: an EVENT naming neither window nor stream")
            case ev.OccurrencePattern(bgp):
                plans = tuple(self.event_plan(gp.Bgp((t,))) for t in bgp.triples)
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
                test = None if condition is None else self.expression(condition, True)
                return OptionalJoin(sub(required), sub(optional), test, equal=False)
            case ev.EqLeftJoin(left, right, condition):
                test = None if condition is None else self.expression(condition, True)
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
        leaves = tuple(self.event_plan(p) for p in event_leaves(e))
        return Partition(self.slots.index(variable.value), leaves)

    def _event_filter(self, conjuncts: list[ex.Expression], tree: EventTree) -> EventTree:
        """Filter(F, Psi), each conjunct of F that reads no interval sunk to the deepest
        operand that binds all its variables through SEQ and the joins, whose mappings pass
        on unchanged into their results: it then prunes before pairing (exact, as A && B
        holds exactly when both hold). Of the conjuncts left here, those that read no
        interval filter first, so only the mappings they keep are stamped with theirs."""
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
        timeless = [c for c in kept if not _reads_interval(c)]
        if timeless and len(timeless) < len(kept):  # tested first: no interval to stamp
            tree = self._filter(timeless, tree)
            kept = [c for c in kept if _reads_interval(c)]
        if not kept:
            return tree
        return self._filter(kept, tree)

    def _filter(self, conjuncts: list[ex.Expression], tree: EventTree) -> EventFilter:
        """Filter(F1 && F2 && ..., tree), with a range index for a SEQ's pairs where a
        conjunct takes one."""
        test = self.expression(_conjunction(conjuncts), True)
        within = _duration_bound(conjuncts[0]) if len(conjuncts) == 1 else None
        return EventFilter(test, tree, self._pair_test(conjuncts, tree), within)

    def _pair_test(self, conjuncts: list[ex.Expression], tree: EventTree) -> PairTest | None:
        """The first conjunct comparing a value of an unrestricted SEQ's left mapping alone
        with one of its right mapping alone (``cep.ranges``), or None."""
        if not isinstance(tree, EventSeq) or tree.policy is not ev.SelectionPolicy.UNRESTRICTED:
            return None
        names = self.slots.names
        left, right = bound_slots(tree.left), bound_slots(tree.right)

        def on(side: frozenset[int], e: ex.Expression) -> bool:
            """``e`` reads some variable, and only ones ``side`` certainly binds."""
            read = {self.slots.index(n) for n in variables_of(e)}
            return bool(read) and read <= side

        for c in conjuncts:
            if not isinstance(c, ex.Binary) or c.operator not in ORDERS or _reads_interval(c):
                continue
            if not variables_of(c) <= set(names):
                continue
            if on(left, c.left) and on(right, c.right):
                key, probe, op = c.left, c.right, ORDERS[c.operator]
            elif on(left, c.right) and on(right, c.left):
                key, probe, op = c.right, c.left, FLIPPED[ORDERS[c.operator]]
            else:
                continue
            dictionary = self.dictionary
            values = _shared_values(tree.left) or Values(dictionary.decode, dictionary.decode_text)
            positions = {n: self.slots.index(n) for n in variables_of(c)}
            keys, probes = operand(key, positions, values), operand(probe, positions, values)
            if keys is None or probes is None:
                continue
            shared = tuple(sorted(left & right))
            per = ", ".join(f"?{names[s]}" for s in shared) or "nothing"
            text = (
                f"range index: left mappings sorted by {expression_text(key)} per {per}; "
                f"each right {expression_text(probe)} bisects for key {op} it (exact numbers; "
                "other values tested by the FILTER)"
            )
            found = PairTest(keys, probes, op, shared, len(conjuncts) == 1, text, values)
            self.dictionary.watch(found)
            return found
        return None

    def _sink(self, tree: EventTree, conjunct: ex.Expression, slots: set[int]) -> EventTree | None:
        """``tree`` with ``conjunct`` applied inside it, or None where it must stay above."""
        match tree:
            case EventSeq(left, right, ev.SelectionPolicy.UNRESTRICTED) | Combined(
                "covering-join" | "eq-join" | "join" | "same-time", left, right
            ):
                for field, side in (("left", left), ("right", right)):
                    if slots <= bound_slots(side):
                        inner = self._sink(side, conjunct, slots) or self._filter(
                            [conjunct], side
                        )
                        return dataclasses.replace(cast(Any, tree), **{field: inner})
            case EventFilter(_, inner) if slots <= bound_slots(inner):
                sunk = self._sink(inner, conjunct, slots)
                return dataclasses.replace(tree, inner=sunk) if sunk is not None else None
        return None

    def event_plan(self, pattern: gp.GraphPattern) -> po.PhysicalPlan:
        """A pattern over one event graph (a GPM or an EVENT's pattern), fully native."""
        return self.plan(pattern, (po.EventGraph(),))

    def _bop(self, p: ev.EventPattern, deferred: list, bound: set[str]) -> Bop:
        match p:
            case ev.Event(pattern):
                stream = stream_of(p)
                pattern = split_filters(pattern, pattern_variables(pattern), bound, deferred)
                return Gpm(stream, self.event_plan(pattern))
            case ev.And(left, right):
                return Conj(self._bop(left, deferred, bound), self._bop(right, deferred, bound))
            case ev.Or(left, right):
                return Disj(self._bop(left, deferred, bound), self._bop(right, deferred, bound))
            case _:
                raise Unsupported(f"{type(p).__name__} as a SPAseq sequence element")


def _unmodified(e: ev.EventPattern) -> ev.EventPattern:
    """A sequence element without its modifier (+, ?, !)."""
    return e.inner if isinstance(e, ev.Kleene | ev.Optional | ev.Negation) else e


def _conjunction(expressions: list) -> ex.Expression:
    """F1 && F2 && ...: the deferred FILTERs of one GPM, checked together."""
    result = expressions[0]
    for e in expressions[1:]:
        result = ex.Binary(ex.BinaryOperator.AND, result, e)
    return result


def _shared_values(left: EventTree) -> Values | None:
    """The values the range index of a chain's level below reads (``seq_chains``): one
    cache for both, so that a price the drop's and the rise's comparisons read is decoded
    and parsed once."""
    if isinstance(left, EventFilter) and left.pair is not None:
        return left.pair.values
    return None


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


def horizon(event: ev.EventPattern) -> Horizon | None:
    """``getDURATION() < d`` (or <=) among the conjuncts of a top-level event FILTER."""
    if not isinstance(event, ev.EventFilter):
        return None
    return next(filter(None, map(_duration_bound, _conjuncts(event.expression))), None)


def _duration_bound(c: ex.Expression) -> Horizon | None:
    """``getDURATION() < d`` (or <=) as a ``Horizon``, or None for any other expression."""
    if (
        isinstance(c, ex.Binary)
        and c.operator in (ex.BinaryOperator.LESS, ex.BinaryOperator.LESS_OR_EQUAL)
        and isinstance(c.left, ex.Call)
        and c.left.function == "GETDURATION"
    ):
        return Horizon.of(c.right, c.operator is ex.BinaryOperator.LESS)
    return None


def _reads_interval(e: ex.Expression) -> bool:
    """Whether a FILTER conjunct may read the mapping's interval (getDURATION() and the
    like read the hidden interval slots; an EXISTS pattern, anything)."""
    return has_exists(e) or bool(variables_of(e) & {FROM, TO})


def _conjuncts(e: ex.Expression) -> list[ex.Expression]:
    """The operands of a chain of &&."""
    if isinstance(e, ex.Binary) and e.operator is ex.BinaryOperator.AND:
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]
