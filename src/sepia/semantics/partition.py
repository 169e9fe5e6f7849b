"""PARTITION BY ?v (language.md section 4b): an event query matched separately per value.

An event belongs to partition x when some event pattern of the query (an EVENT, a GPM, a
triple occurrence pattern) matches it with ?v = x; an event that binds no ?v belongs to no
partition. Each partition is evaluated on its own events only, so strict contiguity,
skip-till-next, consumption and FIRST / LAST refer to the events of that partition, and
every event pattern there must bind ?v to x. Time is the whole input's: a partition's
input ends when everyone's does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from sepia.algebra import pattern as gp
from sepia.algebra.query import Query
from sepia.algebra.scope import event_leaves
from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import Term
from sepia.semantics.dataset import StreamingDataset
from sepia.semantics.mappings import Mu

PerElement = Callable[[gp.GraphPattern, list[StreamElement]], Callable[[StreamElement], list[Mu]]]


def end_of_input(query: Query, streams: Mapping[str, Sequence[StreamElement]]) -> int | None:
    """The time the whole input ends at (its streamset's last event): a partition's input
    ends there too, not at its own last event, so a tail negation waits as long in every
    partition (semantics.md, PARTITION BY)."""
    declared = {s.iri.value for s in query.dataset.streams}
    times = [e.time for iri, es in streams.items() if not declared or iri in declared for e in es]
    return max(times, default=None)


def split_by_value(
    query: Query, data: StreamingDataset, per_element: PerElement
) -> dict[Term, dict[str, list[StreamElement]]]:
    """For each value x of the PARTITION BY variable, the streams restricted to the events
    of partition x. ``per_element`` is the whole input's [[P]] over each element graph
    (``EventEvaluator.per_element``: it reads a nested path over the element's own graph)."""
    assert query.partition_by is not None
    variable = query.partition_by.value
    everything = [e for es in data.streams.values() for e in es]
    members: dict[int, set[Term]] = {id(e): set() for e in everything}
    for pattern in event_leaves(query.pattern):
        found = per_element(pattern, everything)
        for element in everything:
            members[id(element)] |= {mu[variable] for mu in found(element) if variable in mu}
    values = sorted(set().union(*members.values()), key=str)
    return {
        x: {iri: [e for e in es if x in members[id(e)]] for iri, es in data.streams.items()}
        for x in values
    }
