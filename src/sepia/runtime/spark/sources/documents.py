"""Received documents -> ingest rows: the parse step every push source shares.

A push source (MQTT, TCP socket, Kafka) delivers documents: each a complete TriG or N-Quads
text holding one or more stream elements, as io.md describes them. Each document is parsed
exactly as a stream file is, by ingest's own file parse (`parse_path_batches`), so the rest of
the pipeline cannot tell a message from a file. That parse reads paths, so an executor spools
the documents of its micro-batch to a scratch directory first (see the report on
`sepia.runtime.spark.ingest`: a parse of a binary object there would spare the spool).

A document is named `SOURCE#NNNNNNNNNNNN` (its zero-padded sequence number): that name is
the `file` column and `seq` is the element's position within the document, so ordering rows
by (file, seq) is arrival order, as it is for the files of a watched directory.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from sepia.runtime.spark.ingest import INGEST_SCHEMA, IngestOptions, parse_path_batches

Document = tuple[int, bytes]  # (sequence number, payload)
FILE_COLUMN = INGEST_SCHEMA.get_field_index("file")


def document_name(source: str, number: int) -> str:
    """The `file` of a received document: sorts in arrival order within its source."""
    return f"{source}#{number:012d}"


def document_batches(
    stream: str, source: str, documents: Iterable[Document], fmt: str, options: IngestOptions
) -> Iterator[pa.RecordBatch]:
    """The ingest rows of documents of one source (`fmt`: trig, nq or nquads), in order."""
    with tempfile.TemporaryDirectory(prefix="sepia-documents-") as spool:
        names: dict[str, str] = {}
        for number, payload in documents:
            path = Path(spool, f"{number}.{fmt}")  # the extension tells the reader the format
            path.write_bytes(payload)
            names[str(path)] = document_name(source, number)
        if not names:
            return
        wanted = pa.record_batch({"stream": [stream] * len(names), "path": list(names)})
        for batch in parse_path_batches([wanted], options):
            yield _named(batch, names)


def _named(batch: pa.RecordBatch, names: dict[str, str]) -> pa.RecordBatch:
    """The batch with each spooled path in `file` replaced by its document's name."""
    files = pa.array([names[path] for path in batch.column(FILE_COLUMN).to_pylist()])
    columns = batch.columns
    columns[FILE_COLUMN] = files
    return pa.RecordBatch.from_arrays(columns, schema=INGEST_SCHEMA)


def with_event_time(rows: DataFrame, options: IngestOptions) -> DataFrame:
    """Ingest rows with the `event_time` and watermark ingest's `stream_rows` gives files."""
    rows = rows.withColumn("event_time", F.timestamp_millis(F.col("end")))
    return rows.withWatermark("event_time", f"{options.allowed_lateness} milliseconds")
