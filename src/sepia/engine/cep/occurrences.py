"""EP-SPARQL's state in the engine: every occurrence so far and what the pattern's
growing operands made of them (seed 003, section 4.2)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from sepia.algebra.event import SelectionPolicy
from sepia.engine.cep.epsparql import (
    EncodedTriple,
    Horizon,
    Layout,
    OccurrenceLeaf,
    Occurrences,
    Solutions,
)
from sepia.engine.cep.event_trees import (
    OPERATORS,
    Combined,
    EventSeq,
    EventTree,
    Inputs,
    Scope,
    children_of,
    evaluate_tree,
    grows,
    tree_mappings,
)
from sepia.engine.cep.intervals import EventMapping
from sepia.engine.cep.seq_chains import ChainState, seq_chain
from sepia.rdf.time import TimeKind

Reader = Callable[[Inputs, Scope], Iterable[EventMapping]]
"""A chain's operand read at an arrival: its mappings ending then."""


class OccurrenceHistory:
    """EP-SPARQL's state: every occurrence so far (``epsparql.Occurrences``) and the
    solutions so far of each SEQ's left operand over them, indexed like a leaf's. Over
    occurrences, SEQ, the joins, UNION and FILTER only ever add mappings, each ending at the
    arrival that made it, and a scope (end by a time, compatible with a mapping) selects the
    same mappings from their result as from their leaves: so a left operand, read once per
    right mapping, is kept as its result and grows by what ends at each arrival."""

    def __init__(
        self, tree: EventTree, leaves: Sequence[OccurrenceLeaf], horizon: Horizon | None = None,
        layout: Layout | None = None, on_arrival: bool = True,
    ) -> None:
        self.seen = Occurrences(leaves, layout)
        self.kind: TimeKind | None = None
        chain = seq_chain(tree) if on_arrival else None
        self.chain = None if chain is None else ChainState(chain)
        """A chain of SEQs under range comparisons, kept per bucket (``seq_chains``): only
        where the pattern reports on arrival (``on_arrival``), the scope the chain answers.
        Its levels and base are not kept operands, nor its patterns' solutions."""
        if chain is not None:
            self.seen.transient = chain.transient()
            self.readers = [self._ending(right) for right in chain.rights]
            self.base = self._ending(chain.base)
        owned = set() if chain is None else {id(n) for n in (*chain.levels, chain.base)}
        self.lefts = [n for n in _kept_lefts(tree) if id(n) not in owned]
        self.materialized: dict[int, Solutions] = {id(n): Solutions() for n in self.lefts}
        self.horizon = horizon if horizon is not None and grows(tree) else None
        self.forgotten: int | None = None
        """The last bound occurrences were forgotten by (``Horizon``)."""
        self._since: tuple[int | None, TimeKind | None, int | None] = (None, None, None)
        """(t, kind, ``since(t)``) of the last t asked (a cache)."""

    def add(self, batch: Sequence[tuple[int, int, tuple[EncodedTriple, ...]]], kind: TimeKind,
            inputs: Inputs) -> None:
        """The elements ending at ``inputs.t``; then each kept operand's mappings ending
        then (inner operands first: an outer one reads them)."""
        self.kind = kind
        since = self.since(inputs.t)
        self._forget(since)
        self.seen.add(batch, inputs.match)
        scope = Scope(inputs.t, None, since)
        for node in self.lefts:
            found = evaluate_tree(node, inputs, scope, inputs.t)
            solutions = self.materialized[id(node)]
            for m in found:  # all end at t: the index stays in end order
                solutions.add(m)
        if self.chain is not None:
            self._chained(self.chain, inputs, scope)

    def _chained(self, state: ChainState, inputs: Inputs, scope: Scope) -> None:
        """The chain's mappings ending at t, from its base's and its right operands'."""
        rights = [read(inputs, scope) for read in self.readers]
        base = self.base(inputs, scope)
        state.advance(inputs.t, base, rights, scope.since,
                      lambda level, ms: inputs.keep(level.condition, ms))  # type: ignore[misc]

    def _ending(self, tree: EventTree) -> Reader:
        """How the mappings ending at t of a chain's base or right operand are read, as the
        row engine reads them (an occurrence BGP's directly), chosen once: only the chain
        reads them, at each arrival, so they are not kept."""
        match tree:
            case OccurrenceLeaf(number=number) if number in self.seen.transient:
                ending = self.seen.ending  # its last arrival's occurrences
                return lambda inputs, scope: ending(number, inputs.t, scope.since)
            case OccurrenceLeaf():
                select = self.seen.select
                return lambda inputs, scope: select(tree, inputs.t, None, inputs.t, scope.since)
            case Combined("eq-join" | "or" as operator, left, right):  # each at t, as they end
                join, a, b = OPERATORS[operator], self._ending(left), self._ending(right)
                return lambda inputs, scope: join(list(a(inputs, scope)), list(b(inputs, scope)))
        return lambda inputs, scope: tree_mappings(tree, inputs, scope, inputs.t)

    def since(self, t: int) -> int | None:
        """Mappings built from t on hold only occurrences starting after this time (None:
        no horizon, or its literal does not compare with the stream's times); kept for the
        last t asked (an arrival asks three times)."""
        if self.horizon is None or self.kind is None:
            return None
        if self._since[0] != t or self._since[1] is not self.kind:
            self._since = (t, self.kind, self.horizon.bound(t, self.kind))
        return self._since[2]

    def _forget(self, bound: int | None) -> None:
        """Past the horizon's ``bound``, drop what no mapping still to come can hold (every
        half horizon, so the rebuilding costs little per arrival)."""
        if bound is None or (
            self.forgotten is not None and bound - self.forgotten < self.horizon.amount // 2  # type: ignore[union-attr]
        ):
            return
        self.forgotten = bound
        self.seen.forget(bound)
        self.materialized = {key: found.without(bound) for key, found in self.materialized.items()}
        if self.chain is not None:
            self.chain.forget(bound)

    def expiry(self) -> int | None:
        """The first time from which every occurrence held is of no use (the horizon's
        bound passes the latest start): None without a horizon or occurrences."""
        if self.horizon is None or self.kind is None or not self.seen.elements:
            return None
        latest = max(start for start, _, _ in self.seen.elements)
        t = latest + self.horizon.amount + (0 if self.horizon.strict else 1)
        return None if self.horizon.bound(t, self.kind) is None else t

    def rows(self) -> list[tuple]:
        """State rows: ``Occurrences.rows()`` with the time kind; the kept operands are
        derived, rebuilt on restore by replaying the batches."""
        kind = None if self.kind is None else self.kind.value
        return [(*row, kind) for row in self.seen.rows()]

    def clear(self) -> None:
        self.seen.clear()
        self.materialized = {id(n): Solutions() for n in self.lefts}
        self.forgotten = None
        if self.chain is not None:
            self.chain.clear()


def _kept_lefts(tree: EventTree) -> list[EventTree]:
    """The left operands of SEQ worth keeping (not a leaf: those are kept already) whose
    result only grows, innermost first."""
    found = []
    match tree:
        case EventSeq(left, right, SelectionPolicy.UNRESTRICTED):
            found = _kept_lefts(left) + _kept_lefts(right)
            if grows(left) and not isinstance(left, OccurrenceLeaf):
                found.append(left)
        case _:
            for child in children_of(tree):
                found += _kept_lefts(child)
    return found
