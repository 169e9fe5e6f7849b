"""A live source's ingest rows packed as columns: no Python object per row.

A live source (generator, MQTT, socket, Kafka) hands the route stage ingest rows, one per
triple (`ingest.INGEST_SCHEMA`). Folded row by row (`elements.element_rows`: a Python dict
per ingest row, an N-Triples line per triple, a tuple per element, then `pack`'s JSON of
them), they were most of the route stage's CPU (W1 at 5,000 elements/s: `to_pylist` alone
three fifths of it). Where every key of a unit gets every element of its streams (one key:
no PARTITION BY, no split), the route stage needs no element as an object: a block of rows
becomes one packed row of term text per stream (`elements.PACKED_TERMS`, the format file
runs' route stage writes) by Arrow's kernels, each distinct term's canonical text made once
(`CanonicalTexts`), and a key encodes the block's distinct terms once, by text
(`columns.triple_ids`), as it does for a file run's rows.

Blocks are cut at element boundaries (`aligned`): Spark's Arrow batches may split an
element's rows. A block holding anything but plain elements (error rows, an end-of-input
marker, a clock row) is folded row by row as before (`plain`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sepia.rdf.terms import canonical, parse_term
from sepia.runtime.spark.elements import (
    CLOCK_GRAPH,
    END_GRAPH,
    PACKED_TERMS,
    ElementRow,
    as_base64,
    packed_text,
)

IDENTITY = ("stream", "file", "seq", "element")
"""The ingest columns that tell one element's rows from the next one's."""
CANONICAL_TEXTS = 1 << 16
"""Texts a `CanonicalTexts` keeps before it starts afresh."""


class CanonicalTexts:
    """Each term's canonical N-Triples text (`terms.canonical`, as the engine's dictionary
    holds it) from its N-Triples text as an ingest row holds it: an IRI's or blank node's
    text is its canonical one; a literal is parsed once (`terms.parse_term`; a stream
    repeats its values) and written canonical. At most `CANONICAL_TEXTS` literals are kept:
    then it starts afresh."""

    def __init__(self) -> None:
        self.known: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        if not text.startswith('"'):
            return text
        found = self.known.get(text)
        if found is None:
            if len(self.known) > CANONICAL_TEXTS:
                self.known = {}
            found = self.known[text] = str(canonical(parse_term(text)))
        return found


def aligned(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.Table]:
    """The ingest rows of `batches` in blocks that end where an element ends: the last
    element of a batch is carried to the next one (its rows may continue there)."""
    carried: pa.Table | None = None
    for batch in batches:
        table = pa.Table.from_batches([batch])
        if carried is not None:
            table = pa.concat_tables([carried, table])
        if not table.num_rows:
            continue
        last = int(np.flatnonzero(starts(table))[-1])
        if last:
            yield table.slice(0, last)
        carried = table.slice(last)
    if carried is not None and carried.num_rows:
        yield carried


def starts(table: pa.Table) -> np.ndarray:
    """Whether each row starts an element (its stream, file, seq or element name differs
    from the row before's; a null differs from everything)."""
    count = table.num_rows
    found = np.zeros(count, dtype=bool)
    if not count:
        return found
    found[0] = True
    for name in IDENTITY:
        column = table.column(name)
        differs = pc.fill_null(pc.not_equal(column.slice(1), column.slice(0, count - 1)), True)
        found[1:] |= differs.to_numpy()
    return found


def plain(table: pa.Table) -> bool:
    """Whether a block holds only elements: no error row, no end-of-input or clock row."""
    if table.column("error").null_count != table.num_rows:
        return False
    special = pc.is_in(table.column("element"), pa.array([END_GRAPH, CLOCK_GRAPH]))
    return not pc.any(special).as_py()


def packed_rows(table: pa.Table, texts: CanonicalTexts) -> Iterator[ElementRow]:
    """A plain block (`plain`) as one packed row of term text per stream
    (`elements.PACKED_TERMS`: the row `elements.pack` makes of the same elements' rows)."""
    first = np.flatnonzero(starts(table))
    has = table.column("s").is_valid().to_numpy(zero_copy_only=False)
    triples = np.add.reduceat(has.astype(np.int64), first)
    elements = table.take(pa.array(first))
    owner = np.repeat(np.arange(len(first)), triples)
    spo = table.filter(pa.array(has))
    stream = elements.column("stream")
    for value in pc.unique(stream).to_pylist():
        mine = pc.equal(stream, value).to_numpy(zero_copy_only=False)
        yield _packed(elements.filter(pa.array(mine)), spo.filter(pa.array(mine[owner])),
                      triples[mine], texts)  # fmt: skip


def _packed(
    elements: pa.Table, spo: pa.Table, triples: np.ndarray, texts: CanonicalTexts
) -> ElementRow:
    """One stream's elements (a row each, their first ingest row) and their triples as a
    `PACKED_TERMS` row: the distinct terms' canonical texts, each term's position among
    them, and the elements' shapes (`elements._shapes`)."""
    terms = pc.dictionary_encode(
        pa.concat_arrays([spo.column(name).combine_chunks() for name in ("s", "p", "o")])
    )
    positions = terms.indices.to_numpy().reshape(3, -1).T.reshape(-1).astype(np.int32)
    shared = [_distinct(elements.column(name)) for name in ("stream", "file", "kind")]
    seq, start, end = (elements.column(name).to_numpy() for name in ("seq", "start", "end"))
    numbers = np.array([seq, start, end, triples * 3], dtype=np.int64)
    shapes = [shared, elements.column("element").to_pylist(), as_base64(numbers)]
    text = packed_text([texts(t) for t in terms.dictionary.to_pylist()], as_base64(positions),
                       shapes)  # fmt: skip
    last = int(end.max())
    stream, file, kind = (shared[n][0][0] for n in range(3))
    return (stream, file, int(seq[0]), PACKED_TERMS, last, last, kind, text)


def _distinct(column: pa.ChunkedArray) -> list:
    """[distinct values, each row's position among them (32-bit, base64)]."""
    encoded = pc.dictionary_encode(column.combine_chunks())
    return [encoded.dictionary.to_pylist(), as_base64(encoded.indices.to_numpy().astype(np.int32))]
