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
  (skip-till-next when it starts the sequence, strict contiguity otherwise);
- a negated element ``!B`` is a guard the run carries to the next element: after ``,`` the
  next event time of the streamset must hold no compatible B; after ``;`` or ``:`` (or at
  the head, looking back over WITHIN) no compatible B may fall strictly between the
  previous element's event and the next one's (``Batch.history`` keeps the B matches seen);
  at the tail, the run waits until its horizon (WITHIN after its start, or the end of
  input) and completes there unless a compatible B arrives first. A match whose last
  step passed ``, !B`` waits for the next event time (in state ``len(automaton)``) and is
  reported at its own end once that time holds no compatible B.

Runs that WITHIN can no longer admit are dropped, so with WITHIN the buffer stays bounded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from sepia.engine.cep.automaton import Automaton, State, Strategy
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
    guard: int | None = None
    """The negated state whose B the run must not see before its next event, if any."""


def run_row(run: Run) -> tuple:
    """A run as one flat row: position, strategy, start, last, guard, iteration count, the
    mapping, then each iteration's mapping (all of the slot table's width)."""
    strategy = None if run.strategy is None else run.strategy.value
    head = (run.position, strategy, run.start, run.last, run.guard, len(run.iterations))
    return head + run.mu + tuple(v for it in run.iterations for v in it)


def row_run(row: Sequence, width: int) -> Run:
    """The run of a ``run_row`` row."""
    position, strategy, start, last, guard, count = row[:6]
    values = tuple(row[6:])
    iterations = tuple(values[width * (k + 1) : width * (k + 2)] for k in range(count))
    mode = None if strategy is None else Strategy(strategy)
    return Run(position, mode, start, last, values[:width], iterations, guard)


@dataclass(frozen=True, slots=True)
class Completed:
    """A match: its combined mapping, Kleene iterations, interval and report time (its end,
    or the horizon of a tail negation)."""

    mu: Row
    iterations: tuple[Row, ...]
    start: int
    end: int
    reported_at: int


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
    history: Mapping[int, Sequence[tuple[int, Row]]] = field(default_factory=dict)
    """For each negated state, the (time, row) of its B matches before t."""


def initial(automaton: Automaton, width: int) -> frozenset[Run]:
    """The runs that exist before any event: the empty run and, past optional elements,
    its skips. They never leave the buffer."""
    runs, _ = _closure(automaton, Run(0, None, None, None, (None,) * width))
    return frozenset(runs)


def needed(automaton: Automaton, runs: Iterable[Run]) -> list[bool]:
    """Which states' candidates a step over ``runs`` reads: a state some run waits in (the
    permanent runs wait in the first), and every negated state (guards, a tail, and the
    history kept for ``; !B`` guards read its matches). Matching the others' GPMs on the
    events would be wasted: most instants, most states have no run waiting."""
    wanted = [state.negated for state in automaton.states]
    for position in {run.position for run in runs}:
        if position < len(wanted):
            wanted[position] = True
    return wanted


def step(
    automaton: Automaton, runs: Iterable[Run], batch: Batch, within: Within | None
) -> tuple[set[Run], list[Completed]]:
    """(runs after t, matches completed at t or at a tail negation's horizon before t)."""
    after: set[Run] = set()
    done: list[Completed] = []
    # the runs that may take a candidate at t, with their compatible options: the FILTERs
    # over earlier elements are checked for all of them at once (``_checked``)
    waiting: list[tuple[Run, State, Strategy | None, list[tuple[Row, Row]]]] = []
    prepared: dict[int, list[Prepared]] = {}
    for run in runs:
        if run.position == len(automaton):  # a match waiting on its ", !B" guard
            if not batch.streamset_event:
                after.add(run)
            elif not _blocks(automaton.states[run.guard], batch.candidates[run.guard], run.mu):  # type: ignore[index]
                done.append(finish(run, run.last))  # type: ignore[arg-type]
            continue
        if _strict_guard(automaton, run):
            if not batch.streamset_event:
                after.add(run)
                continue
            if _blocks(automaton.states[run.guard], batch.candidates[run.guard], run.mu):  # type: ignore[index]
                continue
            run = replace(run, guard=None)
        state = automaton.states[run.position]
        if state.negated:
            kept, completed = _tail(run, state, batch, within)
            after |= kept
            done += completed
            continue
        if within is not None and run.start is not None and not within.admits(run.start, batch.t):
            continue  # expired: no later event can fit WITHIN
        strategy = run.strategy or state.strategy
        if run.last is not None and strategy is Strategy.STRICT and not batch.streamset_event:
            after.add(run)  # not the next event time yet
            continue
        if not batch.candidates[run.position]:  # most runs, most instants: nothing to take
            if _stays(run, strategy, False):
                after.add(run)
            continue
        if run.position not in prepared:
            prepared[run.position] = _prepared(state, batch.candidates[run.position])
        options = _options(prepared[run.position], run, batch, within)
        waiting.append((run, state, strategy, options))
    for (run, state, strategy, _), options in zip(waiting, _checked(waiting), strict=True):
        taken = _unseen(automaton, run, options, batch, within)
        for new in taken:
            runs_made, matches = _advance(automaton, run, state, new, batch.t)
            after |= runs_made
            done += matches
        if _stays(run, strategy, bool(taken)):
            after.add(run)
    return after, list(dict.fromkeys(done))


