"""Kafka: each record's value is a TriG or N-Quads document, parsed like any pushed document.

Spark's own Kafka source (the `spark-sql-kafka-0-10` connector, which a cluster adds with
`--packages`) reads the records and tracks offsets in the checkpoint; Kafka keeps history,
so a restarted query replays its unfinished batch and the file sink stays exactly-once.
`kafka_rows` turns any DataFrame with the Kafka source's columns into ingest rows, so users
with their own Kafka settings (security, many topics) build the reader themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import groupby

import pyarrow as pa
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sepia.io.sources import stream_format
from sepia.runtime.spark.ingest import INGEST_DDL, IngestOptions, with_event_time
from sepia.runtime.spark.session import SparkUnavailable
from sepia.runtime.spark.sources.documents import document_batches

CONNECTOR = "org.apache.spark:spark-sql-kafka-0-10_2.13"


def kafka_rows(
    records: DataFrame, stream_iri: str, fmt: str = "trig", options: IngestOptions | None = None
) -> DataFrame:
    """Ingest rows (with event time and watermark) of a Kafka DataFrame's record values;
    document names are `kafka://TOPIC/PARTITION#OFFSET`."""
    options = options or IngestOptions()
    stream_format("", fmt)  # a bad format fails here, not in every task
    messages = records.where(F.col("value").isNotNull())  # tombstones carry no document
    messages = messages.select("topic", "partition", "offset", "value")
    rows = messages.mapInArrow(
        lambda batches: record_batches(batches, stream_iri, fmt, options), INGEST_DDL
    )
    return with_event_time(rows, options)


def record_batches(
    batches: Iterable[pa.RecordBatch], stream: str, fmt: str, options: IngestOptions
) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: (topic, partition, offset, value) records in, ingest rows out."""
    for batch in batches:
        records = zip(*(batch.column(name).to_pylist() for name in batch.schema.names), strict=True)
        for (topic, partition), run in groupby(records, key=lambda r: (r[0], r[1])):
            documents = [(offset, value) for _, _, offset, value in run]
            source = f"kafka://{topic}/{partition}"
            yield from document_batches(stream, source, documents, fmt, options)


def kafka_source(
    spark: SparkSession,
    stream_iri: str,
    kafka_options: dict[str, str],
    fmt: str,
    options: IngestOptions,
) -> DataFrame:
    """Spark's Kafka source with `kafka_options`, parsed; a clear error without the jar."""
    try:
        records = spark.readStream.format("kafka").options(**kafka_options).load()
    except AnalysisException as error:
        if "kafka" not in str(error).lower():
            raise
        raise SparkUnavailable(
            f"Spark's Kafka connector is not on the classpath: run with --packages "
            f"{CONNECTOR}:{spark.version} (spark.jars.packages); see docs/spark.md"
        ) from error
    return kafka_rows(records, stream_iri, fmt, options)
