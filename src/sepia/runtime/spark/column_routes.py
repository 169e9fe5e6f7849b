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
from functools import partial

import numpy as np
import pyoxigraph as ox

from sepia.algebra.pattern import TriplePattern
from sepia.engine.codec import Codec
from sepia.engine.columnar import ColumnBatch
from sepia.engine.columnar.partitions import Routing
from sepia.engine.columnar.sequences import PartitionedSequence
from sepia.engine.columnar.tables import NO_ID
from sepia.engine.hosts.engine_path import on_columns
from sepia.engine.plan.split import Split
from sepia.engine.query.partition import PartitionedQuery, bucket_of, bucket_of_text
from sepia.rdf.terms import canonical, term_to_nt
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
        shares = by_bucket(routing.element, routing.key, partial(self._bucket, buckets=buckets),
                           len(batch))  # fmt: skip
        decode = self.dictionary.decode_text
        for bucket, chosen in shares:
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


class SplitRouter:
    """A split unit's buckets (`sepia.engine.plan.split`) on columns, for a task's blocks
    read by the columnar reader into its own dictionary: each of the split's triple
    patterns matched over a whole block by comparing id columns, and each triple sent to
    the buckets of the values it binds there, one per pattern it matches (a triple that
    matches none joins no result: it goes nowhere), as `job._split_rows` sends them, in
    one packed row per bucket. No stand-ins: a bucket's windows close as its horizon
    passes them, at the run's end or a mark row (see Time in `job`)."""

    def __init__(self, split: Split, forget_at: int) -> None:
        self.split = split
        self.dictionary = Codec()
        """The task's reading dictionary, emptied once it holds `forget_at` terms (the
        rows are text: no id of a block is needed after it)."""
        self.forget_at = forget_at
        self.buckets: dict[int, int] = {}
        """The bucket of each value id met since the dictionary was last emptied."""

    def packed(
        self, batch: ColumnBatch, graphs: Sequence[str], first: int, file: str, buckets: int
    ) -> Iterator[tuple[str, ElementRow]]:
        """A block read as columns over `dictionary` as one packed row per bucket: the
        triples that bind its values, in their elements (`ColumnRouter.packed`)."""
        if len(batch):
            triples, values = self.bound(batch)
            shares = by_bucket(triples, values, partial(self._bucket, buckets=buckets),
                               len(batch.s))  # fmt: skip
            decode = self.dictionary.decode_text
            for bucket, chosen in shares:
                yield bucket_key(bucket, buckets), packed_triples(
                    batch, chosen, graphs, first, file, decode
                )
        if len(self.dictionary) > self.forget_at:
            self.dictionary.forget(set(self.dictionary.ids()))
            self.buckets.clear()

    def bound(self, batch: ColumnBatch) -> tuple[np.ndarray, np.ndarray]:
        """(triple, value id) for each triple of the block and each of the split's
        patterns it matches: `Split.values_of` over id columns."""
        triples, values = [], []
        for pattern in self.split.patterns:
            mask, value = self._matches(pattern, (batch.s, batch.p, batch.o))
            triples.append(np.flatnonzero(mask))
            values.append(value[mask])
        return np.concatenate(triples), np.concatenate(values)

    def _matches(
        self, pattern: TriplePattern, columns: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Which triples match the pattern (its constants' ids, a variable's or blank
        node's repeats equal), and the id each binds to the split variable."""
        mask = np.ones(len(columns[0]), dtype=bool)
        seen: dict[object, np.ndarray] = {}
        for want, column in zip((pattern.subject, pattern.predicate, pattern.object), columns,
                                strict=True):  # fmt: skip
            if isinstance(want, (ox.Variable, ox.BlankNode)):
                if want in seen:
                    mask &= column == seen[want]
                else:
                    seen[want] = column
            else:
                found = self.dictionary.lookup(term_to_nt(canonical(want)))
                mask &= column == (NO_ID if found is None else found)
        return mask, seen[self.split.variable]

    def _bucket(self, value: int, buckets: int) -> int:
        """`bucket_of` the value, from its text: W3's split by ?trade meets a new value in
        every element, whose term would be parsed from that text to be written again."""
        bucket = self.buckets.get(value)
        if bucket is None:
            text = self.dictionary.decode_text(value)
            bucket = self.buckets[value] = bucket_of_text(text, buckets)
        return bucket


def by_bucket(
    items: np.ndarray, keys: np.ndarray, bucket: Callable[[int], int], size: int
) -> Iterator[tuple[int, np.ndarray]]:
    """Each bucket and its items (ascending, distinct), given (item, key id) pairs (items
    below `size`) and each key id's bucket."""
    distinct, inverse = np.unique(keys, return_inverse=True)
    to = np.array([bucket(key) for key in distinct.tolist()], dtype=np.int64)
    pairs = np.unique(to[inverse.reshape(-1)] * size + items)
    for chosen in np.unique(pairs // size).tolist():
        yield chosen, pairs[pairs // size == chosen] % size


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
    return packed_triples(batch, np.flatnonzero(mine[batch.element]), graphs, first, file, decode)


def packed_triples(
    batch: ColumnBatch, chosen: np.ndarray, graphs: Sequence[str], first: int, file: str,
    decode: Callable[[int], str],
) -> ElementRow:
    """The triples `chosen` (positions, ascending) of a batch read as columns, in their
    elements, as one packed row (`packed_elements`)."""
    elements, counts = np.unique(batch.element[chosen], return_counts=True)
    ids = np.stack([batch.s[chosen], batch.p[chosen], batch.o[chosen]], axis=1).reshape(-1)
    distinct, positions = np.unique(ids, return_inverse=True)
    return packed_columns(
        (batch.streams[0], file, batch.kind.value), [graphs[n] for n in elements.tolist()],
        elements + first, batch.times[elements], list(map(decode, distinct.tolist())),
        positions.reshape(-1), counts * 3,
    )  # fmt: skip
