"""Evaluate an algebra event pattern at an evaluation time t, by the papers' operators.

The leaves read the streaming dataset: ``Event`` (RSEP-QL BEP, CQELS-CEP sequence element,
SPAseq GPM) matches its pattern against each element graph its window shows at t;
``OccurrencePattern`` (EP-SPARQL) matches each triple pattern against every triple occurrence
up to t. Inner nodes call the set functions of :mod:`rsepql`, :mod:`cqels_cep`,
:mod:`epsparql` and :mod:`spaseq`. A SPAseq sequence (a ``Seq`` under one of SPAseq's three
strategies, or a Kleene / optional / negated element) is matched over the whole finite input
once, and each of its matches is reported when it completes. Consumption (CHRONOLOGICAL,
RECENT) is the state kept from one evaluation to the next; under it the leaves give
``Derivation``s, so the operators keep equal mappings of different supports apart.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import assert_never

from sepia.algebra import event as ev
from sepia.algebra import pattern as gp
from sepia.algebra.expression import Expression
from sepia.algebra.query import Query
from sepia.algebra.scope import bop_variables, expression_variables, nodes, pattern_variables
from sepia.algebra.sparql import (
    FROM,
    TO,
    Special,
    expression_text,
    has_nested_test,
    integer_literal,
    pattern_text,
    time_literal,
)
from sepia.rdf.stream import Occurrence, StreamElement
from sepia.rdf.terms import Term
from sepia.rdf.time import TimeKind
from sepia.semantics import cqels_cep, epsparql, rsepql, spaseq
from sepia.semantics.dataset import StreamingDataset
from sepia.semantics.mappings import Derivation, EventMapping, Mu

Policy = ev.SelectionPolicy
SPASEQ_POLICIES = {
    Policy.STRICT_CONTIGUITY: spaseq.STRICT,
    Policy.SKIP_TILL_NEXT: spaseq.NEXT,
    Policy.SKIP_TILL_ANY: spaseq.ANY,
}
Psi = Iterable[EventMapping]
MODIFIERS = {ev.Kleene: "+", ev.Optional: "?", ev.Negation: "!"}
INDEX = "__i"


@dataclass(frozen=True, slots=True)
class MatchRow:
    """One solution of MATCH: its mapping, interval, the time it is reported at, and the
    match it belongs to when one match yields several rows (SPAseq Kleene)."""

    mu: Mu
    start: int
    end: int
    reported_at: int
    match: str | None = None


@dataclass(frozen=True, slots=True)
class Scope:
    """RSEP-QL Eq. 7's restriction of a SEQ's left side: the substitution mu2(E1) and the
    window W^sqcup[0, t3 - 1] nested into the active one."""

    mu: Mu
    before: int

    @staticmethod
    def of(right: EventMapping, outer: Scope | None) -> Scope:
        """The scope for the left partners of ``right`` inside ``outer``."""
        before = right.start - 1 if outer is None else min(right.start - 1, outer.before)
        return Scope(right.mu if outer is None else outer.mu.merge(right.mu), before)

    def admits(self, m: EventMapping) -> bool:
        return m.end <= self.before and m.mu.compatible(self.mu)


def consumes(query: Query) -> bool:
    """Whether a SEQ of the query's event patterns consumes (CHRONOLOGICAL, RECENT; a SEQ
    that says UNRESTRICTED follows the query's EVENT POLICY)."""
    consuming = (Policy.CHRONOLOGICAL, Policy.RECENT)

    def policy(node: ev.Seq | ev.SeqJoin) -> Policy:
        return query.event_policy if node.policy is Policy.UNRESTRICTED else node.policy

    return any(
        policy(node) in consuming and not is_spaseq(node)
        for node in nodes(query.pattern, (ev.Seq, ev.SeqJoin))
    )


