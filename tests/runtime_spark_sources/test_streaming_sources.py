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

from sepia.runtime.spark.ingest import INGEST_SCHEMA
from sepia.runtime.spark.sources import source_for

from .events import NQUADS_DOCUMENTS, TRIG_DOCUMENTS, comparable, expected_rows

pytestmark = pytest.mark.spark

STREAM = "http://example.org/nearby"
DEADLINE = 60.0
MOSQUITTO = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin")
COLUMNS = [field.name for field in INGEST_SCHEMA]


def wait_for(condition: Callable[[], bool], what: str, deadline: float = DEADLINE) -> None:
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise TimeoutError(f"gave up after {deadline:.0f} s waiting for {what}")
        time.sleep(0.1)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def collect(
    spark: SparkSession, frame: DataFrame, name: str, checkpoint: Path, rows: int,
    available_now: bool = False, started: Callable[[], None] = lambda: None,
) -> list[tuple]:
    """Run `frame` into a memory table until it holds `rows` rows (or all, with availableNow)."""
    writer = frame.select(*COLUMNS).writeStream.format("memory").queryName(name)
    writer = writer.option("checkpointLocation", str(checkpoint))
    if available_now:
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination(DEADLINE)
    else:
        query = writer.trigger(processingTime="200 milliseconds").start()
        try:
            started()
            wait_for(lambda: spark.table(name).count() >= rows, f"{rows} rows from {name}")
        finally:
            query.stop()
    if query.exception():
        raise AssertionError(f"{name} failed: {query.exception()}")
    return [tuple(row) for row in spark.table(name).collect()]


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
    """A Mosquitto broker on loopback, its log in a file; stopped at the end."""
    port, log = free_port(), tmp_path / "mosquitto.log"
    config = tmp_path / "mosquitto.conf"
    config.write_text(
        f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
        "log_dest stderr\nlog_type all\n"
    )
    with log.open("wb") as log_file:
        broker = subprocess.Popen([MOSQUITTO, "-c", str(config)], stderr=log_file)
    try:
        wait_for(lambda: _accepts(port), "the broker to listen", deadline=10)
        yield port, log
    finally:
        broker.terminate()
        broker.wait(10)


def _accepts(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_socket_source_reads_blank_line_separated_nquads(spark: SparkSession, tmp_path: Path):
    with tcp_server(NQUADS_DOCUMENTS) as (port, _):
        source = f"tcp://127.0.0.1:{port}"
        frame = source_for(spark, STREAM, f"{source}?format=nquads")
        rows = collect(spark, frame, "socket_rows", tmp_path / "ck", rows=4)
    assert {row[0] for row in rows} == {STREAM}
    assert {comparable(row) for row in rows} == expected_rows(source, error_line=1)
    assert len(rows) == 4


@pytest.mark.skipif(MOSQUITTO is None, reason="no mosquitto binary (scripts/install-mosquitto)")
def test_mqtt_source_reads_each_message_as_a_trig_document(spark: SparkSession, tmp_path: Path):
    with mosquitto(tmp_path) as (port, log):
        source = f"mqtt://127.0.0.1:{port}/sepia/nearby"

        def publish_once_subscribed() -> None:
            wait_for(lambda: "Received SUBSCRIBE" in log.read_text(), "the subscription")
            messages = [{"topic": "sepia/nearby", "payload": d, "qos": 1} for d in TRIG_DOCUMENTS]
            publish.multiple(messages, hostname="127.0.0.1", port=port)

        frame = source_for(spark, STREAM, source)
        rows = collect(spark, frame, "mqtt_rows", tmp_path / "ck", rows=4,
                       started=publish_once_subscribed)
    assert {row[0] for row in rows} == {STREAM}
    assert {comparable(row) for row in rows} == expected_rows(source, error_line=3)
    assert len(rows) == 4


@pytest.mark.parametrize("spec", ["gen:W4?scale=12&seed=5&rate=1000", "file"])
def test_replayable_sources_give_every_element_once(
    spark: SparkSession, tmp_path: Path, spec: str
) -> None:
    """The generator's W4 (12 trades of 5 triples, element n = event/e{n}) and the same data
    through ingest's file source give the same rows."""
    generated = f"gen:W4?scale=12&seed=5&cache={tmp_path / 'gen'}"
    if spec == "file":
        from sepia.runtime.spark.sources.generator import generated as build

        _, directory = build("W4", 12, 5, tmp_path / "gen")
        spec = str(directory / "streams" / "stocks.trig")
    frame = source_for(spark, STREAM, spec if spec.endswith(".trig") else generated)
    rows = collect(spark, frame, f"replay_{len(spec)}", tmp_path / "ck", rows=60,
                   available_now=True)
    assert len(rows) == 60
    by_element = {(row[2], row[3]) for row in rows}
    assert by_element == {(n, f"http://stockmarket.org/event/e{n}") for n in range(12)}
    assert {row[0] for row in rows} == {STREAM}
    assert all(row[11] is None for row in rows)
