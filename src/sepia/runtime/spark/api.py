"""Sepia inside an existing Spark pipeline: a query over your streaming DataFrames.

```python
results = continuous_query(spark, query_text, {"http://example.org/trades": trades})
results.writeStream.foreachBatch(handle).start()
```

Each stream DataFrame has one row per triple: `element` (the element's graph name),
`start` and `end` (its time, integers: abstract units or epoch milliseconds), `s`, `p`, `o`
(terms in N-Triples syntax); optionally `kind` ("abstract", the default, or "dateTime"),
`file` and `seq` (where the element comes from: they order equal times), and `event_time`
with a watermark (without it, Sepia adds `event_time` = `end` and a watermark with no
lateness). The rows of one element must be consecutive in one partition, as Sepia's own
sources produce them (`sepia.runtime.spark.sources.source_for` gives such DataFrames).
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyoxigraph as ox
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from sepia.lang import parse_query
from sepia.runtime.spark.host import DEFAULT_ENGINE, job_spec
from sepia.runtime.spark.ingest import INGEST_SCHEMA, IngestOptions, with_event_time
from sepia.runtime.spark.job import results_frame
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
) -> DataFrame:
    """The streaming DataFrame of the query's results over `streams` (stream IRI -> rows).

    Columns: `t` (evaluation time), `query` (= `name`), `line` (the io.md jsonl line), and
    `query_index`, `partition`, `seq`: sorting a micro-batch by t and these three gives the
    reference evaluator's order. A result is emitted once the watermark of every stream has
    passed its t; see docs/spark.md for ending a finite input. `buckets`: keys a PARTITION
    BY query is spread over (None: twice the default parallelism; keep it fixed across
    restarts from one checkpoint).
    """
    spark.conf.set(STATE_STORE, ROCKSDB)  # keyed state needs it (architecture.md)
    units = units_of([(name, parse_query(query_text))])
    spec = job_spec(units, background, engine=engine, rdfs=rdfs, on_error="skip",
                    streams=tuple(streams), buckets=buckets)  # fmt: skip
    frames = [ingest_rows(iri, frame) for iri, frame in streams.items()]
    return results_frame(frames, spec)


def ingest_rows(stream: str, frame: DataFrame) -> DataFrame:
    """A user's stream DataFrame as Sepia's ingest rows of stream `stream`, with a watermark."""
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
        return frame.select(*columns, "event_time")
    return with_event_time(frame.select(*columns), IngestOptions())
