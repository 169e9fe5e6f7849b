"""PARTITION BY ?v (language.md 4b): an event query matched separately within each value.

``PartitionedQuery`` keeps one ``ContinuousQuery`` per value of ?v, made when an event first
joins that partition, and hands each the events of its own partition only: an event joins
partition x when some basic event pattern of the query binds ?v = x on it (the planner's
``Partition.leaves``), so one event may join several partitions, or none. Strict contiguity,
skip-till-next, consumption, FIRST / LAST and windows then see one partition's events, as
in the reference (``sepia.semantics.partition``). The runs of all partitions are the runs
indexed by partition key that SPAseq's optimisations ask for.

Time is the whole input's, as in the reference: a sequence ending in a negation completes
at its WITHIN horizon or when the whole input ends, even in a partition whose own events
stopped earlier. So under WITHIN every partition is told each instant of the streamset
(``pass_time``; strict contiguity does not count it): horizons fire on time, results leave
in time order, and runs expire, so a partition left with nothing is dropped (a fresh one
is the same) and the live partitions are those of the last WITHIN. At the end of input,
partitions waiting on a tail negation are told when the whole input ended.

Match numbers are ``p<n>.m<k>``: partition n (in order of creation), its k-th match; the
reference numbers partitions in value order, so they agree up to renaming.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from sepia.algebra import query as qa
from sepia.engine.background import Background
from sepia.engine.continuous import ContinuousQuery, Snapshot
from sepia.io.results import Result
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.stream import StreamElement


class PartitionedQuery:
    """A PARTITION BY query: its live partitions, by value id, each a number (for match
    names) and a ContinuousQuery."""

    def __init__(
        self,
        query: qa.Query,
        name: str,
        dictionary: Dictionary,
        background: Background,
        max_runs: int | None = None,
        rdfs: bool = False,
    ) -> None:
        self.name = name
        self._settings = (query, name, dictionary, background, max_runs, rdfs)
        self.router = ContinuousQuery(*self._settings)
        """Plans the query once; finds the partitions each event joins (never fed)."""
        self.parts: dict[int, tuple[int, ContinuousQuery]] = {}
        self.made = 0
        """Partitions made so far: the next one's number."""
        self.clock: int | None = None
        """The last instant of the streamset."""
        automaton, within = self.router.physical.automaton, self.router.physical.within
        self.waits = automaton is not None and automaton.states[-1].negated
        """A tail negation: every partition waits for the whole input's end."""
        self.ticks = automaton is not None and within is not None
        """Under WITHIN, every partition steps through each instant of the streamset: its
        runs expire (so it can be dropped) and tail negations fire at their horizons."""
        self.declared = {s.iri.value for s in query.dataset.streams}

    @property
    def query(self) -> qa.Query:
        return self.router.query

    def _part(self, value: int, number: int | None = None) -> ContinuousQuery:
        if value not in self.parts:
            decode = self.router.dictionary.decode
            if number is None:
                number, self.made = self.made, self.made + 1
            self.parts[value] = (number, ContinuousQuery(*self._settings, decode(value)))
        return self.parts[value][1]

    def advance(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """The elements stamped t, each to the partitions it joins; what falls due. A
        partition left holding nothing (``idle``) is dropped: a fresh one is the same."""
        members: dict[int, list[StreamElement]] = {}
        for element in elements:
            for value in sorted(self.router.partitions_of(element)):
                members.setdefault(value, []).append(element)
        for value in members:
            self._part(value)
        streamset = any(not self.declared or e.stream in self.declared for e in elements)
        results = []
        for value, (n, part) in list(self.parts.items()):
            if value in members:
                results += self._named(n, part.advance(t, members[value]))
            if streamset and self.ticks:
                results += self._named(n, part.pass_time(t))
            if part.idle():
                del self.parts[value]
        if streamset:
            self.clock = t
        return _in_time_order(results)

    def watermark(self, t: int) -> list[Result]:
        """Event queries report on arrival: a watermark brings nothing due."""
        return []

    def flush(self, until: int | None = None) -> list[Result]:
        """End of input, for every partition."""
        results = []
        for n, part in self.parts.values():
            if self.clock is not None and self.waits:
                results += self._named(n, part.pass_time(self.clock))
            results += self._named(n, part.flush(until))
        return _in_time_order(results)

    @staticmethod
    def _named(n: int, results: list[Result]) -> list[Result]:
        return [
            r if r.match is None else dataclasses.replace(r, match=f"p{n}.{r.match}")
            for r in results
        ]

    def state_size(self) -> dict[str, int]:
        """The partitions' counters summed, and how many partitions are live."""
        total = {"partitions": len(self.parts)}
        for _, part in self.parts.values():
            for key, value in part.state_size().items():
                total[key] = total.get(key, 0) + value
        return total

    def snapshot(self) -> Snapshot:
        """Each partition's rows, led by its value id; ``partitions`` lists (value id,
        number) and the count made so far, so match names go on where they were."""
        state: Snapshot = {"partitions": [(None, self.made)]}
        state["partitions"] += [(value, n) for value, (n, _) in self.parts.items()]
        for value, (_, part) in self.parts.items():
            for table, rows in part.snapshot().items():
                state.setdefault(table, []).extend((value, *row) for row in rows)
        return state

    def restore(self, snapshot: Snapshot) -> None:
        """Resume from ``snapshot()`` rows (the dictionary is restored by its owner)."""
        self.parts = {}
        for value, n in snapshot["partitions"]:
            if value is None:
                self.made = n
                continue
            tables = {
                table: [tuple(row[1:]) for row in rows if row[0] == value]
                for table, rows in snapshot.items()
                if table != "partitions"
            }
            self._part(value, n).restore(tables)


RegisteredQuery = ContinuousQuery | PartitionedQuery


def _in_time_order(results: list[Result]) -> list[Result]:
    """Partitions' results merged by time (each partition's are in time order already)."""
    return sorted(results, key=lambda r: r.t)


def continuous_query(
    query: qa.Query,
    name: str,
    dictionary: Dictionary,
    background: Background,
    max_runs: int | None = None,
    rdfs: bool = False,
) -> RegisteredQuery:
    """The engine for one registered query: partitioned when it says PARTITION BY."""
    engine = PartitionedQuery if query.partition_by is not None else ContinuousQuery
    return engine(query, name, dictionary, background, max_runs, rdfs)
