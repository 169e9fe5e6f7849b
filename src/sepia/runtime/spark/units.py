"""How a run's queries split into independent units, and which keys an element goes to.

A *unit* is what one engine instance evaluates per key: a single query, or a CONSTRUCT query
network (language.md section 7: queries joined by a registered stream one produces and
another reads), which must see its derived streams and so stays together. A unit without
PARTITION BY (language.md 4b) has one key (nothing); with it, the key is a bucket of its
values on the incremental engine, a value on the reference adapter (job.py, Keys).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyoxigraph as ox

from sepia.algebra import query as qa
from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import term_to_nt


@dataclass(frozen=True, slots=True)
class RunQuery:
    """A query of the run, the name its results carry, and its position (orders output)."""

    name: str
    query: qa.Query
    position: int


@dataclass(frozen=True, slots=True)
class Unit:
    """Queries evaluated together, the streams they read from outside, their partition key."""

    queries: tuple[RunQuery, ...]
    streams: tuple[str, ...]
    """Streams named in the queries; none named (EP-SPARQL): the unit reads every stream."""

    def reads(self, stream: str) -> bool:
        return not self.streams or stream in self.streams

    def in_order(self, run_streams: Sequence[str]) -> Unit:
        """The unit with its streams in the run's order (as bound): the local runtime
        hands equal-time elements of different streams to the engine in that order."""
        rank = {iri: n for n, iri in enumerate(run_streams)}
        ordered = sorted(self.streams, key=lambda iri: rank.get(iri, len(rank)))
        return Unit(self.queries, tuple(ordered))

    @property
    def partition_by(self) -> str | None:
        only = self.queries[0].query
        return only.partition_by.value if len(self.queries) == 1 and only.partition_by else None

    def partition_keys(
        self, elements: Sequence[StreamElement], background: ox.Store | None, rdfs: bool
    ) -> list[list[str | None]]:
        """For each element, the partitions (values in N-Triples) it belongs to: an element
        may bind several values of the PARTITION BY variable, or none (the reference
        adapter's keys; imported here: a unit is unpickled where no evaluator is needed)."""
        from sepia.semantics.evaluator import partitions

        query = self.queries[0].query
        streams: dict[str, list[StreamElement]] = {iri: [] for iri in self.streams}
        for e in elements:
            if self.reads(e.stream):
                streams.setdefault(e.stream, []).append(e)
        found: dict[int, list[str | None]] = {id(e): [] for e in elements}
        for value, members in partitions(query, streams, background, rdfs).items():
            for element in (e for es in members.values() for e in es):
                found[id(element)].append(term_to_nt(value))
        return [found[id(e)] for e in elements]


def units_of(queries: Sequence[tuple[str, qa.Query]]) -> list[Unit]:
    """The run's queries grouped into units: connected through produced streams, or alone."""
    run = [RunQuery(name, query, n) for n, (name, query) in enumerate(queries)]
    produced = {s for q in run if (s := q.query.output_stream) is not None}
    groups: list[list[RunQuery]] = []
    for q in run:
        linked = [g for g in groups if any(_linked(o, q, produced) for o in g)]
        merged = [q, *(member for g in linked for member in g)]
        groups = [g for g in groups if g not in linked] + [sorted(merged, key=_position)]
    groups.sort(key=lambda g: g[0].position)
    return [Unit(tuple(g), _inputs(g, produced)) for g in groups]


def _position(q: RunQuery) -> int:
    return q.position


def _linked(a: RunQuery, b: RunQuery, produced: set[str]) -> bool:
    """Whether one of the two reads a stream the other produces (or both produce one)."""
    return bool(_streams(a, produced) & _streams(b, produced) & produced)


def _streams(q: RunQuery, produced: set[str]) -> set[str | None]:
    """The streams a query reads and writes. A query that names no stream (EP-SPARQL)
    reads every stream, the derived ones too (semantics.network)."""
    named = {d.iri.value for d in q.query.dataset.streams}
    return (named or produced) | {q.query.output_stream}


def _inputs(group: list[RunQuery], produced: set[str]) -> tuple[str, ...]:
    """Streams the group reads that no query of the run produces, in order of mention;
    none when a query of the group names none (it reads every stream)."""
    if any(not q.query.dataset.streams for q in group):
        return ()
    seen = dict.fromkeys(
        d.iri.value for q in group for d in q.query.dataset.streams if d.iri.value not in produced
    )
    return tuple(seen)


def bucket_key(bucket: int, buckets: int) -> str:
    """The key of bucket `bucket` of `buckets` of a PARTITION BY unit (job.py, Keys)."""
    return f"{bucket}/{buckets}"


def parse_bucket_key(key: str) -> tuple[int, int]:
    """(bucket, buckets) back from `bucket_key`."""
    bucket, buckets = key.split("/")
    return int(bucket), int(buckets)
