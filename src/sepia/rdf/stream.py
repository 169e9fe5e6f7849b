"""Stream elements (event graphs with a time or an interval) and streamsets.

Following the W3C RSP data model used by io.md: each named graph of a stream file is one
element; a point-stamped element has start == end (RSP-QL, RSEP-QL, SPAseq), an
interval-stamped one (CQELS-CEP, EP-SPARQL) has start <= end.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import pyoxigraph as ox

from sepia.rdf.time import TimeKind


@dataclass(frozen=True, slots=True)
class StreamElement:
    """One event graph of a named stream, stamped with [start, end] (equal for a point)."""

    stream: str
    graph: str
    start: int
    end: int
    triples: tuple[ox.Triple, ...]
    kind: TimeKind = TimeKind.ABSTRACT

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(f"element {self.graph}: end {self.end} is before start {self.start}")

    @property
    def is_point(self) -> bool:
        return self.start == self.end

    @property
    def time(self) -> int:
        """The time an element arrives at: its end (the last moment of its interval)."""
        return self.end


def _arrival_key(element: StreamElement) -> tuple[int, int]:
    return (element.end, element.start)


@dataclass(frozen=True, slots=True)
class StreamSet:
    """Several named streams read together, as SPAseq's streamset and the RSP-QL dataset do."""

    streams: Mapping[str, Iterable[StreamElement]]

    def merged(self) -> Iterator[StreamElement]:
        """All elements in arrival order; equal times keep the order the streams were given."""
        return heapq.merge(*self.streams.values(), key=_arrival_key)


Occurrence = tuple[int, int, str, str, str]
"""(end, start, source, stream, element graph): one stream element seen through one window
(or stream, "*" for EP-SPARQL's every stream), what consumption uses up (RSEP-QL Definition
10). Tuples compare by time first, so sorting a support lists its occurrences earliest first."""