def _checked(
    waiting: list[tuple[Run, State, Strategy | None, list[tuple[Row, Row]]]],
) -> list[list[tuple[Row, Row]]]:
    """Each waiting run's options that pass its state's deferred FILTERs, evaluated in one
    batch per state over every run's options (one call instead of one per run)."""
    kept = [options for _, _, _, options in waiting]
    by_state: dict[int, list[int]] = {}
    for n, (_, state, _, options) in enumerate(waiting):
        if state.check is not None and options:
            by_state.setdefault(id(state), []).append(n)
    for members in by_state.values():
        state = waiting[members[0]][1]
        check = state.check
        assert check is not None
        if state.kleene:
            rows = [merge(mu, iteration) for n in members for mu, iteration in kept[n]]
        else:  # the iteration binds nothing: the mapping is the row
            rows = [mu for n in members for mu, _ in kept[n]]
        truths = iter(check.truths(rows))
        for n in members:
            kept[n] = [o for o in kept[n] if next(truths)]
    return kept


def _strict_guard(automaton: Automaton, run: Run) -> bool:
    """Whether the run's guard is ``, !B``: only the next event time may not hold a B."""
    if run.guard is None or run.last is None:
        return False
    return automaton.states[run.guard].strategy is Strategy.STRICT


def _blocks(negated: State, candidates: Sequence[Row], mu: Row) -> bool:
    """Whether a B candidate violates a run of mapping ``mu``: it is compatible and B's
    deferred FILTERs hold on their merge (the SPAseq paper's Algorithm 9 matches B's
    pattern under the run's mapping)."""
    found = [merge(mu, c) for c in candidates if compatible(c, mu)]
    if negated.check is None or not found:
        return bool(found)
    return any(negated.check.truths(found))


def _tail(
    run: Run, state: State, batch: Batch, within: Within | None
) -> tuple[set[Run], list[Completed]]:
    """A run past its last positive element, waiting out ``!B`` until its horizon."""
    assert run.start is not None and run.last is not None
    horizon = None if within is None else run.start + within.width
    if horizon is not None and batch.t > horizon:
        return set(), [finish(run, horizon)]
    if _blocks(state, batch.candidates[run.position], run.mu):
        return set(), []
    if batch.t == horizon:
        return set(), [finish(run, horizon)]
    return {run}, []


def finish(run: Run, reported_at: int) -> Completed:
    """The match a run stands for, reported at ``reported_at``."""
    assert run.start is not None and run.last is not None
    return Completed(run.mu, run.iterations, run.start, run.last, reported_at)


def bounded(
    runs: set[Run], permanent: frozenset[Run], limit: int | None
) -> tuple[set[Run], int]:
    """At most ``limit`` runs besides the permanent ones (skip-till-any can make
    exponentially many): the most recent are kept; returns (runs, how many were dropped)."""
    if limit is None or len(runs) - len(permanent & runs) <= limit:
        return runs, 0
    others = sorted(runs - permanent, key=_recency, reverse=True)
    return set(others[:limit]) | (permanent & runs), len(others) - limit


def _recency(run: Run) -> tuple:
    """Newest first: by last event, then start (a total order, so drops are reproducible)."""
    return (run.last, run.start, run.position, tuple(-1 if v is None else v for v in run.mu),
            repr(run.iterations), run.guard or -1, repr(run.strategy))


