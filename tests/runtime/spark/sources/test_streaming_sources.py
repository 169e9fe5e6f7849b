"""Each source as a Spark stream: what arrives is exactly the ingest rows it must give.

Push sources (a loopback TCP server, a Mosquitto broker started here) run under a short
processing-time trigger and are read until their rows are in or a deadline passes; the
replayable sources (generator, file) run with `availableNow`.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from paho.mqtt import publish
from pyspark.sql import DataFrame, SparkSession

from sepia.runtime.spark.ingest import INGEST_DDL, INGEST_SCHEMA
from sepia.runtime.spark.sources import kafka_rows, source_for
from sepia.runtime.spark.sources.generator import ranged

from .events import NQUADS_DOCUMENTS, TRIG_DOCUMENTS, comparable, expected_rows

pytestmark = pytest.mark.spark

STREAM = "http://example.org/nearby"
DEADLINE = 180.0  # only a failing run waits this long; a loaded 2-core CI needs more than 60 s
MOSQUITTO = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin")
COLUMNS = [field.name for field in INGEST_SCHEMA]


def wait_for(condition: Callable[[], bool], what: str, deadline: float = DEADLINE) -> None:
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise TimeoutError(f"gave up after {deadline:.0f} s waiting for {what}")
        time.sleep(0.25)


def free_port() -> int:
    """A port free now: only for a process that binds it itself and is retried if it is
    taken meanwhile (``mosquitto``); a server of the test's own binds port 0."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def collect(
    spark: SparkSession, frame: DataFrame, folder: Path, rows: int,
    available_now: bool = False, started: Callable[[], None] = lambda: None,
) -> list[tuple]:
    """Run `frame` into a Parquet file sink under `folder` (exactly-once, restartable) until
    it holds `rows` rows, or to the end with availableNow; every row the sink holds."""
    out = folder / "out"
    writer = frame.select(*COLUMNS).writeStream.format("parquet").option("path", str(out))
    writer = writer.option("checkpointLocation", str(folder / "checkpoint"))
    if available_now:
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination(DEADLINE)
    else:
        query = writer.trigger(processingTime="200 milliseconds").start()
        try:
            started()
            wait_for(lambda: len(written(spark, out)) >= rows, f"{rows} rows in {out}")
        finally:
            query.stop()
    if query.exception():
        raise AssertionError(f"the query failed: {query.exception()}")
    return written(spark, out)


def written(spark: SparkSession, out: Path) -> list[tuple]:
    """The rows of the committed batches of a file sink (none before its first batch)."""
    if not (out / "_spark_metadata").exists():
        return []
    return [tuple(row) for row in spark.read.schema(INGEST_DDL).parquet(str(out)).collect()]


@contextlib.contextmanager
def tcp_server(documents: tuple[str, ...]) -> Iterator[tuple[int, threading.Event]]:
    """A loopback server that, once the source connects, sends the documents and hangs up."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(DEADLINE)
    sent = threading.Event()

    def serve() -> None:
        connection, _ = server.accept()
        with connection:
            connection.sendall("\n".join(documents).encode())  # one blank line between each
        sent.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], sent
    finally:
        server.close()
        thread.join(5)


@contextlib.contextmanager
def mosquitto(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A Mosquitto broker on loopback, its log in a file; stopped at the end.

    The broker binds its port itself: a port free a moment ago may be taken by another
    process before the broker binds it, so a broker that says "Address already in use" is
    started again on another port, and the broker is ready when its log says it runs (not
    when the port accepts, which another process's listener would do too)."""
    log, config = tmp_path / "mosquitto.log", tmp_path / "mosquitto.conf"
    for _ in range(5):
        port = free_port()
        config.write_text(
            f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
            "log_dest stderr\nlog_type all\n"
        )
        with log.open("wb") as log_file:
            broker = subprocess.Popen([MOSQUITTO, "-c", str(config)], stderr=log_file)
        wait_for(lambda b=broker: b.poll() is not None or " running" in log.read_text(),
                 "the broker to run or fail", deadline=60)  # fmt: skip
        if broker.poll() is None:
            break
        assert "Address already in use" in log.read_text(), log.read_text()
    else:
        raise AssertionError("no free port for mosquitto in 5 tries")
    try:
        yield port, log
    finally:
        broker.terminate()
        broker.wait(10)


