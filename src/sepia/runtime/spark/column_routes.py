"""The route stage on the columnar core: a chunk's partition keys by one group-by.

Where a PARTITION BY query's buckets run on the columnar core (`engine_path.on_columns`),
the route stage finds the partitions of a chunk of elements as the buckets' own engines
do (`sepia.engine.columnar.partitions`): the chunk's triples are encoded once into a
batch of columns, from the rows' N-Triples text cut into terms by the columnar reader's
expressions (`columns.element_columns`: no term object is made for the chunk), each
distinct BGP of the query's leaf plans is matched once over the whole batch, and the
(element, key) pairs give each element its buckets, where the row engine's router
matched every leaf on every element one by one. The buckets therefore
get exactly the elements their `PartitionedSequence` routes to the values they own.

An element row routed here carries its triples as the canonical N-Triples texts of their
terms (`elements.term_text`), read off the router's dictionary: a bucket encodes them
into its own dictionary by text (`columns.element_columns`), so an element is parsed once,
by the reader, in the whole job.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

from sepia.engine.columnar import ColumnBatch
from sepia.engine.columnar.partitions import Routing
from sepia.engine.columnar.sequences import PartitionedSequence
from sepia.engine.hosts.engine_path import on_columns
from sepia.engine.query.partition import PartitionedQuery, bucket_of
from sepia.runtime.spark.columns import element_columns
from sepia.runtime.spark.elements import (
    ElementRow,
    TermRefs,
    is_term_text,
    packed_columns,
    term_text,
)
from sepia.runtime.spark.units import bucket_key


class ColumnRouter:
    """A bucketed unit's partition keys on columns, for chunks of elements (one per unit
    and Python worker, beside the row engine's router whose plan and dictionary it
    shares)."""

    def __init__(self, router: PartitionedQuery) -> None:
        self.sequence = PartitionedSequence(router.router)
        """The query on the columnar core, owning every value (never stepped: its
        leaves, slot, FILTERs and background tables route)."""
        self.dictionary = self.sequence.dictionary
        self.buckets: dict[tuple[int, int], int] = {}
        """The bucket of each key id, by (id, bucket count): ids are never given twice."""

    @staticmethod
    def of(router: PartitionedQuery) -> ColumnRouter | None:
        """The columnar router of a unit whose buckets run on the columnar core."""
        return ColumnRouter(router) if on_columns(router.router) else None

    def routed(self, rows: Sequence[ElementRow], buckets: int) -> Iterator[tuple[str, ElementRow]]:
        """Each row of the query's streams to the buckets of the values it binds (none:
        nowhere), its triples as term texts, in the rows' order."""
        declared = self.sequence.declared
        kept = [n for n, row in enumerate(rows) if row[0] in declared]
        if not kept:
            return
        batch = element_columns([rows[n] for n in kept], self.dictionary)
        _, routing = self.sequence.routing(batch)
        targets = self._targets(routing, buckets, len(kept))
        texts = [rows[n][7] for n in kept]
        if not all(isinstance(text, TermRefs) or is_term_text(text) for text in texts):
            texts = self._texts(batch)
        for position, (n, mine) in enumerate(zip(kept, targets, strict=True)):
            if mine:
                row = (*rows[n][:7], texts[position])
                yield from ((bucket_key(b, buckets), row) for b in sorted(mine))

    def packed(
        self, batch: ColumnBatch, graphs: Sequence[str], first: int, file: str, buckets: int
    ) -> Iterator[tuple[str, ElementRow]]:
        """A batch read as columns over this router's dictionary (`ingest.piece_columns`:
        elements `first`, `first` + 1 ... of `file`, named `graphs`) as one packed row per
        bucket (`elements.packed_columns`): the elements of the values it binds, their terms
        as the dictionary's texts. The reader's ids, numbers and graph names are used as
        they are: no term text is made, cut or encoded again, no row per element."""
        if not len(batch) or batch.streams[0] not in self.sequence.declared:
            return
        read = batch.numbers
        if read is not None:  # as the sequence's own step is taught a block's numbers
            self.sequence.numbers.taught(read.ids, read.kind, read.digits, read.mantissa)
        _, routing = self.sequence.routing(batch)
        keys, inverse = np.unique(routing.key, return_inverse=True)
        to = np.array([self._bucket(key, buckets) for key in keys.tolist()], dtype=np.int64)
        pairs = np.unique(to[inverse.reshape(-1)] * len(batch) + routing.element)
        decode = self.dictionary.decode_text
        for bucket in np.unique(pairs // len(batch)).tolist():
            chosen = pairs[pairs // len(batch) == bucket] % len(batch)
            yield bucket_key(bucket, buckets), packed_elements(
                batch, chosen, graphs, first, file, decode
            )

    def _bucket(self, key: int, buckets: int) -> int:
        """The bucket of a key id (each id's asked once: ids are never given twice)."""
        bucket = self.buckets.get((key, buckets))
        if bucket is None:
            bucket = self.buckets[(key, buckets)] = bucket_of(self.dictionary.decode(key), buckets)
        return bucket

    def _targets(self, routing: Routing, buckets: int, count: int) -> list[set[int]]:
        """The buckets of each element: those of the keys it joins."""
        found: list[set[int]] = [set() for _ in range(count)]
        known = self.buckets
        for element, key in zip(routing.element.tolist(), routing.key.tolist(), strict=True):
            bucket = known.get((key, buckets))
            found[element].add(self._bucket(key, buckets) if bucket is None else bucket)
        return found

    def _texts(self, batch: ColumnBatch) -> list[str]:
        """Each element's triples as `term_text`, from the dictionary's texts of its ids
        (each distinct id looked up once), for rows that came as N-Triples (rows the route
        stage read from files hold the same text already: `elements.TermTexts`)."""
        ids = np.stack([batch.s, batch.p, batch.o], axis=1).reshape(-1)
        distinct, inverse = np.unique(ids, return_inverse=True)
        names = np.array(list(map(self.dictionary.decode_text, distinct.tolist())), dtype=object)
        terms = names[inverse].tolist()
        ends = np.searchsorted(batch.element, np.arange(1, len(batch) + 1)) * 3
        starts = np.concatenate([[0], ends[:-1]])
        return [term_text(terms[a:b]) for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]


def packed_elements(
    batch: ColumnBatch, chosen: np.ndarray, graphs: Sequence[str], first: int, file: str,
    decode: Callable[[int], str],
) -> ElementRow:
    """The elements `chosen` (positions, ascending) of a batch read as columns
    (`ingest.piece_columns`: elements `first`, `first` + 1 ... of `file`, named `graphs`)
    as one packed row (`elements.packed_columns`), their terms as `decode`'s texts of their
    ids, each distinct id decoded once."""
    mine = np.zeros(len(batch), dtype=bool)
    mine[chosen] = True
    kept = mine[batch.element]
    ids = np.stack([batch.s[kept], batch.p[kept], batch.o[kept]], axis=1).reshape(-1)
    distinct, positions = np.unique(ids, return_inverse=True)
    triples = np.bincount(batch.element, minlength=len(batch))
    return packed_columns(
        (batch.streams[0], file, batch.kind.value), [graphs[n] for n in chosen.tolist()],
        chosen + first, batch.times[chosen], list(map(decode, distinct.tolist())),
        positions.reshape(-1), triples[chosen] * 3,
    )  # fmt: skip
