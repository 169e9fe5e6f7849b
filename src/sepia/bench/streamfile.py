"""Reading a stream file element by element, for the baselines.

A streaming read with pyoxigraph's parser, grouping quads by named graph and stamping each
group with its `prov:` time statement (before or after the group, as long as it comes before
the next group, which is how `sepia generate` and the examples write them). This is the
baselines' own reader, deliberately minimal; the engine reads streams through `sepia.io`.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pyoxigraph as ox

from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind, parse_time_literal

PROV = "http://www.w3.org/ns/prov#"
START_PREDICATES = frozenset({PROV + "generatedAtTime", PROV + "startedAtTime"})
END_PREDICATES = frozenset({PROV + "generatedAtTime", PROV + "endedAtTime"})


def rdf_format(path: Path) -> ox.RdfFormat:
    """The syntax of a stream or background file, from its name (``.gz`` ignored)."""
    suffixes = [s for s in path.suffixes if s != ".gz"]
    return {
        ".nq": ox.RdfFormat.N_QUADS,
        ".nt": ox.RdfFormat.N_TRIPLES,
        ".ttl": ox.RdfFormat.TURTLE,
    }.get(suffixes[-1] if suffixes else "", ox.RdfFormat.TRIG)


def open_binary(path: Path) -> IO[bytes]:
    return gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb")


def parse_quads(path: Path) -> Iterator[ox.Quad]:
    """All quads of an RDF file (gzip allowed), streamed."""
    with open_binary(path) as file:
        yield from ox.parse(file, format=rdf_format(path))


class _Pending:
    """Elements whose triples or times are still arriving, in order of first appearance."""

    def __init__(self, stream: str) -> None:
        self.stream = stream
        self.triples: dict[str, list[ox.Triple]] = {}
        self.start: dict[str, int] = {}
        self.end: dict[str, int] = {}
        self.kind = TimeKind.ABSTRACT

    def stamp(self, quad: ox.Quad) -> None:
        predicate = quad.predicate.value
        if predicate not in START_PREDICATES and predicate not in END_PREDICATES:
            return
        time = parse_time_literal(quad.object)
        self.kind = time.kind
        graph = quad.subject.value
        if predicate in START_PREDICATES:
            self.start[graph] = time.value
        if predicate in END_PREDICATES:
            self.end[graph] = time.value

    def ready(self, closed: int) -> Iterator[StreamElement]:
        """Emit, in order, the first ``closed`` groups if they all have their times."""
        graphs = list(self.triples)[:closed]
        for graph in graphs:
            if graph not in self.end or graph not in self.start:
                return
            yield StreamElement(self.stream, graph, self.start.pop(graph), self.end.pop(graph),
                                tuple(self.triples.pop(graph)), self.kind)


def read_elements(path: Path, stream: str) -> Iterator[StreamElement]:
    """The elements of one stream file, in file order."""
    pending = _Pending(stream)
    current: str | None = None
    for quad in parse_quads(path):
        graph = quad.graph_name
        if isinstance(graph, ox.DefaultGraph):
            pending.stamp(quad)
            continue
        if graph.value != current:
            yield from pending.ready(len(pending.triples))
            current = graph.value
            pending.triples.setdefault(current, [])
        pending.triples[current].append(quad.triple)
    yield from pending.ready(len(pending.triples))
    if pending.triples:
        raise ValueError(f"{path}: element {next(iter(pending.triples))} has no time")