def test_socket_source_reads_blank_line_separated_nquads(spark: SparkSession, tmp_path: Path):
    with tcp_server(NQUADS_DOCUMENTS) as (port, _):
        source = f"tcp://127.0.0.1:{port}"
        frame = source_for(spark, STREAM, f"{source}?format=nquads")
        rows = collect(spark, frame, tmp_path, rows=4)
    assert {row[0] for row in rows} == {STREAM}
    assert {comparable(row) for row in rows} == expected_rows(source, error_line=1)
    assert len(rows) == 4


@pytest.mark.skipif(MOSQUITTO is None, reason="no mosquitto binary (scripts/install-mosquitto)")
def test_mqtt_messages_are_trig_documents_and_a_restart_continues(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Two messages, then the query stops; a third is published while none runs, the broker
    keeps it for the persistent session (client_id), and the restarted query gets it as #2."""
    with mosquitto(tmp_path) as (port, log):
        source = f"mqtt://127.0.0.1:{port}/sepia/nearby"

        def send(documents: tuple[str, ...]) -> None:
            messages = [{"topic": "sepia/nearby", "payload": d, "qos": 1} for d in documents]
            publish.multiple(messages, hostname="127.0.0.1", port=port)

        def send_two_once_subscribed() -> None:
            wait_for(lambda: "Received SUBSCRIBE" in log.read_text(), "the subscription")
            send(TRIG_DOCUMENTS[:2])

        def run(rows: int, started: Callable[[], None] = lambda: None) -> list[tuple]:
            frame = source_for(spark, STREAM, f"{source}?client_id=sepia-test")
            return collect(spark, frame, tmp_path, rows, started=started)

        assert len(run(3, started=send_two_once_subscribed)) == 3
        send(TRIG_DOCUMENTS[2:])
        rows = run(4)
    assert {row[0] for row in rows} == {STREAM}
    assert {comparable(row) for row in rows} == expected_rows(source, error_line=3)
    assert len(rows) == 4


def test_the_generator_gives_the_generated_file_once(spark: SparkSession, tmp_path: Path):
    """W4 at scale 12 (stocks.write_trades: element n is event/e{n}, 5 triples each) through
    the generator (its range rows read as the route stage reads them), and its generated
    file through ingest's file source: the same rows."""
    cache = tmp_path / "gen"
    spec = f"gen:W4?scale=12&seed=5&rate=1000&cache={cache}"
    generated = source_for(spark, STREAM, spec).mapInArrow(ranged, INGEST_DDL)
    rows = collect(spark, generated, tmp_path / "gen-run", rows=60, available_now=True)
    assert len(rows) == 60
    assert {(row[2], row[3]) for row in rows} == {
        (n, f"http://stockmarket.org/event/e{n}") for n in range(12)
    }
    assert {(row[0], row[1]) for row in rows} == {(STREAM, spec)}
    assert all(row[11] is None for row in rows)

    stocks = next(cache.glob("W4-s12-seed5-*")) / "streams" / "stocks.trig"
    from_file = source_for(spark, STREAM, str(stocks))
    file_rows = collect(spark, from_file, tmp_path / "file-run", rows=60, available_now=True)
    without_file = lambda table: sorted((r[0], *r[2:]) for r in table)  # noqa: E731
    assert without_file(file_rows) == without_file(rows)


def test_kafka_record_values_are_parsed_as_documents(spark: SparkSession) -> None:
    """Records shaped like Spark's Kafka source's (no connector jar here), a tombstone too."""
    values = [doc.encode() for doc in TRIG_DOCUMENTS] + [None]
    records = spark.createDataFrame(
        [("nearby", 0, offset, value) for offset, value in enumerate(values)],
        "topic string, partition int, offset long, value binary",
    )
    rows = [tuple(row) for row in kafka_rows(records, STREAM).select(*COLUMNS).collect()]
    assert {comparable(row) for row in rows} == expected_rows("kafka://nearby/0", error_line=3)
    assert len(rows) == 4


def test_kafka_without_its_connector_says_how_to_add_it(spark: SparkSession) -> None:
    jar = r"--packages org\.apache\.spark:spark-sql-kafka-0-10_2\.13:4\.\d"
    with pytest.raises(RuntimeError, match=jar):
        source_for(spark, STREAM, "kafka://localhost:9092/nearby")