def at_end_of_input(
    automaton: Automaton, runs: Iterable[Run], end: int, within: Within | None
) -> list[Completed]:
    """What the runs waiting on a negation complete when the input ends at ``end``: a tail
    negation at its horizon, a match waiting on ``, !B`` at its own end."""
    done = []
    for run in runs:
        if run.position == len(automaton):
            done.append(finish(run, run.last))  # type: ignore[arg-type]
        elif automaton.states[run.position].negated:
            horizon = end if within is None else min(end, run.start + within.width)  # type: ignore[operator]
            done.append(finish(run, horizon))
    return done


def _stays(run: Run, strategy: Strategy | None, took: bool) -> bool:
    """Whether a run keeps waiting after t."""
    if run.last is None or strategy is Strategy.ANY:
        return True
    if strategy is Strategy.NEXT:
        return not took
    return False  # strict contiguity: this was the next event time


Prepared = tuple[tuple[tuple[int, int], ...], Row]
"""A candidate as the (slot, id) pairs a run's mapping must agree with and gains, and its
Kleene iteration's own mapping."""


def _prepared(state: State, candidates: Sequence[Row]) -> list[Prepared]:
    """A state's candidates at t split once for every run waiting in it: a Kleene
    element shares the slots that are not its own, its iteration binds those; another
    element shares the candidate whole and its iteration binds nothing."""
    own = set(state.own) if state.kleene else set()
    prepared = []
    for candidate in candidates:
        shared = tuple([(i, v) for i, v in enumerate(candidate) if v is not None and i not in own])
        if state.kleene:
            iteration = tuple([v if i in own else None for i, v in enumerate(candidate)])
        else:
            iteration = (None,) * len(candidate)
        prepared.append((shared, iteration))
    return prepared


def _options(
    prepared: list[Prepared], run: Run, batch: Batch, within: Within | None
) -> list[tuple[Row, Row]]:
    """The (combined mapping, iteration) pairs of the candidates compatible with the run
    (its FILTERs and guard not checked yet: ``_checked``, ``_unseen``). Compatibility
    and the merge read only the candidate's bound shared slots (``_prepared``)."""
    start = batch.t if run.start is None else run.start
    if within is not None and not within.admits(start, batch.t):
        return []
    mu = run.mu
    options = []
    for shared, iteration in prepared:
        merged = list(mu)
        for i, v in shared:  # a plain loop: ``compatible`` says why
            if merged[i] is None:
                merged[i] = v
            elif merged[i] != v:
                break
        else:
            options.append((tuple(merged), iteration))
    return options


def _unseen(
    automaton: Automaton,
    run: Run,
    options: list[tuple[Row, Row]],
    batch: Batch,
    within: Within | None,
) -> list[tuple[Row, Row]]:
    """The options a run's ``; !B`` guard lets through: no B seen strictly between its
    last event and t that blocks the option's mapping (``_blocks``)."""
    if run.guard is not None and options:
        low = run.last
        if low is None and within is not None:
            low = batch.t - within.width - 1
        seen = [
            row for time, row in batch.history.get(run.guard, ())
            if (low is None or low < time) and time < batch.t
        ]
        negated = automaton.states[run.guard]
        options = [o for o in options if not _blocks(negated, seen, o[0])]
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
    """A run entering a state: past each optional element after it, and past a negated one
    with that state as its guard (a tail negation keeps the run waiting)."""
    runs: set[Run] = set()
    position = run.position
    while position < len(automaton):
        state = automaton.states[position]
        if state.negated and position == len(automaton) - 1:
            if run.start is not None:  # a ", !B" guard before it still holds; others lapse
                guard = run.guard if _strict_guard(automaton, run) else None
                runs.add(replace(run, position=position, strategy=None, guard=guard))
            return runs, []
        if state.negated:
            run = replace(run, guard=position)
            position += 1
            continue
        runs.add(_entering(run, position))
        if not state.optional:
            return runs, []
        position += 1
    if run.start is None or run.last is None:
        return runs, []
    if _strict_guard(automaton, run):
        runs.add(_entering(run, position))  # wait for the next event
        return runs, []
    return runs, [finish(run, run.last)]


def _entering(run: Run, position: int) -> Run:
    """The run waiting in ``position`` under that state's own strategy (the constructor
    directly: ``dataclasses.replace`` took twice as long, once per new run)."""
    return Run(position, None, run.start, run.last, run.mu, run.iterations, run.guard)
