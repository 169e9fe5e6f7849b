"""The ingest half of the Spark pipeline: stream files -> parsed, time-stamped rows.

Spark's own file source finds the files (a given file, or every new file dropped into a
watched directory, oldest first) and tracks which were read in its checkpoint. Only the
file *paths* cross into Python: each Python worker opens its file and streams it through
Sepia's reader (`sepia.io.streams`), so a large file is parsed in bounded memory and the
reader's checks (time, order, lateness) are the same as in the local runtime.

One row per triple (the reader rejects elements with no triple). Terms stay
N-Triples text here; dictionary encoding happens in the stateful stage, whose dictionary
lives in Spark state (a global dictionary cannot be shared across Spark's workers without a
shuffle; hashing would risk silent collisions). Errors are rows too (`error` not null), so
one pass reports every bad element and loses no good one.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from itertools import islice
from pathlib import Path
from typing import BinaryIO, TextIO

import numpy as np
import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sepia.engine.codec import Codec
from sepia.engine.columnar import ColumnBatch
from sepia.engine.columnar.frontend import OutOfShape, named_chunks
from sepia.io.chunks import MAX_ELEMENT_SIZE
from sepia.io.streams import StreamError, read_stream
from sepia.rdf.stream import StreamElement
from sepia.runtime.spark.collection import paused_gc
from sepia.runtime.spark.elements import (
    ELEMENT_FIELDS,
    ELEMENT_SCHEMA,
    ElementRow,
    element_row,
    located,
)
from sepia.runtime.spark.splits import (
    PIECE_DDL,
    SEQ_STRIDE,
    Piece,
    PieceReader,
    lines_before,
    local_path,
    split_files,
)

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


RowOf = Callable[[str, int, StreamElement], ElementRow]
"""How an element read from a file (its file name, position) becomes an element row."""


@dataclass(frozen=True, slots=True)
class StreamSource:
    """A stream IRI bound to a stream file, or to a directory whose new files extend it."""

    stream: str
    path: Path


@dataclass(frozen=True, slots=True)
class IngestOptions:
    """Reader settings applied inside the workers."""

    allowed_lateness: int = 0
    max_element_size: int = MAX_ELEMENT_SIZE
    rows_per_batch: int = 65_536
    dead_letters: str | None = None
    """A folder every worker reaches: the rejected text of each document (file, message) with
    errors goes to a file of its own there, named after the stream and document, so a
    retried task rewrites the same file (`sinks.DeadLetterFile` gathers them)."""
    idle_timeout: float | None = None
    """Seconds after which a quiet live source lets time move on (sources.idle)."""


def file_paths(spark: SparkSession, sources: Iterable[StreamSource]) -> DataFrame:
    """The streaming DataFrame of (stream, path) rows of the files of `sources`, one new
    file per source and micro-batch, for a stage that reads them itself (`file_elements`)."""
    frames = [_file_source(spark, source) for source in sources]
    if not frames:
        raise ValueError("no stream to read")
    paths = frames[0]
    for frame in frames[1:]:
        paths = paths.unionByName(frame)
    return paths


def file_elements(
    stream: str,
    uri: str,
    options: IngestOptions,
    on_error: str,
    piece: Piece | None = None,
    row: RowOf = element_row,
) -> Iterator[tuple[ElementRow, StreamElement]]:
    """The elements of one stream file (or of one piece of it, `splits`) as element rows,
    each with the element as parsed (so a stage routing them parses nothing again). A bad
    element raises IngestError when `on_error` is "stop" and is skipped (to the dead-letter
    part, if any) when "skip"."""
    path = local_path(uri)
    name = file_name(path)
    errors: list[StreamError] = []
    if piece is not None and piece.begin == 0 and not piece.header:
        piece = None if piece.end >= path.stat().st_size else piece
    source = path.open("rb") if piece is None else io.BufferedReader(PieceReader(path, piece))
    first = 0 if piece is None else piece.index * SEQ_STRIDE
    with source:
        elements = read_stream(
            source, stream, name=name, on_error="skip", errors=errors.append,
            dead_letter=dead_letter_part(options.dead_letters, stream, name),
            allowed_lateness=options.allowed_lateness,
            max_element_size=options.max_element_size,
        )  # fmt: skip
        for seq, element in enumerate(elements, first):
            _stop_at(errors, on_error, path, piece)
            yield row(name, seq, element), element
        _stop_at(errors, on_error, path, piece)


def _stop_at(errors: list[StreamError], on_error: str, path: Path, piece: Piece | None) -> None:
    if errors and on_error == "stop":
        e = errors[0]
        shift = 0 if piece is None else lines_before(path, piece)
        raise located(e.file, e.line + shift, e.element, e.reason)


def file_pieces(paths: DataFrame, whole: bool = False) -> DataFrame:
    """(stream, path) rows -> rows of the files' pieces (`splits.PIECE_DDL`), spread over
    the session's cores, so the stage reading them parses one large file in parallel.
    `whole`: one piece per file, for a run that keeps dead letters (their comments give the
    file's line numbers, and a piece's reader counts lines from the piece's start)."""
    count = paths.sparkSession.sparkContext.defaultParallelism
    split = paths.mapInArrow(partial(split_files, count=1 if whole else count), PIECE_DDL)
    return split.repartition(count) if count > 1 else split


def piece_elements(
    batches: Iterable[pa.RecordBatch],
    options: IngestOptions,
    on_error: str,
    row: RowOf = element_row,
) -> Iterator[tuple[ElementRow, StreamElement]]:
    """The elements of each piece of `file_pieces`' rows, read and parsed once, each with
    its row as `row` makes it (N-Triples lines, or the route stage's term text); the
    collector paused meanwhile (`collection`: the route stage and the pass-through alike)."""
    with paused_gc():
        for batch in batches:
            for found in batch.to_pylist():
                piece = Piece(found["piece"], found["begin"], found["end"], found["header"])
                yield from file_elements(
                    found["stream"], found["path"], options, on_error, piece, row
                )


def piece_columns(
    uri: str, stream: str, piece: Piece, codec: Codec, predicates: Collection[str] | None
) -> Iterator[tuple[ColumnBatch, list[str]]]:
    """A piece of a TriG stream file read by the columnar reader (`frontend.named_chunks`,
    as a local run reads its files: text cut into terms by polars, the triples of
    `predicates` only, each distinct term encoded once into `codec`), each batch with its
    elements' graph names; raises `OutOfShape` (how many elements it gave) where the file
    leaves the shape that reader takes: the row reader (`file_elements`) reads the rest.
    The text is cut on a reading thread only where Spark gave the task more than one core
    (`task_cpus`)."""
    path = local_path(uri)
    if path.suffix != ".trig":
        raise OutOfShape(0)

    def opened() -> TextIO:
        return io.TextIOWrapper(io.BufferedReader(PieceReader(path, piece)), encoding="utf-8")

    ahead = task_cpus() > 1
    for batch, names in named_chunks(opened, stream, codec, predicates, ahead=ahead):
        yield batch, names.str.slice(1, names.str.len_chars() - 2).to_list()


def task_cpus() -> int:
    """The cores Spark gave the running task (`spark.task.cpus`; 1 outside a task). A
    route task reading ahead on a second thread used two cores where Spark counts one: on
    local[1] W6's route stage took 9.9-11.1 s with the thread and 11.9 s without, on
    local[2] (two tasks on two cores) 7.0-8.7 s with it and 6.6 s without. Where every
    core runs a task, the thread only competes with the other tasks."""
    context = TaskContext.get()
    return 1 if context is None else context.cpus()


def read_files(
    batches: Iterable[pa.RecordBatch], options: IngestOptions | None = None
) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: `file_pieces` rows in, their element rows out (`ELEMENT_DDL`), bad
    elements skipped: the reading and parsing of the job's route stage, no routing."""
    rows = (row for row, _ in piece_elements(batches, options or IngestOptions(), "skip"))
    while chunk := list(islice(rows, 4096)):
        yield pa.RecordBatch.from_pylist(
            [dict(zip(ELEMENT_FIELDS, row, strict=True)) for row in chunk], schema=ELEMENT_SCHEMA
        )


def _file_source(spark: SparkSession, source: StreamSource) -> DataFrame:
    """Spark's file source over one file (by glob filter on its folder) or a whole folder."""
    path = Path(os.path.abspath(source.path))  # not resolved: run.py reads files via links
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
    paths = file_paths(spark, sources)
    rows = paths.mapInArrow(lambda batches: parse_path_batches(batches, options), INGEST_DDL)
    return with_event_time(rows, options)


def with_event_time(rows: DataFrame, options: IngestOptions) -> DataFrame:
    """Ingest rows with `event_time` (the element's end) and a watermark trailing it.

    Abstract time units are read as milliseconds; the watermark trails by the allowed
    lateness, in the same units.
    """
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
            yield from _file_rows(stream, local_path(uri), options)


def _file_rows(stream: str, path: Path, options: IngestOptions) -> Iterator[pa.RecordBatch]:
    """Every row of one stream file: triples of good elements, and one row per error."""
    with path.open("rb") as handle:
        yield from source_batches(stream, handle, file_name(path), None, options)


def file_name(path: Path) -> str:
    """What errors, dead letters and the `file` column call a stream file: the file the
    user named, not the link in a folder of its own that run.py reads it through."""
    return str(path.resolve()) if path.is_symlink() else str(path)


def source_batches(
    stream: str, source: BinaryIO, name: str, fmt: str | None, options: IngestOptions
) -> Iterator[pa.RecordBatch]:
    """Ingest rows of one stream document (a file, a message) read from a binary object.

    `name` is what the `file` column and error messages call it; `fmt` (trig, nq) is needed
    when the name has no telling extension. Errors become rows, so every good element is kept.
    """
    errors: list[StreamError] = []
    columns = _Columns(stream, name)
    elements = read_stream(
        source,
        stream,
        name=name,
        fmt=fmt,
        on_error="skip",
        errors=errors.append,
        dead_letter=dead_letter_part(options.dead_letters, stream, name),
        allowed_lateness=options.allowed_lateness,
        max_element_size=options.max_element_size,
    )
    for seq, element in enumerate(elements):
        columns.add_element(seq, element)
        columns.add_errors(errors)
        if columns.size >= options.rows_per_batch:
            yield columns.take()
    columns.add_errors(errors)
    if columns.size:
        yield columns.take()


def dead_letter_part(folder: str | None, stream: str, name: str) -> Path | None:
    """Where a document's rejected text goes: one file per (stream, document), or nowhere."""
    if folder is None:
        return None
    digest = hashlib.sha1(f"{stream}\n{name}".encode()).hexdigest()[:24]
    return Path(folder) / f"{digest}{DEAD_LETTER_SUFFIX}"


DEAD_LETTER_SUFFIX = ".rejected"
ROW_COLUMNS = ("s", "p", "o")
"""Columns with a value per triple; every other column has one value per element or error."""
ELEMENT_COLUMNS = tuple(name for name in INGEST_SCHEMA.names if name not in ROW_COLUMNS)


class _Columns:
    """Ingest rows of one file, collected per element and expanded to rows by Arrow."""

    def __init__(self, stream: str, file: str) -> None:
        self.stream = stream
        self.file = file
        self._reset()

    def _reset(self) -> None:
        self.elements: list[tuple] = []  # one ELEMENT_COLUMNS tuple per element or error
        self.counts: list[int] = []  # how many rows each of them makes
        self.terms: tuple[list, list, list] = ([], [], [])
        self.size = 0

    def add_element(self, seq: int, element: StreamElement) -> None:
        triples = element.triples
        self.elements.append(
            (self.stream, self.file, seq, element.graph, element.start, element.end,
             element.kind.value, None, None)
        )  # fmt: skip
        self.counts.append(len(triples))
        self.size += len(triples)
        s, p, o = self.terms
        for t in triples:
            s.append(str(t.subject)), p.append(str(t.predicate)), o.append(str(t.object))

    def add_errors(self, errors: list[StreamError]) -> None:
        """Rows for the errors reported so far (then forgotten, so each is emitted once)."""
        for e in errors:
            self.elements.append(
                (self.stream, e.file, None, e.element, None, None, None, e.line, e.reason)
            )
            self.counts.append(1)
            self.size += 1
            for column in self.terms:
                column.append(None)
        errors.clear()

    def take(self) -> pa.RecordBatch:
        """The rows collected so far as one Arrow batch; the builder starts empty again."""
        rows = pa.array(np.repeat(np.arange(len(self.counts)), self.counts))
        per_element = dict(zip(ELEMENT_COLUMNS, zip(*self.elements, strict=True), strict=True))
        per_row = dict(zip(ROW_COLUMNS, self.terms, strict=True))
        arrays = [
            pa.array(per_row[f.name], f.type)
            if f.name in per_row
            else pa.array(per_element[f.name], f.type).take(rows)
            for f in INGEST_SCHEMA
        ]
        self._reset()
        return pa.RecordBatch.from_arrays(arrays, schema=INGEST_SCHEMA)
