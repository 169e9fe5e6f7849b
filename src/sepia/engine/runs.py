"""The buffer of partial matches (runs) of an event automaton, and its step function.

A run is a row: the state it waits in, the strategy for its next step when it differs from
the state's own (a Kleene element's later iterations), the interval so far, the combined
mapping and the own-variable mapping of each Kleene iteration. ``step(automaton, runs,
batch)`` takes the runs and the candidate matches of each state among the events stamped t,
and returns the runs after t and the matches completed at t (SPAseq Definitions 10-14, with
semantics.md's choices):

- the first element takes every candidate (a new run per match); ``:`` takes every later
  candidate and the run stays; ``;`` takes the candidates of the first time that has any,
  then the run moves on; ``,`` takes the candidates at the very next event time of the
  streamset and the run ends there either way;
- a candidate must be compatible with the run (on shared variables for a Kleene element),
  pass the element's deferred FILTERs, and keep the match within WITHIN;
- an optional element may be skipped; a Kleene element, once taken, may be taken again
  (skip-till-next when it starts the sequence, strict contiguity otherwise).

Runs that WITHIN can no longer admit are dropped, so with WITHIN the buffer stays bounded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sepia.engine.automaton import Automaton, State, Strategy
from sepia.engine.rows import Row, compatible, merge


@dataclass(frozen=True, slots=True)
class Run:
    """A partial match waiting in ``position`` (a row: every field is a plain value)."""

    position: int
    strategy: Strategy | None
    start: int | None
    last: int | None
    mu: Row
    iterations: tuple[Row, ...] = ()


def run_row(run: Run) -> tuple:
    """A run as one flat row: position, strategy, start, last, iteration count, the mapping,
    then each iteration's mapping (all of the slot table's width)."""
    strategy = None if run.strategy is None else run.strategy.value
    head = (run.position, strategy, run.start, run.last, len(run.iterations))
    return head + run.mu + tuple(v for it in run.iterations for v in it)


def row_run(row: Sequence, width: int) -> Run:
    """The run of a ``run_row`` row."""
    position, strategy, start, last, count = row[:5]
    values = tuple(row[5:])
    iterations = tuple(values[width * (k + 1) : width * (k + 2)] for k in range(count))
    mode = None if strategy is None else Strategy(strategy)
    return Run(position, mode, start, last, values[:width], iterations)


@dataclass(frozen=True, slots=True)
class Completed:
    """A match: its combined mapping, Kleene iterations and interval."""

    mu: Row
    iterations: tuple[Row, ...]
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Within:
    """SPAseq WITHIN: to - from <= width, or both in one tumbling window."""

    width: int
    tumbling: bool = False

    def admits(self, start: int, end: int) -> bool:
        if self.tumbling:
            return start // self.width == end // self.width
        return end - start <= self.width


@dataclass(frozen=True, slots=True)
class Batch:
    """What the automaton sees at t: each state's candidate rows among the events stamped
    t, and whether t is an event time of the streamset (strict contiguity counts those)."""

    t: int
    candidates: Sequence[Sequence[Row]]
    streamset_event: bool


def initial(automaton: Automaton, width: int) -> frozenset[Run]:
    """The runs that exist before any event: the empty run and, past optional elements,
    its skips. They never leave the buffer."""
    runs, _ = _closure(automaton, Run(0, None, None, None, (None,) * width))
    return frozenset(runs)


def step(
    automaton: Automaton, runs: Iterable[Run], batch: Batch, within: Within | None
) -> tuple[set[Run], list[Completed]]:
    """(runs after t, matches completed at t)."""
    after: set[Run] = set()
    done: list[Completed] = []
    for run in runs:
        if within is not None and run.start is not None and not within.admits(run.start, batch.t):
            continue  # expired: no later event can fit WITHIN
        state = automaton.states[run.position]
        strategy = run.strategy or state.strategy
        if run.last is not None and strategy is Strategy.STRICT and not batch.streamset_event:
            after.add(run)  # not the next event time yet
            continue
        taken = _take(state, run, batch, within)
        for new in taken:
            runs_made, matches = _advance(automaton, run, state, new, batch.t)
            after |= runs_made
            done += matches
        if _stays(run, strategy, bool(taken)):
            after.add(run)
    return after, list(dict.fromkeys(done))


def _stays(run: Run, strategy: Strategy | None, took: bool) -> bool:
    """Whether a run keeps waiting after t."""
    if run.last is None or strategy is Strategy.ANY:
        return True
    if strategy is Strategy.NEXT:
        return not took
    return False  # strict contiguity: this was the next event time


def _take(
    state: State, run: Run, batch: Batch, within: Within | None
) -> list[tuple[Row, Row]]:
    """The (combined mapping, iteration) pairs of the candidates the run may take."""
    start = batch.t if run.start is None else run.start
    if within is not None and not within.admits(start, batch.t):
        return []
    own = set(state.own) if state.kleene else set()
    options = []
    for candidate in batch.candidates[run.position]:
        shared = tuple(None if i in own else v for i, v in enumerate(candidate))
        if compatible(shared, run.mu):
            iteration = tuple(v if i in own else None for i, v in enumerate(candidate))
            options.append((merge(run.mu, shared), iteration))
    if state.check is not None and options:
        truths = state.check.truths([merge(mu, iteration) for mu, iteration in options])
        options = [o for o, ok in zip(options, truths, strict=True) if ok]
    return options


def _advance(
    automaton: Automaton, run: Run, state: State, taken: tuple[Row, Row], t: int
) -> tuple[set[Run], list[Completed]]:
    """The runs one taken candidate makes: on to the next state (past optional ones), and
    for a Kleene element, another iteration."""
    mu, iteration = taken
    iterations = (*run.iterations, iteration) if state.kleene else run.iterations
    start = t if run.start is None else run.start
    moved = Run(run.position + 1, None, start, t, mu, iterations)
    runs, done = _closure(automaton, moved)
    if state.kleene:
        again = Strategy.NEXT if run.position == 0 else Strategy.STRICT
        runs.add(Run(run.position, again, start, t, mu, iterations))
    return runs, done


def _closure(automaton: Automaton, run: Run) -> tuple[set[Run], list[Completed]]:
    """A run entering a state, and the same run past each optional element after it."""
    runs: set[Run] = set()
    done: list[Completed] = []
    position = run.position
    while True:
        if position == len(automaton):
            if run.start is not None and run.last is not None:
                done.append(Completed(run.mu, run.iterations, run.start, run.last))
            return runs, done
        runs.add(Run(position, None, run.start, run.last, run.mu, run.iterations))
        if not automaton.states[position].optional:
            return runs, done
        position += 1
