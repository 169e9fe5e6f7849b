"""Sepia inside an existing Spark pipeline: a query over your streaming DataFrames.

```python
results = continuous_query(spark, query_text, {"http://example.org/trades": trades})
results.writeStream.foreachBatch(each_batch(handle)).start()  # handle(results, batch_id)
table = result_table(results, {"c": "string", "p2": "double"})  # a column per variable
```

A finite input ends by itself with `end_of_input=FOLDER` and `run_to_end(writer, FOLDER)`:
once the sources have given everything, a marker moves every stream's watermark past the
last results, which then leave (see `run_to_end`).

Each stream DataFrame has one row per triple: `element` (the element's graph name),
`start` and `end` (its time, integers: abstract units or epoch milliseconds), `s`, `p`, `o`
(terms in N-Triples syntax); optionally `kind` ("abstract", the default, or "dateTime"),
`file` and `seq` (where the element comes from: they order equal times), and `event_time`
with a watermark (without it, Sepia adds `event_time` = `end` and a watermark with no
lateness). The rows of one element must be consecutive in one partition, as Sepia's own
sources produce them (`sepia.runtime.spark.sources.source_for` gives such DataFrames).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path

import pyarrow as pa
import pyoxigraph as ox
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

from sepia.lang import parse_query
from sepia.rdf.results import Result, result_from_json
from sepia.rdf.terms import Term, term_to_nt
from sepia.runtime.spark.host import DEFAULT_ENGINE, FLUSH_TIMER, job_spec
from sepia.runtime.spark.ingest import INGEST_DDL, INGEST_SCHEMA, IngestOptions, with_event_time
from sepia.runtime.spark.job import END_GRAPH, END_TIME, end_folder, results_frame
from sepia.runtime.spark.progress import epoch_ms
from sepia.runtime.spark.sinks import sorted_lines
from sepia.runtime.spark.units import units_of

REQUIRED = ("element", "start", "end", "s", "p", "o")
STATE_STORE = "spark.sql.streaming.stateStore.providerClass"
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"


def continuous_query(
    spark: SparkSession,
    query_text: str,
    streams: Mapping[str, DataFrame],
    background: ox.Store | None = None,
    *,
    name: str = "query",
    rdfs: bool = False,
    engine: str = DEFAULT_ENGINE,
    buckets: int | None = None,
    end_of_input: Path | None = None,
) -> DataFrame:
    """The streaming DataFrame of the query's results over `streams` (stream IRI -> rows).

    Columns: `t` (evaluation time), `query` (= `name`), `line` (the io.md jsonl line), and
    `query_index`, `partition`, `seq`: sorting a micro-batch by t, these three and the
    line gives the reference evaluator's order. A result is emitted once the watermark of
    every stream has passed its t; see docs/spark.md for ending a finite input. `buckets`:
    keys a PARTITION BY query is spread over (None: one per core, at least two; keep it
    fixed across restarts from one checkpoint). `end_of_input`: a folder of the caller's
    (keep it with the checkpoint) where `run_to_end` drops each stream's end-of-input
    marker; each stream DataFrame then must not bring its own `event_time`.
    """
    spark.conf.set(STATE_STORE, ROCKSDB)  # keyed state needs it (architecture.md)
    units = units_of([(name, parse_query(query_text))])
    spec = job_spec(units, background, engine=engine, rdfs=rdfs, on_error="skip",
                    streams=tuple(streams), buckets=buckets)  # fmt: skip
    frames = [
        ingest_rows(iri, frame, None if end_of_input is None else end_rows(spark, end_of_input, n))
        for n, (iri, frame) in enumerate(streams.items())
    ]
    return results_frame(frames, spec)


def end_rows(spark: SparkSession, end_of_input: Path, position: int) -> DataFrame:
    """The rows of the end-of-input marker of the stream at `position`, once `run_to_end`
    has dropped it (JSON ingest rows in a folder of their own)."""
    folder = end_folder(end_of_input, position)
    return spark.readStream.schema(INGEST_DDL).json(str(folder))


def run_to_end(
    writer: DataStreamWriter, end_of_input: Path, poll_seconds: float = 0.2
) -> StreamingQuery:
    """Run a query over finite input to its last result, then stop it and return it.

    `writer` is any sink's writer of a `continuous_query(..., end_of_input=end_of_input)`
    (with its checkpoint, if it needs one). It runs with a short processing-time trigger
    until its sources have nothing more; then each stream's end-of-input marker is dropped,
    whose time moves the watermark past every key's flush timer, and the query stops after
    the batch that flushed them. One query from start to end, so a memory sink keeps every
    row. A Spark error is raised as `StreamingQueryException`.
    """
    query = writer.trigger(processingTime=f"{round(poll_seconds * 1000)} milliseconds").start()
    try:
        _wait(query, poll_seconds, lambda: _idle(query))
        for folder in sorted((end_of_input / "end-of-input").iterdir()):
            _mark_end_rows(folder)
        _wait(query, poll_seconds, lambda: _idle(query) and _flushed(query))
    finally:
        query.stop()
    query.awaitTermination()  # raises the query's error, if it failed
    return query


IDLE_MESSAGES = ("Waiting for data to arrive", "Waiting for next trigger")
"""Spark's status messages between triggers. The first lasts only its polling delay (10 ms)
after a trigger that found nothing; the second follows it until the next trigger."""


def _wait(query: StreamingQuery, poll_seconds: float, done: Callable[[], bool]) -> None:
    while not done():
        if query.awaitTermination(poll_seconds):
            return  # ended (failed): run_to_end raises its error


def _idle(query: StreamingQuery) -> bool:
    """The last trigger found nothing new and none is running: every source has given what
    it has. Told by `isDataAvailable`, which a trigger sets and the next one resets, not by
    the "Waiting for data to arrive" message alone: that one holds for 10 ms of each
    trigger interval, and a poll as often as the trigger could miss it for a minute or
    for ever (the API's tests took 20-70 s and once hung). Before the first trigger, the
    message is "Initializing sources"."""
    status = query.status
    return (
        status["message"] in IDLE_MESSAGES
        and not status["isDataAvailable"]
        and not status["isTriggerActive"]
    )


def _flushed(query: StreamingQuery) -> bool:
    """A batch has run with the watermark past the flush timer (the timers fired)."""
    progress = query.lastProgress
    watermark = (progress or {}).get("eventTime", {}).get("watermark")
    return watermark is not None and epoch_ms(watermark) > FLUSH_TIMER


def _mark_end_rows(folder: Path) -> None:
    """The end-of-input marker as one JSON ingest row (once: a restart finds it there)."""
    marker = folder / "end.json"
    if marker.exists():
        return
    row = {"stream": "", "file": END_GRAPH, "seq": 0, "element": END_GRAPH, "start": END_TIME,
           "end": END_TIME, "kind": "abstract", "s": f"<{END_GRAPH}>",
           "p": f"<{END_GRAPH}>", "o": f"<{END_GRAPH}>"}  # fmt: skip
    partial_file = folder / ".end.json.tmp"
    partial_file.write_text(json.dumps(row) + "\n", encoding="utf-8")
    partial_file.rename(marker)


def ingest_rows(stream: str, frame: DataFrame, ends: DataFrame | None = None) -> DataFrame:
    """A user's stream DataFrame as Sepia's ingest rows of stream `stream`, with a watermark
    (`ends`: the stream's end-of-input rows, watermarked with it)."""
    missing = [name for name in REQUIRED if name not in frame.columns]
    if missing:
        raise ValueError(f"the DataFrame of <{stream}> lacks the columns {missing}")
    defaults: dict[str, Column] = {
        "stream": F.lit(stream),
        "file": F.lit(stream),
        "seq": F.lit(0),
        "kind": F.lit("abstract"),
        "line": F.lit(None),
        "error": F.lit(None),
    }
    columns = [
        (F.col(field.name) if field.name in frame.columns and field.name != "stream"
         else defaults[field.name]).cast("bigint" if pa.types.is_integer(field.type) else "string")
        .alias(field.name)
        for field in INGEST_SCHEMA
    ]  # fmt: skip
    if "event_time" in frame.columns:
        if ends is not None:
            raise ValueError(
                f"the DataFrame of <{stream}> brings its own event_time: its watermark is "
                "yours, so end_of_input cannot move it; add the end-of-input row yourself"
            )
        return frame.select(*columns, "event_time")
    rows = frame.select(*columns)
    if ends is not None:
        rows = rows.unionByName(ends.withColumn("stream", F.lit(stream)))
    return with_event_time(rows, IngestOptions())


def each_batch(handle: Callable[[list[Result], int], None]) -> Callable[[DataFrame, int], None]:
    """A `foreachBatch` function that hands `handle` each micro-batch's results, in the
    reference evaluator's order, with the batch id. After a restart Spark may run the last
    batch again with the same id and the same results: skip ids already handled."""

    def batch(frame: DataFrame, batch_id: int) -> None:
        handle([result_from_json(json.loads(line)) for line in sorted_lines(frame)], batch_id)

    return batch


META = ("t", "query", "op", "from", "to")
META_DDL = "t bigint, query string, op string, `from` bigint, `to` bigint"


def result_table(results: DataFrame, variables: Sequence[str] | Mapping[str, str]) -> DataFrame:
    """The results as a table: t, query, op, from, to (the match's interval, else null) and
    a column per variable holding its value (an IRI, a literal's lexical form, `_:label`;
    null where unbound), cast to the Spark type `variables` maps it to (a sequence: all
    strings). Times are abstract units, or epoch milliseconds for xsd:dateTime streams."""
    types = (
        dict(variables) if isinstance(variables, Mapping) else dict.fromkeys(variables, "string")
    )
    clash = set(types) & set(META)
    if clash:
        raise ValueError(f"variables {sorted(clash)} clash with the columns {META}")
    ddl = ", ".join([META_DDL, *(f"`{name}` string" for name in types)])
    rows = results.select("line").mapInArrow(partial(_table_rows, names=list(types)), ddl)
    return rows.select(*META, *(F.col(f"`{n}`").cast(kind).alias(n) for n, kind in types.items()))


def _table_rows(batches: Iterable[pa.RecordBatch], names: list[str]) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: result lines in, META columns and each variable's value out."""
    for batch in batches:
        results = [result_from_json(json.loads(line)) for line in batch.column("line").to_pylist()]
        columns = {
            "t": [r.t for r in results],
            "query": [r.query for r in results],
            "op": [r.op for r in results],
            "from": [r.interval[0] if r.interval else None for r in results],
            "to": [r.interval[1] if r.interval else None for r in results],
        }
        for name in names:
            columns[name] = [_value(r.values.get(name)) for r in results]
        yield pa.RecordBatch.from_pydict(
            columns,
            schema=pa.schema(
                [("t", pa.int64()), ("query", pa.string()), ("op", pa.string()),
                 ("from", pa.int64()), ("to", pa.int64())]
                + [(name, pa.string()) for name in names]
            ),
        )  # fmt: skip


def _value(term: Term | None) -> str | None:
    """A term as a table cell: IRIs and literals by their value, others in N-Triples."""
    if term is None:
        return None
    if isinstance(term, ox.NamedNode | ox.Literal):
        return term.value
    return term_to_nt(term)
