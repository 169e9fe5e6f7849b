"""A batch of stream elements as integer columns over the run's dictionary.

Two aligned tables: one row per element (time, stream, graph name) and one row per triple
(element, s, p, o), the element column an offset into the first table. Elements are in
time order (the order the push loop gives them to the queries). Ids are the dictionary's;
a graph name the query cannot read is 0 (``NO_ID``), and so is an element's whole triple
table when the batch was built for queries that read none of its predicates (see
``sepia.engine.columnar.frontend``): what is not read is not encoded.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from sepia.engine.codec import Codec, encode_triples
from sepia.engine.columnar.tables import Ids, distinct
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind

_NONE = np.empty(0, dtype=np.int64)


@dataclass(frozen=True, slots=True)
class ReadNumbers:
    """Numeric values of literals worked out by the reader from their texts: for each id
    (sorted, distinct), ``groups.NumericIds``' kind, digits and mantissa. A batch's
    integers and decimals, so that a FILTER does not find them one at a time (W6's
    ``?amount1 > 0`` learnt 28,325 amounts at about 1.1 us each)."""

    ids: Ids
    kind: Ids
    """As ``int64``: the dictionary's collection reads every integer array of a live
    batch as ids it may hold, by their range."""
    digits: Ids
    mantissa: Ids


@dataclass(frozen=True, slots=True, weakref_slot=True)
class ColumnBatch:
    """Elements (``times``, ``stream``, ``graph``) and their triples (``element``, s, p, o);
    ``streams`` names the stream numbers."""

    alive: ClassVar[weakref.WeakValueDictionary[int, ColumnBatch]] = (
        weakref.WeakValueDictionary())
    """Every batch still referred to: a reader may hold ids encoded but not yet pushed,
    which the dictionary must not forget (``sepia.engine.forgetting``)."""

    streams: tuple[str, ...]
    times: Ids
    stream: Ids
    graph: Ids
    element: Ids
    s: Ids
    p: Ids
    o: Ids
    kind: TimeKind = TimeKind.ABSTRACT
    """What the times count: abstract units or epoch milliseconds (``xsd:dateTime``)."""
    numbers: ReadNumbers | None = None
    """Numeric values of (some of) its literals, if its reader worked them out: a slice
    keeps all of its batch's, batches merged the last one's (a session merges the
    instant it held back, whose block's numbers came before, with the next batch: a
    union there would make new numbers at every call, each taught again)."""

    def __post_init__(self) -> None:
        ColumnBatch.alive[id(self)] = self

    def __len__(self) -> int:
        return len(self.times)

    @classmethod
    def from_elements(cls, elements: Sequence[StreamElement], codec: Codec) -> ColumnBatch:
        """The columns of elements already read (the push path's objects)."""
        streams: dict[str, int] = {}
        numbers, spo = [], []
        for n, e in enumerate(elements):
            triples = encode_triples(codec, e.triples)
            numbers += [n] * len(triples)
            spo += triples
        stream = [streams.setdefault(e.stream, len(streams)) for e in elements]
        table = np.array(spo, dtype=np.int64).reshape(-1, 3)
        return cls(
            tuple(streams),
            np.array([e.time for e in elements], dtype=np.int64),
            np.array(stream, dtype=np.int64),
            np.zeros(len(elements), dtype=np.int64),
            np.array(numbers, dtype=np.int64),
            table[:, 0], table[:, 1], table[:, 2],
            elements[0].kind if elements else TimeKind.ABSTRACT,
        )

    @classmethod
    def merged(cls, batches: Sequence[ColumnBatch]) -> ColumnBatch:
        """Several batches as one in time order; equal times keep the order of ``batches``
        (then of each batch), as ``StreamSet.merged`` orders elements."""
        batches = [b for b in batches if len(b)]
        if not batches:
            return EMPTY
        if len(batches) == 1:
            return batches[0]
        streams: dict[str, int] = {}
        parts, offset = [], 0
        for b in batches:
            numbers = np.array([streams.setdefault(iri, len(streams)) for iri in b.streams],
                               dtype=np.int64)
            parts.append((b, numbers[b.stream] if len(numbers) else b.stream, offset))
            offset += len(b)
        times = np.concatenate([b.times for b in batches])
        order = np.argsort(times, kind="stable")
        position = np.empty_like(order)
        position[order] = np.arange(len(order))
        element = np.concatenate([position[b.element + at] for b, _, at in parts])
        by_element = np.argsort(element, kind="stable")
        s, p, o = (np.concatenate([getattr(b, c) for b in batches])[by_element] for c in "spo")
        return cls(
            tuple(streams), times[order],
            np.concatenate([stream for _, stream, _ in parts])[order],
            np.concatenate([b.graph for b in batches])[order],
            element[by_element], s, p, o,
            batches[0].kind, batches[-1].numbers,
        )

    def select(self, keep: np.ndarray) -> ColumnBatch:
        """The elements where ``keep`` (a boolean mask over elements) holds."""
        if keep.all():
            return self
        renumber = np.cumsum(keep) - 1
        mine = keep[self.element]
        return ColumnBatch(
            self.streams, self.times[keep], self.stream[keep], self.graph[keep],
            renumber[self.element[mine]], self.s[mine], self.p[mine], self.o[mine], self.kind,
            self.numbers,
        )

    def slice(self, start: int, stop: int) -> ColumnBatch:
        """Elements ``start`` to ``stop`` (exclusive) and their triples."""
        if start == 0 and stop == len(self):
            return self
        lo, hi = np.searchsorted(self.element, [start, stop], side="left")
        return ColumnBatch(
            self.streams, self.times[start:stop], self.stream[start:stop],
            self.graph[start:stop], self.element[lo:hi] - start,
            self.s[lo:hi], self.p[lo:hi], self.o[lo:hi], self.kind, self.numbers,
        )

    def of_streams(self, names: frozenset[str]) -> ColumnBatch:
        """The elements of the streams named (a query's windows read only those)."""
        wanted = [n for n, iri in enumerate(self.streams) if iri in names]
        if len(wanted) == len(self.streams):
            return self
        return self.select(np.isin(self.stream, wanted))

    def by_stream(self) -> Iterator[tuple[str, ColumnBatch]]:
        """Each stream's elements, in time order."""
        present = distinct(self.stream)
        if len(present) == 1:
            yield self.streams[int(present[0])], self
            return
        for number in present.tolist():
            yield self.streams[number], self.select(self.stream == number)

    def instants(self) -> Iterator[tuple[int, ColumnBatch]]:
        """(t, the elements stamped t) for each distinct time, in order."""
        times = self.times
        cuts = np.flatnonzero(times[1:] != times[:-1]) + 1
        bounds = [0, *cuts.tolist(), len(times)]
        for start, stop in itertools.pairwise(bounds):
            yield int(times[start]), self.slice(start, stop)

    def window_columns(self) -> tuple[Ids, Ids, Ids, Ids, Ids]:
        """(times, element offsets, s, p, o): what ``ColumnWindow.extend`` takes."""
        return self.times, self.element, self.s, self.p, self.o


def interleaved(streams: Sequence[Iterator[ColumnBatch]]) -> Iterator[ColumnBatch]:
    """Several streams' batches merged in time order (``ColumnBatch.merged`` order: equal
    times in the order of ``streams``), holding about a batch per stream: what comes out
    is everything before the earliest last time among the streams still open."""
    buffers = [EMPTY] * len(streams)
    open_ = [True] * len(streams)
    while True:
        for n, source in enumerate(streams):  # each open stream: beyond one instant
            while open_[n] and (not len(buffers[n]) or buffers[n].times[0] == buffers[n].times[-1]):
                more = next(source, None)
                if more is None:
                    open_[n] = False
                else:
                    buffers[n] = ColumnBatch.merged([buffers[n], more])
        if not any(open_):
            yield ColumnBatch.merged(buffers)
            return
        bound = min(int(b.times[-1]) for b, o in zip(buffers, open_, strict=True) if o)
        ready = []
        for n, buffer in enumerate(buffers):
            cut = int(np.searchsorted(buffer.times, bound, side="left"))
            ready.append(buffer.slice(0, cut))
            buffers[n] = buffer.slice(cut, len(buffer))
        yield ColumnBatch.merged(ready)


EMPTY = ColumnBatch((), _NONE, _NONE, _NONE, _NONE, _NONE, _NONE, _NONE)
