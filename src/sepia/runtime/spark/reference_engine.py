"""The reference evaluator behind the engine protocol: correct, simple, and unbounded.

Its state is every element the key has seen (as element rows) and its progress. Each step
evaluates the unit from scratch over those elements and emits the results with t in
(last emitted t, horizon]. Evaluations are causal (a result at t depends only on elements
stamped at or before t), so the results up to the horizon are final once its elements are
in, and the union over all steps is the reference evaluator's answer on the whole input.
Nothing is ever evicted: state and the cost of a step grow with the input. The job's default
is the incremental engine (incremental_engine.py); this adapter stays for comparisons and
for the units the incremental engine refuses.

Progress keeps the last emitted t rather than the horizon: the reference flushes a finite
input only to the close of the last window holding its last element, so instants between
that flush end and the horizon (periodic reports over empty windows) exist only once later
elements arrive, and must still be emitted then.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from typing import ClassVar

import pyoxigraph as ox

from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import parse_term
from sepia.runtime.spark.elements import ELEMENT_DDL, END, ElementRow, arrival_order, streams_of
from sepia.runtime.spark.engine_protocol import Step, StoredState
from sepia.runtime.spark.units import Unit
from sepia.semantics import evaluate, evaluate_network, time_kind
from sepia.semantics.evaluator import Evaluation, continuous  # one partition's answer

ELEMENTS, PROGRESS = "elements", "progress"


class ReferenceEngine:
    """Evaluates a unit with `sepia.semantics` over every element its key has seen."""

    tables: ClassVar[Mapping[str, str]] = {
        ELEMENTS: ELEMENT_DDL,
        PROGRESS: "horizon bigint, emitted bigint",
    }
    maps: ClassVar[Mapping[str, str]] = {}

    def __init__(
        self,
        unit: Unit,
        background: ox.Store | None,
        rdfs: bool,
        forget_terms: int | None = None,
        checked: bool = False,
    ) -> None:
        """`forget_terms` and `checked` are the factory's (`EngineFactory`): this adapter
        keeps rows, not a dictionary of ids, so it has no terms to forget, and runs every
        unit."""
        self.unit = unit
        self.background = background
        self.rdfs = rdfs
        if rdfs and len(unit.queries) > 1:
            raise ValueError("RDFS entailment is not available for query networks")

    def step(
        self,
        key: str | None,
        state: StoredState,
        elements: Sequence[ElementRow],
        horizon: int,
        final: bool,
    ) -> Step:
        seen, emitted = (state.get(PROGRESS) or [(None, None)])[0]
        on_time = [e for e in elements if seen is None or e[END] > seen]
        rows = sorted([*state.get(ELEMENTS, []), *on_time], key=arrival_order)
        streams = streams_of(rows, self.unit.streams)
        answer = self.answer(key, streams) if rows else []
        due = [
            r for r in answer if (emitted is None or r.t > emitted) and (final or r.t <= horizon)
        ]
        later = [r.t for r in answer if not final and r.t > horizon]
        last = max([r.t for r in due], default=emitted)
        return Step(
            state={ELEMENTS: [] if final else rows, PROGRESS: [(horizon, last)]},
            results=due,
            wake_at=min(later, default=None),
            time_kind=time_kind(streams, self.unit.queries[0].query.time_kind),
        )

    def answer(self, key: str | None, streams: dict[str, list[StreamElement]]) -> list[Result]:
        """The unit's answer over the key's elements, as the reference evaluator gives it."""
        queries = self.unit.queries
        if key is not None:
            return self._partition(parse_term(key), key, streams)
        if self.rdfs:
            q = queries[0]
            return evaluate(q.query, streams, self.background, name=q.name, rdfs=True)
        pairs = [(q.name, q.query) for q in queries]
        return evaluate_network(pairs, streams, self.background)

    def _partition(
        self, value: object, key: str, streams: dict[str, list[StreamElement]]
    ) -> list[Result]:
        """One PARTITION BY value's answer. Match ids are prefixed with a digest of the value:
        the reference numbers partitions over the whole input, which a stream cannot know."""
        q = self.unit.queries[0]
        variable = self.unit.partition_by
        run = Evaluation(q.query, streams, self.background, q.name, self.rdfs, (variable, value))
        prefix = "p" + hashlib.sha1(key.encode()).hexdigest()[:8]
        return [
            r if r.match is None else dataclasses.replace(r, match=f"{prefix}.{r.match}")
            for r in continuous(run, None)
        ]