def is_spaseq(e: ev.EventPattern) -> bool:
    """Whether an event pattern is a SPAseq sequence expression (matched as a whole)."""
    match e:
        case ev.Seq(left, right, policy):
            return policy in SPASEQ_POLICIES or is_spaseq(left) or is_spaseq(right)
        case ev.Kleene() | ev.Optional() | ev.Negation():
            return True
        case _:
            return False


class EventEvaluator:
    """Evaluates the event patterns of one query over its streaming dataset."""

    def __init__(
        self,
        query: Query,
        data: StreamingDataset,
        special: Special,
        kind: TimeKind,
        partition: tuple[str, Term] | None = None,
        end_of_input: int | None = None,
    ) -> None:
        self.query = query
        self.kind = kind
        self.partition = partition
        self.end_of_input = end_of_input
        """When the whole input ends, if not at the last event seen here (a partition's)."""
        self.data = data
        self.special = special
        self.consumed: frozenset[Occurrence] = frozenset()
        self.mapping = Derivation if consumes(query) else EventMapping
        """Under consumption, equal mappings of different supports stay apart."""
        self.nesting = 0
        """How many consuming SEQs enclose the one being evaluated."""
        self.sequences: dict[int, list[MatchRow]] = {}
        self.whole: dict[int, list[MatchRow]] = {}
        self.leaves: dict[tuple[int, int], set[EventMapping]] = {}
        self.bound: dict[tuple[int, int], frozenset[str]] = {}
        """The variables every mapping of a leaf at t binds."""
        self.indexes: dict[tuple[int, int, str], dict[Term, list[EventMapping]]] = {}
        """A leaf's mappings at t by the term they bind one of those variables to."""

    # --- MATCH ------------------------------------------------------------------------
    def match_rows(self, e: ev.EventPattern, t: int) -> list[MatchRow]:
        """The solutions of MATCH e at t (RSEP-QL Eq. 8), each with its interval."""
        if is_spaseq(e):
            return [row for row in self.spaseq_rows(e) if row.reported_at <= t]
        if self.timewise_monotone(e):
            return [row for row in self.whole_input_rows(e) if row.end <= t]
        found = self.evaluate(e, t)  # derivations of one mapping are one solution
        return list(dict.fromkeys(MatchRow(m.mu, m.start, m.end, m.end) for m in found))

    def timewise_monotone(self, e: ev.EventPattern) -> bool:
        """Whether <<e>>^t = {m in <<e>> over the whole input | m.end <= t}: EP-SPARQL's
        timewise monotonicity (seed 003, section 4.2's remarks) for a pattern of triple
        occurrences, its joins, unrestricted SEQ, OPTIONALSEQ, EQUALSOPTIONAL, UNION and
        FILTER, each of whose solutions is made of occurrences that end by its own end; and
        nothing in the dataset that changes with t (windows, a time-varying background)."""
        if self.data.windows or self.data.background.varying:
            return False
        match e:
            case ev.OccurrencePattern():
                return True
            case ev.SeqJoin(left, right, policy):
                if policy is Policy.UNRESTRICTED:
                    policy = self.query.event_policy
                return policy is Policy.UNRESTRICTED and all(map(self.timewise_monotone,
                                                                 (left, right)))
            case (ev.EventJoin(left, right) | ev.EqJoin(left, right) | ev.Or(left, right)
                  | ev.SeqRightJoin(left, right) | ev.EqLeftJoin(left, right)):
                return self.timewise_monotone(left) and self.timewise_monotone(right)
            case ev.EventFilter(_, inner):
                return self.timewise_monotone(inner)
            case _:
                return False

    def whole_input_rows(self, e: ev.EventPattern) -> list[MatchRow]:
        """The rows of a timewise monotone pattern over the whole input, computed once."""
        key = id(e)
        if key not in self.whole:
            self.whole[key] = [
                MatchRow(m.mu, m.start, m.end, m.end) for m in self.evaluate(e, _END)
            ]
        return self.whole[key]

    def spaseq_rows(self, e: ev.EventPattern) -> list[MatchRow]:
        """The rows of every match of a SPAseq sequence, computed once, numbered by end."""
        key = id(e)
        if key not in self.sequences:
            matches = sorted(self.sequence(e), key=lambda m: (m.end, m.start, repr(m.common)))
            self.sequences[key] = [
                MatchRow(row, m.start, m.end, m.reported_at, f"m{n}" if m.iterations else None)
                for n, m in enumerate(matches, 1)
                for row in m.rows()
            ]
        return self.sequences[key]

    def extra_instants(self, e: ev.EventPattern) -> set[int]:
        """Report times that are no element's arrival (a tail negation's horizon)."""
        return {r.reported_at for r in self.spaseq_rows(e)} if is_spaseq(e) else set()

    # --- event patterns ---------------------------------------------------------------
    def evaluate(self, e: ev.EventPattern, t: int, scope: Scope | None = None) -> set[EventMapping]:
        """<<E>>^t: the event mappings of E at evaluation time t, within ``scope`` when a
        SEQ restricts its left side (RSEP-QL Eq. 7)."""
        sub = lambda x: self.evaluate(x, t, scope)  # noqa: E731
        match e:
            case ev.Event() | ev.OccurrencePattern():
                if scope is None:
                    return set(self.leaf(e, t))
                return {m for m in self.leaf_candidates(e, t, scope.mu) if scope.admits(m)}
            case ev.Seq(left, right, policy):
                return self.seq(left, right, policy, t, scope)
            case ev.SeqWithout(left, negated, right):
                return cqels_cep.seq_wo(*(sub(x) for x in (left, negated, right)))
            case ev.NoHead(negated, right):
                return cqels_cep.no_head(sub(negated), sub(right))
            case ev.NoTail(left, negated):
                return cqels_cep.no_tail(sub(left), sub(negated), t)
            case ev.First(inner):
                return rsepql.first(sub(inner))
            case ev.Last(inner):
                return rsepql.last(sub(inner))
            case ev.And(left, right):
                return spaseq.conj(sub(left), sub(right))
            case ev.Or(left, right):
                return cqels_cep.or_(sub(left), sub(right))
            case ev.IntervalJoin(left, right):
                return cqels_cep.join(sub(left), sub(right))
            case ev.EventJoin(left, right):
                return epsparql.join(sub(left), sub(right))
            case ev.SeqJoin(left, right, policy):
                return self.seq(left, right, policy, t, scope, epsparql.seq_join)
            case ev.EqJoin(left, right):
                return epsparql.eq_join(sub(left), sub(right))
            case ev.EventFilter(condition, inner):
                return self.filtered(condition, sub(inner))
            case ev.SeqRightJoin(optional, required, condition):
                return epsparql.seq_right_join(sub(optional), sub(required), self.test(condition))
            case ev.EqLeftJoin(left, right, condition):
                return epsparql.eq_left_join(sub(left), sub(right), self.test(condition))
            case ev.Kleene() | ev.Optional() | ev.Negation():
                raise ValueError(f"{type(e).__name__} only appears inside a SPAseq sequence")
            case _:
                assert_never(e)

    def seq(
        self,
        left: ev.EventPattern,
        right: ev.EventPattern,
        policy: Policy,
        t: int,
        scope: Scope | None,
        unrestricted: Callable[[Psi, Psi], set[EventMapping]] = rsepql.seq,
    ) -> set[EventMapping]:
        """SEQ (or EP-SPARQL's SeqJoin, the same set with its covering interval) under its
        selection policy (RSEP-QL Eqs. 7, 9-11, Table 1); the query's EVENT POLICY applies
        where the pattern itself says UNRESTRICTED. As Eq. 7 says, the left side is
        evaluated for each right mapping (mu2, t3, t4) as mu2(E1) under W^sqcup[0, t3 - 1],
        so FIRST and LAST inside it pick among the compatible, earlier events only."""
        if policy is Policy.UNRESTRICTED:
            policy = self.query.event_policy
        if policy in (Policy.CHRONOLOGICAL, Policy.RECENT):
            return self.seq_consuming(left, right, policy is Policy.RECENT, t, scope)
        rhs = sorted(self.evaluate(right, t, scope), key=rsepql.serve_key)
        partners = lambda b: self.evaluate(left, t, Scope.of(b, scope))  # noqa: E731
        match policy:
            case Policy.UNRESTRICTED:
                return set().union(*(unrestricted(partners(b), {b}) for b in rhs))
            case Policy.NAIVE:
                return rsepql.seq_naive(self.evaluate(left, t, scope), rhs)
            case _:
                raise ValueError(f"policy {policy.value} belongs to SPAseq sequences")

    def seq_consuming(
        self, left: ev.EventPattern, right: ev.EventPattern, recent: bool, t: int, scope
    ) -> set[EventMapping]:
        """SEQ^c / SEQ^r: right mappings in ``serve_key`` order each take a partner and
        consume both. Only the outermost consuming SEQ commits what it consumed: a nested one
        (an operand of another) consumes on a trial copy, so the occurrences behind its
        intermediate matches stay free for the enclosing SEQ to take (or not)."""
        committed = self.consumed
        self.nesting += 1
        rhs = sorted(self.evaluate(right, t, scope), key=rsepql.serve_key)
        consumed, found = committed, set()
        for b in rhs:
            self.consumed = consumed  # what nested SEQs inside the left side start from
            lefts = self.evaluate(left, t, Scope.of(b, scope))
            matched, consumed = rsepql.seq_consuming(lefts, {b}, consumed, recent)
            found |= matched
        self.nesting -= 1
        self.consumed = consumed if self.nesting == 0 else committed
        return found

    # --- leaves -----------------------------------------------------------------------
    def visible(self, e: ev.Event, t: int) -> tuple[str, list[StreamElement]]:
        """The elements a basic event pattern sees at t, and the name of where they come
        from: its window at t, else its stream up to t, else every stream up to t."""
        if e.window is not None:
            return e.window.value, self.data.windows[e.window].content(t)
        if e.stream is not None:
            return e.stream.value, [x for x in self.data.stream(e.stream.value) if x.time <= t]
        return "*", [x for xs in self.data.streams.values() for x in xs if x.time <= t]

    def per_element(self, body: gp.GraphPattern, elements: list[StreamElement]):
        """[[P]] over each element graph; in a partition, only the matches binding its value."""
        found: dict[int, list[Mu]] = defaultdict(list)
        if _has_nested_path(body):  # the path reads the event's own graph, not the default
            pairs = [
                pair
                for e in elements
                for pair in self.data.per_element(
                    pattern_text(body, self.special.within(self.data.graphs[id(e)])),
                    [e],
                    _has_subselect(body),
                )
            ]
        else:
            text = pattern_text(body, self.special)
            pairs = self.data.per_element(text, elements, _has_subselect(body))
        for element, m in pairs:
            if self.partition is None or m.get(self.partition[0]) == self.partition[1]:
                found[id(element)].append(m)
        return lambda element: found.get(id(element), [])

    def leaf(self, e: ev.Event | ev.OccurrencePattern, t: int) -> set[EventMapping]:
        """A basic event pattern's mappings at t, computed once per evaluation time."""
        key = (id(e), t)
        if key not in self.leaves:
            if isinstance(e, ev.Event):
                self.leaves[key] = self.event(e, t)
            else:
                self.leaves[key] = epsparql.bgp([self.occurrences(tp, t) for tp in e.bgp.triples])
        return self.leaves[key]

    def leaf_candidates(
        self, e: ev.Event | ev.OccurrencePattern, t: int, mu: Mu
    ) -> Iterable[EventMapping]:
        """The leaf's mappings at t that can be compatible with mu: those binding one of mu's
        variables, bound by every mapping of the leaf, to mu's term (an index on that
        variable; a mapping binding it to another term is not compatible), else all."""
        mappings = self.leaf(e, t)
        if (id(e), t) not in self.bound:
            variables = [frozenset(m.mu) for m in mappings]
            self.bound[id(e), t] = frozenset.intersection(*variables) if variables else frozenset()
        variable = next((v for v in sorted(mu) if v in self.bound[id(e), t]), None)
        if variable is None:
            return mappings
        key = (id(e), t, variable)
        if key not in self.indexes:
            self.indexes[key] = defaultdict(list)
            for m in mappings:
                self.indexes[key][m.mu[variable]].append(m)
        return self.indexes[key].get(mu[variable], ())

    def event(self, e: ev.Event, t: int) -> set[EventMapping]:
        """<<EVENT w P>>^t (RSEP-QL Eq. 4)."""
        source, elements = self.visible(e, t)
        return rsepql.event(source, elements, self.per_element(e.pattern, elements), self.mapping)

    def occurrences(self, triple: gp.TriplePattern, t: int) -> set[EventMapping]:
        """The occurrences of one triple pattern up to t, each with its element's interval."""
        elements = [x for xs in self.data.streams.values() for x in xs if x.time <= t]
        matches = self.per_element(gp.Bgp((triple,)), elements)
        return rsepql.event("*", elements, matches, self.mapping)

    # --- filters ----------------------------------------------------------------------
    def filtered(
        self, condition: Expression, mappings: Iterable[EventMapping]
    ) -> set[EventMapping]:
        """Filter(F, Psi) with sigma: the interval functions read each mapping's interval."""
        mappings = list(mappings)
        if not mappings:
            return set()
        names = sorted(set().union(*(m.mu for m in mappings)))
        rows: list[list[Term | None]] = [
            [
                integer_literal(i),
                time_literal(m.start, self.kind),
                time_literal(m.end, self.kind),
                *(m.mu.get(n) for n in names),
            ]
            for i, m in enumerate(mappings)
        ]
        values = self.data.table([INDEX, FROM, TO, *names], rows)
        test = expression_text(condition, self.special)
        kept = self.data.select(f"SELECT ?{INDEX} WHERE {{ {values} FILTER({test}) }}")
        return {mappings[int(r.lexical(INDEX))] for r in kept}

    def test(self, condition: Expression | None) -> Callable[[EventMapping], bool]:
        """A filter as a predicate on one event mapping (true when there is none)."""
        if condition is None:
            return lambda m: True
        return lambda m: bool(self.filtered(condition, [m]))

    # --- SPAseq -----------------------------------------------------------------------
    def sequence(self, e: ev.EventPattern) -> set[spaseq.SpaseqMatch]:
        """All matches of a SPAseq sequence over the finite input (Definitions 7-15)."""
        steps = _flatten(e)
        bound = frozenset().union(*(bop_variables(_unmodified(p)) for _, p in steps))
        elements = [self.element(p, operator, bound) for operator, p in steps]
        events = [x for s in self.query.dataset.streams for x in self.data.stream(s.iri.value)]
        events = events or [x for xs in self.data.streams.values() for x in xs]
        times = tuple(sorted({x.time for x in events}))
        within = self.query.within
        last = times[-1] if times else 0
        bounds = spaseq.Bounds(
            times,
            last if self.end_of_input is None else max(last, self.end_of_input),
            within.width if within else None,
            within.tumbling if within else False,
        )
        return spaseq.sequence(elements, bounds)

    def element(
        self, p: ev.EventPattern, operator: str | None, bound: frozenset[str]
    ) -> spaseq.Element:
        """One sequence position: its modifier, BOp candidates, variables, deferred FILTERs
        (``bound``: the variables the sequence's GPMs bind)."""
        modifier = MODIFIERS.get(type(p), "")
        bop = _unmodified(p)
        deferred: list[Expression] = []
        candidates = self.bop(bop, deferred, bound)
        return spaseq.Element(
            frozenset(candidates),
            operator,
            modifier,
            frozenset(bop_variables(bop)),
            self.check(deferred),
        )

    def bop(
        self, p: ev.EventPattern, deferred: list[Expression], bound: frozenset[str]
    ) -> set[EventMapping]:
        """GPM, & and | over the whole input (Definitions 7-9, 15)."""
        match p:
            case ev.Event(pattern):
                pattern = _split_filters(pattern, deferred, bound)
                source, elements = self.visible(p, _END)
                return spaseq.gpm(source, elements, self.per_element(pattern, elements))
            case ev.And(left, right):
                return spaseq.conj(*(self.bop(x, deferred, bound) for x in (left, right)))
            case ev.Or(left, right):
                return spaseq.disj(*(self.bop(x, deferred, bound) for x in (left, right)))
            case _:
                raise ValueError(f"{type(p).__name__} cannot be a SPAseq sequence element")

    def check(self, deferred: list[Expression]) -> Callable[[Mu, EventMapping], bool]:
        """The deferred FILTERs of a GPM, tested on a run's combined mapping over the
        event's graph (an EXISTS reads the event, as the rest of the GPM does, and a
        background graph as it was at the event's time)."""
        if not deferred:
            return lambda m, event: True
        tests = " ".join(f"FILTER({expression_text(x, self.special)})" for x in deferred)
        graphs = {
            (iri, e.graph): self.data.graphs[id(e)]
            for iri, elements in self.data.streams.items()
            for e in elements
        }

        def holds(m: Mu, event: EventMapping) -> bool:
            names = sorted(m)
            values = self.data.table(names, [[m[n] for n in names]])
            read = [graphs[s] for s in sorted(event.support)]
            return self.data.ask(f"ASK {{ {values} {tests} }}", read, event.end)

        return holds


