"""Stream elements as rows: what crosses Spark's shuffle and sits in its state store.

Ingest rows are one per triple; the stateful stage wants one per element, so consecutive
ingest rows of the same element (same stream, file and position) are folded into one
*element row* whose triples are an N-Triples document. pyoxigraph parses that back in bulk,
keeping blank node labels, so an element leaves the state exactly as it entered.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import pyarrow as pa
import pyoxigraph as ox

from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind

ELEMENT_FIELDS = ("stream", "file", "seq", "graph", "start", "end", "kind", "triples")
ELEMENT_DDL = (
    "stream string, file string, seq bigint, graph string, start bigint, end bigint, "
    "kind string, triples string"
)
ElementRow = tuple[str, str, int, str, int, int, str, str]
"""One element: stream, file, seq (position in the file), graph, start, end, time kind, and
its triples as N-Triples text."""

END = ELEMENT_FIELDS.index("end")
CLOCK_GRAPH = "urn:sepia:clock"
"""The element of a clock row, which only moves a live source's watermark (sources.idle)."""


class IngestError(ValueError):
    """A stream element could not be read (an error row of the ingest stage)."""


def element_rows(batches: Iterable[pa.RecordBatch], on_error: str) -> Iterator[ElementRow]:
    """Fold ingest rows (one per triple, an element's rows consecutive) into element rows.

    Error rows raise IngestError when `on_error` is "stop" and are dropped when "skip".
    """
    current: list | None = None
    lines: list[str] = []
    for batch in batches:
        for row in batch.to_pylist():
            if row["error"] is not None:
                if on_error == "stop":
                    raise IngestError(_place(row) + row["error"])
                continue
            identity = [row["stream"], row["file"], row["seq"], row["element"]]
            if current is not None and current[:4] != identity:
                yield _finish(current, lines)
                lines = []
            if current is None or current[:4] != identity:
                current = [*identity, row["start"], row["end"], row["kind"]]
            if row["s"] is not None:
                lines.append(f"{row['s']} {row['p']} {row['o']} .")
    if current is not None:
        yield _finish(current, lines)


def _place(row: dict) -> str:
    element = f" (element {row['element']})" if row["element"] else ""
    return f"{row['file']}:{row['line']}{element}: "


def _finish(current: list, lines: list[str]) -> ElementRow:
    return (*current, "\n".join(lines))  # type: ignore[return-value]


def to_element(row: Sequence) -> StreamElement:
    """The StreamElement an element row stands for."""
    stream, _, _, graph, start, end, kind, text = row[:8]
    triples = tuple(q.triple for q in ox.parse(text, format=ox.RdfFormat.N_TRIPLES)) if text else ()
    return StreamElement(stream, graph, int(start), int(end), triples, TimeKind(kind))


def arrival_order(row: Sequence) -> tuple[int, str, int]:
    """Elements in time order; equal times in the order their files and positions give."""
    return (int(row[END]), row[1], int(row[2]))


def streams_of(rows: Iterable[Sequence], iris: Iterable[str]) -> dict[str, list[StreamElement]]:
    """Element rows as the reference evaluator's input: stream IRI -> elements in order."""
    streams: dict[str, list[StreamElement]] = {iri: [] for iri in iris}
    for row in sorted(rows, key=arrival_order):
        streams.setdefault(row[0], []).append(to_element(row))
    return streams
