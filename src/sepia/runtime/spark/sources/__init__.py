"""Where a stream's elements come from: `--stream IRI=SPEC` -> a streaming DataFrame of ingest rows.

SPEC is a stream file or watched directory (ingest's file source), `mqtt://host:port/topic`,
`tcp://host:port`, `gen:WORKLOAD?rate=N&seed=S&scale=K` (or `speed=X` for `rate=N`: paced
by event time), or `kafka://brokers/topic` (Spark's
Kafka connector, which this machine cannot download: untested here). Every source yields rows of
`INGEST_SCHEMA` with the same `event_time` watermark, so the pipeline after it treats all
sources alike. With `IngestOptions.idle_timeout`, a quiet MQTT, socket or generator source
lets time move on with the clock (`idle`); Spark's Kafka source is Spark's own and cannot.
The non-file sources are Spark Python data sources (docs/spark.md, Sources).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import DataSource

from sepia.runtime.spark.ingest import IngestOptions, StreamSource, stream_rows, with_event_time
from sepia.runtime.spark.sources.generator import GeneratorSource, pace_of
from sepia.runtime.spark.sources.kafka import kafka_rows, kafka_source
from sepia.runtime.spark.sources.mqtt import DEFAULT_PORT, MqttSource
from sepia.runtime.spark.sources.tcp import SocketSource

# The query parameters each scheme takes, and the data source option each one sets.
PARAMETERS: dict[str, dict[str, str]] = {
    "mqtt": {"qos": "qos", "format": "format", "client_id": "clientId"},
    "tcp": {"format": "format"},
    "kafka": {
        "format": "format",
        "startingOffsets": "startingOffsets",
        "maxOffsetsPerTrigger": "maxOffsetsPerTrigger",
        "failOnDataLoss": "failOnDataLoss",
    },
    "gen": {
        "rate": "rate",
        "speed": "speed",
        "seed": "seed",
        "scale": "scale",
        "stream": "workloadStream",
        "cache": "cache",
    },
}
DATA_SOURCES: dict[str, type[DataSource]] = {
    "mqtt": MqttSource,
    "tcp": SocketSource,
    "gen": GeneratorSource,
}


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """A parsed non-file SPEC: which data source, and its options."""

    scheme: str
    options: dict[str, str]


def parse_spec(spec: str) -> SourceSpec | None:
    """The data source a SPEC names, or None for a path; ValueError for a bad address."""
    scheme = spec.split(":", 1)[0].lower() if ":" in spec else ""
    if scheme not in PARAMETERS:
        return None
    parts = urlsplit(spec, allow_fragments=False)  # `#` is MQTT's multi-level wildcard
    options = _parameters(scheme, parts.query, spec)
    if scheme == "gen":
        if not parts.path:
            raise ValueError(f"{spec!r}: say which workload, e.g. gen:W4?rate=100")
        try:
            pace_of(options)
        except ValueError as error:
            raise ValueError(f"{spec!r}: {error}") from None
        return SourceSpec(scheme, {"workload": parts.path, "name": spec, **options})
    if not parts.hostname:
        raise ValueError(f"{spec!r}: no host")
    return SourceSpec(scheme, _address(scheme, parts, spec) | options)


def _address(scheme: str, parts: SplitResult, spec: str) -> dict[str, str]:
    """Where a network source connects, as its data source's options."""
    topic = unquote(parts.path.removeprefix("/"))
    if scheme != "tcp" and not topic:
        raise ValueError(f"{spec!r}: no topic, e.g. {scheme}://localhost/sensors")
    if scheme == "kafka":  # the address may list several brokers: host:port,host:port
        return {"kafka.bootstrap.servers": parts.netloc, "subscribe": topic}
    if scheme == "mqtt":
        return {"host": parts.hostname, "port": str(parts.port or DEFAULT_PORT), "topic": topic}
    if parts.port is None:
        raise ValueError(f"{spec!r}: no port, e.g. tcp://localhost:9999")
    return {"host": parts.hostname, "port": str(parts.port)}


def _parameters(scheme: str, query: str, spec: str) -> dict[str, str]:
    known = PARAMETERS[scheme]
    options = {}
    for key, value in parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)):
        if key not in known:
            takes = ", ".join(known)
            raise ValueError(f"{spec!r}: unknown parameter {key!r}; {scheme} takes {takes}")
        options[known[key]] = value
    return options


def source_for(
    spark: SparkSession, stream_iri: str, spec: str, options: IngestOptions | None = None
) -> DataFrame:
    """The streaming DataFrame of ingest rows (with `event_time` and its watermark) of one
    `--stream IRI=SPEC`."""
    options = options or IngestOptions()
    parsed = parse_spec(spec)
    if parsed is None:
        return stream_rows(spark, [StreamSource(stream_iri, Path(spec))], options)
    if parsed.scheme == "kafka":
        kafka_options = dict(parsed.options)
        fmt = kafka_options.pop("format", "trig")
        return kafka_source(spark, stream_iri, kafka_options, fmt, options)
    data_source = DATA_SOURCES[parsed.scheme]
    spark.dataSource.register(data_source)
    more = {} if options.idle_timeout is None else {"idleTimeout": str(options.idle_timeout)}
    if parsed.scheme == "gen":  # a batch is read by as many tasks as the session has cores
        more["cores"] = str(spark.sparkContext.defaultParallelism)
    rows = (
        spark.readStream.format(data_source.name())
        .options(**parsed.options)
        .option("stream", stream_iri)
        .option("allowedLateness", str(options.allowed_lateness))
        .options(**more)
        .load()
    )
    return with_event_time(rows, options)


__all__ = ["SourceSpec", "kafka_rows", "parse_spec", "source_for"]