_END = 2**62
"""A time after every input element: SPAseq sequences are matched over the whole input."""


def _flatten(e: ev.EventPattern) -> list[tuple[str | None, ev.EventPattern]]:
    """A SPAseq sequence as (operator before it, element) pairs, in order."""
    if isinstance(e, ev.Seq) and is_spaseq(e):
        operator = SPASEQ_POLICIES.get(e.policy)
        if operator is None:
            raise ValueError(f"a SPAseq sequence cannot use the {e.policy.value} policy")
        (_, first), *rest = _flatten(e.right)
        return [*_flatten(e.left), (operator, first), *rest]
    return [(None, e)]


def _has_nested_path(p: gp.GraphPattern) -> bool:
    """Whether a graph pattern holds a property path with nested tests (evaluated here)."""
    return any(has_nested_test(x.path) for x in nodes(p, gp.PathPattern))


def _has_subselect(p: gp.GraphPattern) -> bool:
    """Whether a graph pattern holds a sub-SELECT (a solution modifier below the top)."""
    modifiers = (gp.Project, gp.Group, gp.Distinct, gp.Reduced, gp.Slice)
    return bool(nodes(p, modifiers, inside=False))


def _unmodified(p: ev.EventPattern) -> ev.EventPattern:
    """A sequence element's basic operator, without its modifier."""
    return p.inner if type(p) in MODIFIERS else p  # type: ignore[union-attr]


def _split_filters(
    p: gp.GraphPattern, deferred: list[Expression], bound: frozenset[str]
) -> gp.GraphPattern:
    """Strip the FILTERs of a GPM that read variables another GPM of the sequence binds
    (``bound``); they go to ``deferred`` and are checked on the run's combined mapping.
    Others stay in the GPM, over its event graph (Definition 7): an EXISTS's own variables
    are bound by no GPM, and deferring it read the background instead of the event."""
    if isinstance(p, gp.Filter):
        inner = _split_filters(p.inner, deferred, bound)
        if not (expression_variables(p.expression) - pattern_variables(inner)) & bound:
            return gp.Filter(p.expression, inner)
        deferred.append(p.expression)
        return inner
    return p
