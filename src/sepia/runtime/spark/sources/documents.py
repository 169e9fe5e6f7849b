"""Received documents -> ingest rows: the parse step every push source shares.

A push source (MQTT, TCP socket, Kafka) delivers documents: each a complete TriG or N-Quads
text holding one or more stream elements, as io.md describes them. Each document is parsed
exactly as a stream file is, by ingest's own parse (`source_batches`), so the rest of the
pipeline cannot tell a message from a file.

A document is named `SOURCE#NNNNNNNNNNNN` (its zero-padded sequence number): that name is
the `file` column and `seq` is the element's position within the document, so ordering rows
by (file, seq) is arrival order, as it is for the files of a watched directory.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator

import pyarrow as pa

from sepia.runtime.spark.ingest import IngestOptions, source_batches

Document = tuple[int, bytes]  # (sequence number, payload)


def document_name(source: str, number: int) -> str:
    """The `file` of a received document: sorts in arrival order within its source."""
    return f"{source}#{number:012d}"


def document_batches(
    stream: str, source: str, documents: Iterable[Document], fmt: str, options: IngestOptions
) -> Iterator[pa.RecordBatch]:
    """The ingest rows of documents of one source (`fmt`: trig, nq or nquads), in order."""
    for number, payload in documents:
        name = document_name(source, number)
        yield from source_batches(stream, io.BytesIO(payload), name, fmt, options)
