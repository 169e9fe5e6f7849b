"""SPAseq sequence expressions compiled into an event automaton (seed 002, section 6: NFA_scep).

The compiler is pure: it walks ``SEQ(A op B op ...)`` into one state per element. State i
waits for element i: its basic operator (a GPM, or & / | of GPMs, Definitions 7-9), the
selection strategy joining it to the previous element (``,`` strict contiguity, ``;``
skip-till-next, ``:`` skip-till-any), its modifier (``+`` Kleene, ``?`` optional, ``!``
negation: a state no run waits in, but a guard on the next one), the
element's own variables (each Kleene iteration binds them afresh) and the FILTERs that read
variables of earlier elements (checked on the run's combined mapping). The automaton holds
no runs: those live in :mod:`sepia.engine.cep.runs`.

Graph pattern matching of an arriving event happens before the automaton sees it: each GPM's
pattern is a physical plan evaluated over the event's own graph (``EventGraph``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from sepia.algebra import event as ev
from sepia.algebra import pattern as gp
from sepia.algebra.scope import expression_variables
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.expressions import ExpressionEvaluator
from sepia.engine.rows import Row, compatible, merge
from sepia.rdf.stream import StreamElement


class Strategy(Enum):
    """How an element's event is chosen after the previous element's (Definitions 10-12)."""

    STRICT = ","
    NEXT = ";"
    ANY = ":"


STRATEGIES = {
    ev.SelectionPolicy.STRICT_CONTIGUITY: Strategy.STRICT,
    ev.SelectionPolicy.SKIP_TILL_NEXT: Strategy.NEXT,
    ev.SelectionPolicy.SKIP_TILL_ANY: Strategy.ANY,
}


@dataclass(frozen=True, slots=True)
class Gpm:
    """A graph pattern matching operator on one stream (Definition 7)."""

    stream: str
    plan: po.PhysicalPlan


@dataclass(frozen=True, slots=True)
class Conj:
    """Psi1 & Psi2: compatible matches of events with the same timestamp (Definition 8)."""

    left: Bop
    right: Bop


@dataclass(frozen=True, slots=True)
class Disj:
    """Psi1 | Psi2: either (Definition 9)."""

    left: Bop
    right: Bop


Bop = Gpm | Conj | Disj


@dataclass(frozen=True, slots=True)
class State:
    """State i of the automaton: what it takes to leave it."""

    bop: Bop
    strategy: Strategy | None
    kleene: bool
    optional: bool
    negated: bool
    own: tuple[int, ...]
    check: ExpressionEvaluator | None


@dataclass(frozen=True, slots=True)
class Automaton:
    """The states of one SPAseq sequence, in order; reaching ``len(states)`` is a match."""

    states: tuple[State, ...]

    def __len__(self) -> int:
        return len(self.states)


class NotASequence(ValueError):
    """An event pattern the automaton compiler does not handle (the message says which)."""


def is_sequence(e: ev.EventPattern) -> bool:
    """Whether ``e`` is a SPAseq sequence expression (matched as a whole by an automaton)."""
    match e:
        case ev.Seq(left, right, policy):
            return policy in STRATEGIES or is_sequence(left) or is_sequence(right)
        case ev.Kleene() | ev.Optional() | ev.Negation():
            return True
        case _:
            return False


def elements(e: ev.EventPattern) -> list[tuple[Strategy | None, ev.EventPattern]]:
    """A sequence as (strategy before it, element) pairs, in order."""
    if isinstance(e, ev.Seq) and is_sequence(e):
        strategy = STRATEGIES.get(e.policy)
        if strategy is None:
            raise NotASequence(f"a SPAseq sequence cannot use the {e.policy.value} policy")
        (_, first), *rest = elements(e.right)
        return [*elements(e.left), (strategy, first), *rest]
    return [(None, e)]


def split_filters(
    p: gp.GraphPattern, binds: set[str], bound: set[str], deferred: list
) -> gp.GraphPattern:
    """Strip a GPM's FILTERs that read variables it does not bind but another GPM of the
    sequence does (``bound``) into ``deferred``. Others stay, over the event graph (an
    EXISTS's own variables, a variable no GPM binds: Definition 7)."""
    if isinstance(p, gp.Filter):
        inner = split_filters(p.inner, binds, bound, deferred)
        if not (expression_variables(p.expression) - binds) & bound:
            return gp.Filter(p.expression, inner)
        deferred.append(p.expression)
        return inner
    return p


def stream_of(e: ev.Event) -> str:
    """The stream a GPM reads (GPMs on windows are not SPAseq's)."""
    if e.window is not None or e.stream is None:
        raise NotASequence("a GPM must read one stream (ON S), not a window")
    return e.stream.value


def matches(
    bop: Bop,
    events: Sequence[StreamElement],
    gpm: Callable[[po.PhysicalPlan, StreamElement], Iterable[Row]],
) -> set[Row]:
    """The matches of a state's basic operator among the events stamped t (Definitions
    7-9): ``gpm(plan, event)`` matches a GPM's plan on one event graph; & joins compatible
    matches (all share the time t), | unites them."""
    match bop:
        case Gpm(stream, plan):
            return {row for e in events if e.stream == stream for row in gpm(plan, e)}
        case Conj(left, right):
            lefts, rights = matches(left, events, gpm), matches(right, events, gpm)
            return {merge(a, b) for a in lefts for b in rights if compatible(a, b)}
        case Disj(left, right):
            return matches(left, events, gpm) | matches(right, events, gpm)
