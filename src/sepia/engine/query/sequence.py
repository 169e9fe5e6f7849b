"""SPAseq sequence queries (seed 002): an event automaton fed the events of each instant.

Push-based: each instant of the streamset, the GPMs of the automaton's states are matched on
the events stamped then, the runs step (``cep.runs``), and the query is evaluated over the
matches completed, per report time. A sequence ending in a negation completes at its WITHIN
horizon, or at the end of input.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sepia.algebra.query import Unsupported
from sepia.engine.cep.automaton import matches
from sepia.engine.cep.runs import (
    Batch,
    Completed,
    Run,
    at_end_of_input,
    bounded,
    initial,
    needed,
    row_run,
    run_row,
    step,
)
from sepia.engine.plan.physical import SequencePlan
from sepia.engine.query.kind import QueryKind
from sepia.engine.rows import FROM, MATCH, TO, Row, merge
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement

if TYPE_CHECKING:
    from sepia.engine.query.continuous import ContinuousQuery, Snapshot


class SequenceQuery(QueryKind):
    """A SPAseq sequence: the automaton's runs and the negated matches its guards read."""

    def __init__(self, host: ContinuousQuery, plan: SequencePlan) -> None:
        super().__init__(host)
        if host.dense and plan.automaton.states[-1].negated:
            raise Unsupported(
                "ASK, IStream or DStream over a SPAseq sequence ending in a negation (its "
                "matches are reported at a horizon, after that instant was evaluated)"
            )
        self.automaton, self.within = plan.automaton, plan.within
        self.timed = plan.within is not None
        """Runs under WITHIN expire and tail negations fire at their horizons."""
        self.permanent = initial(plan.automaton, len(host.physical.slots.names))
        self.runs: set[Run] = set(self.permanent)
        self.matched = 0
        self.dropped = 0
        self.history: dict[int, list[tuple[int, Row]]] = {}
        """Matches of negated elements, by state, for the guards that look back at them."""

    def advance(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        if not self.host.in_streamset(elements):
            return []  # not an instant of the query's streamset: its time stays
        return self._match(t, elements)

    def pass_time(self, t: int) -> list[Result]:
        """A tail negation may complete at its horizon, and the input now ends no earlier
        than t. Strict contiguity does not count such instants."""
        host = self.host
        if host.clock is not None and t <= host.clock:
            return []
        results = self._match(t, [])
        host.clock = t
        return results

    def flush(self, until: int | None) -> list[Result]:
        """A tail negation's runs complete at the last event time (or their horizon)."""
        return self._report(self._horizons())

    def settled(self, through: int) -> int:
        """Only a run past its last positive element reports late: at or after its end."""
        automaton = self.automaton
        late = [
            r.last
            for r in self.runs - self.permanent
            if r.last is not None
            and (r.position == len(automaton) or automaton.states[r.position].negated)
        ]
        return min(through, min(late) - 1) if late else through

    def solutions(self, rows: list[Row], t: int) -> list[Row]:
        """A solution without a match at t is not pushed at t."""
        matched = self.host.physical.slots.index(TO)
        return [r for r in rows if r[matched] is not None]

    def _match(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """Push-based: feed the automaton the events stamped t; report what completes."""
        host, automaton = self.host, self.automaton
        streamset_event = host.in_streamset(elements)
        host.new_step()
        candidates = self._candidates(elements)
        batch = Batch(t, candidates, streamset_event, self.history)
        runs, completed = step(automaton, self.runs, batch, self.within)
        self.runs, dropped = bounded(runs, self.permanent, host.max_runs)
        self.dropped += dropped
        self._remember(t, candidates)
        if streamset_event:
            host.clock = t
        return self._report(completed, t)

    def _candidates(self, elements: Sequence[StreamElement]) -> list[list[Row]]:
        """Each state's matches among the events stamped t, for the states a run reads
        (``needed``: on W5 most storage and weather events need no GPM run). Under RDFS
        every state is matched, so a schema triple inside an element is refused as before."""
        host, states = self.host, self.automaton.states
        wanted = (needed(self.automaton, self.runs) if host.closure is None
                  else [True] * len(states))
        return [
            list(matches(state.bop, elements, host.gpm)) if wanted[i] else []
            for i, state in enumerate(states)
        ]

    def _remember(self, t: int, candidates: list[list[Row]]) -> None:
        """Keep the B matches a ``; !B ;`` guard may look back at, for as long as WITHIN
        lets it (without WITHIN, as long as the input)."""
        automaton, within = self.automaton, self.within
        for i, state in enumerate(automaton.states):
            if state.negated and i < len(automaton) - 1:
                seen = self.history.setdefault(i, [])
                seen += [(t, row) for row in candidates[i]]
                if within is not None:
                    self.history[i] = [(s, r) for s, r in seen if s >= t - within.width - 1]

    def _report(self, completed: list[Completed], now: int | None = None) -> list[Result]:
        """Evaluate the query over the matches completed, per report time, in time order
        (and at ``now`` with none, when the answer is not empty without a match: ``dense``)."""
        host = self.host
        results: list[Result] = []
        times = {c.reported_at for c in completed}
        if host.dense and now is not None:
            times.add(now)
        for reported_at in sorted(times):
            due = sorted((c for c in completed if c.reported_at == reported_at), key=self._order)
            host.completed = [[row for c in due for row in self._rows(c)]]
            results += host.evaluate(reported_at)
        host.completed = [[]]
        return results

    def _order(self, match: Completed) -> tuple:
        """Matches reported at one instant are numbered by start, mapping, then iterations,
        the mappings compared by their terms' text: ids depend on the order terms were
        first seen, which a run resumed from a snapshot does not repeat (it numbered two
        matches the other way round: tests/runtime/local/test_local_runtime.py)."""
        text = self.host.dictionary.decode_text

        def key(row: Row) -> tuple[str, ...]:
            return tuple("" if v is None else text(v) for v in row)

        return (match.start, key(match.mu), tuple(key(it) for it in match.iterations))

    def _horizons(self) -> list[Completed]:
        if self.host.clock is None:
            return []
        done = at_end_of_input(self.automaton, self.runs, self.host.clock, self.within)
        self.runs = set(self.permanent)
        return done

    def _rows(self, match: Completed) -> list[Row]:
        """One row per Kleene iteration (numbered as one match), else the match's row."""
        self.matched += 1
        slots = self.host.physical.slots
        hidden = [slots.index(h) for h in (FROM, TO, MATCH)]

        def row(mu: Row, number: int | None) -> Row:
            values = list(mu)
            for i, v in zip(hidden, (match.start, match.end, number), strict=True):
                values[i] = v
            return tuple(values)

        if match.iterations:
            return [row(merge(match.mu, it), self.matched) for it in match.iterations]
        return [row(match.mu, None)]

    def deadline(self) -> int | None:
        """Under WITHIN, the first instant at which a step with no event could change the
        state: a run reaching its horizon (a tail negation completes, others expire) or
        the oldest negated match a guard keeps falling out of reach. A match waiting on a
        final ``, !B`` needs the query's own next event, not time."""
        within, automaton = self.within, self.automaton
        if within is None:
            return None
        starts = [
            r.start
            for r in self.runs - self.permanent
            if r.start is not None and r.position < len(automaton)  # not a ", !B" wait
        ]
        seen = [t + 2 for kept in self.history.values() for t, _ in kept]  # see _remember
        return min((x + within.width for x in starts + seen), default=None)

    def waiting_since(self) -> int | None:
        """The end of the oldest run that waits for the next event (a ``, !B`` guard) to
        complete a match reported at or after its end, possibly before that event: a match
        past a final ``, !B``, or a tail negation still guarded by one."""
        automaton = self.automaton
        ends = [
            r.last
            for r in self.runs
            if r.last is not None
            and (
                r.position == len(automaton)
                or (automaton.states[r.position].negated and r.guard is not None)
            )
        ]
        return min(ends, default=None)

    def runs_held(self) -> int:
        return len(self.runs)

    def idle(self) -> bool:
        return self.runs == self.permanent and not any(self.history.values())

    def rows(self) -> Snapshot:
        return {
            "runs": [run_row(r) for r in self.runs],
            "history": [(i, t, *row) for i, seen in self.history.items() for t, row in seen],
        }

    def restore(self, snapshot: Snapshot, low: int | None, matched: int, dropped: int) -> None:
        super().restore(snapshot, low, matched, dropped)
        width = len(self.host.physical.slots.names)
        self.runs = {row_run(row, width) for row in snapshot["runs"]}
        self.history = {}
        for state, time, *row in snapshot["history"]:
            self.history.setdefault(state, []).append((time, tuple(row)))
