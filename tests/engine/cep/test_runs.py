"""Which states a step reads, on hand-built automata (the differential tests in
test_automaton.py check whole queries against the reference evaluator)."""

from __future__ import annotations

from sepia.engine.cep.automaton import Automaton, Gpm, State, Strategy
from sepia.engine.cep.runs import Run, initial, needed


def _state(negated: bool = False) -> State:
    """A state whose GPM is never run here (``needed`` reads positions only)."""
    return State(Gpm("s", None), Strategy.NEXT, False, False, negated, (), None)  # type: ignore[arg-type]


def test_needed_is_the_states_runs_wait_in_and_the_negated_ones():
    """SEQ(A; !B; C; D): the permanent run waits in A; B's matches are read by guards
    whether a run waits or not; one run waits in C; none waits in D."""
    automaton = Automaton((_state(), _state(negated=True), _state(), _state()))
    runs = {*initial(automaton, 2), Run(2, None, 5, 5, (1, None), guard=1)}
    assert needed(automaton, runs) == [True, True, True, False]


def test_needed_ignores_a_match_waiting_past_the_last_state():
    """A match waiting on its final ``, !B`` (position 2 of 2) reads only B's matches."""
    automaton = Automaton((_state(), _state(negated=True)))
    runs = {Run(2, None, 1, 3, (1,), guard=1)}
    assert needed(automaton, runs) == [False, True]
