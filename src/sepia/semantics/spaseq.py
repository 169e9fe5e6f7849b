"""SPAseq sequence expressions (seed 002, Definitions 7-15, Appendix B/C) over a streamset.

GPM, conjunction and disjunction (Definitions 7-9, 15) are set functions over point event
mappings (tau, X), written here as EventMapping(X, tau, tau). A sequence is then matched by
enumerating runs over its elements, each joined to the previous by ``,`` (strict contiguity
over the whole streamset, Definition 12), ``;`` (skip-till-next, Definition 11) or ``:``
(skip-till-any, Definition 10), with the modifiers ``+`` ``?`` ``!`` as semantics.md fixes
them:

- Kleene ``+`` (Definitions 13-14): each iteration binds the element's own variables afresh
  and must agree with the run on shared ones; after the first iteration, the next ones are
  strictly contiguous when the element follows another, skip-till-next when it starts the
  sequence. Every iteration count that completes the pattern is its own match.
- ``B?``: zero or one B at that position.
- ``!B`` after ``,``: the event right after the previous element's is not a compatible B;
  after ``;`` or ``:``: no compatible B between the previous element's event and the next
  one's. At the head it looks back over the WITHIN bound (or the whole input); at the tail
  it looks forward over the WITHIN bound (or to the end of input), and the match is reported
  once that horizon has passed.
- ``WITHIN w``: to - from <= w; with ``tumbling``, from and to fall in the same [k*w, (k+1)*w).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from sepia.rdf.stream import StreamElement
from sepia.semantics.mappings import EventMapping, Mu

Psi = Iterable[EventMapping]
STRICT, NEXT, ANY = ",", ";", ":"


def gpm(
    stream: str, elements: Sequence[StreamElement], matches: Callable[[StreamElement], Iterable[Mu]]
) -> set[EventMapping]:
    """[[(u, P)]]: (tau, X) for every event of stream u and X in [[P]] over its graph
    (Definition 7; ``matches`` also joins GRAPH patterns over background data, Def. 15)."""
    return {
        EventMapping(m, e.time, e.time, frozenset({(stream, e.graph)}))
        for e in elements
        for m in matches(e)
    }


def conj(left: Psi, right: Psi) -> set[EventMapping]:
    """Psi1 & Psi2 (Definition 8): compatible mappings of events with the same timestamp."""
    right = list(right)
    return {
        a.combine(b, a.start, a.end)
        for a in left
        for b in right
        if a.end == b.end and a.compatible(b)
    }


def disj(left: Psi, right: Psi) -> set[EventMapping]:
    """Psi1 | Psi2 (Definition 9): the union."""
    return set(left) | set(right)


def _always(_: Mu, __: EventMapping) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Element:
    """One position of a sequence: its BOp matches, the operator joining it to the previous
    element (None for the first), its modifier ('', '+', '?', '!'), its variables (to tell a
    Kleene element's own variables from shared ones) and the FILTERs that need variables of
    earlier elements, checked on the run's combined mapping over the event's graph (the
    event is given too: an EXISTS there reads it)."""

    candidates: frozenset[EventMapping]
    operator: str | None = None
    modifier: str = ""
    variables: frozenset[str] = frozenset()
    check: Callable[[Mu, EventMapping], bool] = _always

    def blocks(self, run: Mu, event: EventMapping) -> bool:
        """Whether ``event``, negated, violates a run with mapping ``run``: it matches this
        element's pattern under the run's mapping, FILTERs reading the run's variables
        included (the SPAseq paper's Algorithm 9 matches P_theta)."""
        return event.mu.compatible(run) and self.check(run.merge(event.mu), event)


@dataclass(frozen=True, slots=True)
class SpaseqMatch:
    """A complete match: the mapping shared by its rows, one own-variable mapping per Kleene
    iteration (empty without Kleene), its interval, and when it is reported."""

    common: Mu
    iterations: tuple[Mu, ...]
    start: int
    end: int
    reported_at: int
    support: frozenset[tuple[str, str]] = field(compare=False, default=frozenset())

    def rows(self) -> list[Mu]:
        """One row per Kleene iteration (semantics.md), or the single row of the match."""
        return [self.common.merge(i) for i in self.iterations] or [self.common]


@dataclass(frozen=True, slots=True)
class _Run:
    mu: Mu
    start: int | None
    last: int | None
    iterations: tuple[Mu, ...] = ()
    support: frozenset[tuple[str, str]] = frozenset()
    guard: Element | None = None


@dataclass(frozen=True, slots=True)
class Bounds:
    """What the matcher knows of the input: every event time of the streamset (for strict
    contiguity), the end of input, the WITHIN width and whether it tumbles."""

    times: tuple[int, ...]
    end_of_input: int
    within: int | None = None
    tumbling: bool = False

    def next_time(self, after: int) -> int | None:
        """The first event time of the whole streamset strictly after ``after``."""
        i = bisect.bisect_right(self.times, after)
        return self.times[i] if i < len(self.times) else None

    def admits(self, start: int, end: int) -> bool:
        """Whether a match from ``start`` to ``end`` respects WITHIN."""
        if self.within is None:
            return True
        if self.tumbling:
            return start // self.within == end // self.within
        return end - start <= self.within


class _Matcher:
    """Enumerates the runs of one sequence over finite input (slow, literal)."""

    def __init__(self, elements: Sequence[Element], bounds: Bounds) -> None:
        self.elements = elements
        self.bounds = bounds
        self.found: set[SpaseqMatch] = set()

    def own(self, position: int) -> frozenset[str]:
        others = set().union(*(e.variables for i, e in enumerate(self.elements) if i != position))
        return self.elements[position].variables - others

    def run(self) -> set[SpaseqMatch]:
        self.extend(0, _Run(Mu(), None, None))
        return self.found

    def extend(self, position: int, run: _Run) -> None:
        if position == len(self.elements):
            self.complete(run, run.last)
            return
        element = self.elements[position]
        match element.modifier:
            case "":
                for taken in self.step(element, position, run, element.operator):
                    self.extend(position + 1, taken)
            case "?":
                self.extend(position + 1, run)
                for taken in self.step(element, position, run, element.operator):
                    self.extend(position + 1, taken)
            case "+":
                self.iterate(position, run, element.operator)
            case "!":
                self.negate(position, run)
            case other:
                raise ValueError(f"unknown SPAseq modifier {other!r}")

    def iterate(self, position: int, run: _Run, operator: str | None) -> None:
        """Kleene+: take one more iteration, then either go on or iterate again."""
        following = NEXT if self.elements[position].operator is None else STRICT
        for taken in self.step(self.elements[position], position, run, operator):
            self.extend(position + 1, taken)
            self.iterate(position, taken, following)

    def step(self, element: Element, position: int, run: _Run, operator: str | None) -> list[_Run]:
        """The runs that take one event for ``element`` after ``run``.

        An event matches the element when it is compatible with the run (on shared variables
        for a Kleene element), passes the element's FILTERs and fits WITHIN; the selection
        strategy then picks among the matching events, and a pending ``!B`` may veto them.
        """
        own = self.own(position) if element.modifier == "+" else frozenset()
        options = []
        for c in element.candidates:
            if run.last is not None and c.start <= run.last:
                continue
            start = c.start if run.start is None else run.start
            if not self.bounds.admits(start, c.end):
                continue
            shared = Mu((k, v) for k, v in c.mu.items() if k not in own) if own else c.mu
            if not shared.compatible(run.mu):
                continue
            mu = run.mu.merge(shared)
            if element.check(mu.merge(c.mu.project(own)) if own else mu, c):
                options.append((c, mu))
        runs = []
        for c, mu in self.select(options, run, operator):
            if self.guarded(run, c, mu):
                continue
            iteration = (c.mu.project(own),) if element.modifier == "+" else ()
            start = c.start if run.start is None else run.start
            runs.append(_Run(mu, start, c.end, run.iterations + iteration, run.support | c.support))
        return runs

    def select(
        self, options: list[tuple[EventMapping, Mu]], run: _Run, operator: str | None
    ) -> list[tuple[EventMapping, Mu]]:
        """Keep the options the event selection strategy allows (Definitions 10-12)."""
        if run.last is None or operator == ANY:
            return options
        if operator == STRICT:
            nxt = self.bounds.next_time(run.last)
            return [o for o in options if o[0].end == nxt]
        first = min((c.end for c, _ in options), default=None)  # skip-till-next
        return [o for o in options if o[0].end == first]

    def negate(self, position: int, run: _Run) -> None:
        """``!B``: go on without B, under the constraint the operator before it gives."""
        negated = self.elements[position]
        if position + 1 == len(self.elements):
            self.negate_tail(negated, run)
        elif negated.operator == STRICT and run.last is not None:
            nxt = self.bounds.next_time(run.last)
            if not any(c.end == nxt and negated.blocks(run.mu, c) for c in negated.candidates):
                self.extend(position + 1, run)
        else:
            self.extend(position + 1, replace(run, guard=negated))

    def negate_tail(self, negated: Element, run: _Run) -> None:
        """``A ; !B`` at the end: no compatible B up to the horizon, reported there."""
        if run.start is None or run.last is None:
            return
        horizon = self.bounds.end_of_input
        if self.bounds.within is not None:
            horizon = min(horizon, run.start + self.bounds.within)
        if not any(
            run.last < c.start <= horizon and negated.blocks(run.mu, c) for c in negated.candidates
        ):
            self.complete(run, horizon)

    def guarded(self, run: _Run, event: EventMapping, mu: Mu) -> bool:
        """Whether a pending ``!B`` forbids taking ``event``: a compatible B strictly between
        the previous element's event (or the WITHIN bound at the head) and this one."""
        if run.guard is None:
            return False
        low = run.last
        if low is None:
            low = event.end - self.bounds.within - 1 if self.bounds.within is not None else None
        return any(
            (low is None or low < c.start) and c.end < event.start and run.guard.blocks(mu, c)
            for c in run.guard.candidates
        )

    def complete(self, run: _Run, reported_at: int | None) -> None:
        if run.start is None or run.last is None or reported_at is None:
            return
        self.found.add(
            SpaseqMatch(run.mu, run.iterations, run.start, run.last, reported_at, run.support)
        )


def sequence(elements: Sequence[Element], bounds: Bounds) -> set[SpaseqMatch]:
    """Every match of the sequence ``elements`` over the input described by ``bounds``."""
    if not elements:
        raise ValueError("a SPAseq sequence needs at least one element")
    return _Matcher(elements, bounds).run()
