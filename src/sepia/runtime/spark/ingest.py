"""The ingest half of the Spark pipeline: stream files -> parsed, time-stamped rows.

Spark's own file source finds the files (a given file, or every new file dropped into a
watched directory, oldest first) and tracks which were read in its checkpoint. Only the
file *paths* cross into Python: each Python worker opens its file and streams it through
Sepia's reader (`sepia.io.streams`), so a large file is parsed in bounded memory and the
reader's checks (time, order, lateness) are the same as in the local runtime.

One row per triple (an element with no triple gives one row with null s/p/o). Terms stay
N-Triples text here; dictionary encoding happens in the stateful stage, whose dictionary
lives in Spark state (a global dictionary cannot be shared across Spark's workers without a
shuffle; hashing would risk silent collisions). Errors are rows too (`error` not null), so
one pass reports every bad element and loses no good one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sepia.io.streams import StreamError, read_stream
from sepia.rdf.stream import StreamElement

STREAM_FILE_GLOB = "*.{trig,nq,nquads,trig.gz,nq.gz,nquads.gz}"
BINARY_FILE_SCHEMA = "path string, modificationTime timestamp, length long, content binary"
INGEST_SCHEMA = pa.schema(
    [
        ("stream", pa.string()),
        ("file", pa.string()),
        ("seq", pa.int64()),  # position of the element in its file: the order within a time
        ("element", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("kind", pa.string()),  # "abstract" or "dateTime": how to print times back
        ("s", pa.string()),
        ("p", pa.string()),
        ("o", pa.string()),
        ("line", pa.int64()),  # only on error rows
        ("error", pa.string()),
    ]
)
INGEST_DDL = ", ".join(
    f"`{field.name}` {'bigint' if field.type == pa.int64() else 'string'}"
    for field in INGEST_SCHEMA
)


@dataclass(frozen=True, slots=True)
class StreamSource:
    """A stream IRI bound to a stream file, or to a directory whose new files extend it."""

    stream: str
    path: Path


@dataclass(frozen=True, slots=True)
class IngestOptions:
    """Reader settings applied inside the workers."""

    allowed_lateness: int = 0
    rows_per_batch: int = 65_536


def _file_source(spark: SparkSession, source: StreamSource) -> DataFrame:
    """Spark's file source over one file (by glob filter on its folder) or a whole folder."""
    path = source.path.resolve()
    reader = spark.readStream.format("binaryFile").schema(BINARY_FILE_SCHEMA)
    reader = reader.option("maxFilesPerTrigger", 1)
    if path.is_dir():
        frame = reader.option("pathGlobFilter", STREAM_FILE_GLOB).load(str(path))
    else:
        frame = reader.option("pathGlobFilter", _glob_escape(path.name)).load(str(path.parent))
    return frame.select(F.lit(source.stream).alias("stream"), F.col("path"))


def _glob_escape(name: str) -> str:
    """A file name as a Hadoop glob that matches only itself."""
    return "".join("\\" + char if char in "*?[]{}\\" else char for char in name)


def stream_rows(
    spark: SparkSession, sources: Iterable[StreamSource], options: IngestOptions | None = None
) -> DataFrame:
    """The streaming DataFrame of parsed rows of every source, with an event-time watermark.

    `event_time` is the element's end as a timestamp (abstract units read as milliseconds),
    and the watermark trails it by the allowed lateness.
    """
    options = options or IngestOptions()
    frames = [_file_source(spark, source) for source in sources]
    if not frames:
        raise ValueError("no stream to read")
    paths = frames[0]
    for frame in frames[1:]:
        paths = paths.unionByName(frame)
    rows = paths.mapInArrow(lambda batches: parse_path_batches(batches, options), INGEST_DDL)
    rows = rows.withColumn("event_time", F.timestamp_millis(F.col("end")))
    return rows.withWatermark("event_time", f"{options.allowed_lateness} milliseconds")


def is_error() -> Column:
    return F.col("error").isNotNull()


def parse_path_batches(
    batches: Iterable[pa.RecordBatch], options: IngestOptions
) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: (stream, path) rows in, parsed rows out, in bounded batches."""
    for batch in batches:
        for stream, uri in zip(
            batch.column("stream").to_pylist(), batch.column("path").to_pylist(), strict=True
        ):
            yield from _chunks(
                _file_rows(stream, _local_path(uri), options), options.rows_per_batch
            )


def _local_path(uri: str) -> Path:
    """Spark names files as URIs; workers open them as local (or commonly mounted) paths."""
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme in ("file", "") else Path(uri)


def _file_rows(stream: str, path: Path, options: IngestOptions) -> Iterator[tuple]:
    """Every row of one stream file: triples of good elements, and one row per error."""
    errors: list[StreamError] = []
    with path.open("rb") as handle:
        elements = read_stream(
            handle,
            stream,
            name=str(path),
            on_error="skip",
            errors=errors.append,
            allowed_lateness=options.allowed_lateness,
        )
        for seq, element in enumerate(elements):
            yield from _element_rows(str(path), seq, element)
            yield from _error_rows(stream, errors)
    yield from _error_rows(stream, errors)


def _element_rows(file: str, seq: int, element: StreamElement) -> Iterator[tuple]:
    head = (
        element.stream,
        file,
        seq,
        element.graph,
        element.start,
        element.end,
        element.kind.value,
    )
    if not element.triples:
        yield (*head, None, None, None, None, None)
    for triple in element.triples:
        yield (*head, str(triple.subject), str(triple.predicate), str(triple.object), None, None)


def _error_rows(stream: str, errors: list[StreamError]) -> Iterator[tuple]:
    """Rows for the errors reported so far (and forget them, so each is emitted once)."""
    for error in errors:
        yield (
            stream,
            error.file,
            None,
            error.element,
            None,
            None,
            None,
            None,
            None,
            None,
            error.line,
            error.reason,
        )
    errors.clear()


def _chunks(rows: Iterator[tuple], size: int) -> Iterator[pa.RecordBatch]:
    """Group rows into Arrow record batches of at most `size` rows."""
    batch: list[tuple] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield _record_batch(batch)
            batch = []
    if batch:
        yield _record_batch(batch)


def _record_batch(rows: list[tuple]) -> pa.RecordBatch:
    columns = zip(*rows, strict=True)
    arrays = [
        pa.array(column, field.type) for column, field in zip(columns, INGEST_SCHEMA, strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=INGEST_SCHEMA)
