"""E1 (shops and coupons) live: both streams' elements published one per MQTT message to a
Mosquitto broker on loopback, the Spark job subscribed to both topics; its output is the
reference evaluator's answer on E1's stream files."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from paho.mqtt import publish
from pyspark.sql import SparkSession

from runtime.spark.engine.examples import example
from runtime.spark.evaluations import evaluations
from runtime.spark.sources.test_streaming_sources import MOSQUITTO, mosquitto, wait_for
from sepia.io.streams import read_stream
from sepia.io.writers import time_literal
from sepia.rdf.stream import StreamElement
from sepia.runtime.spark.job import END_MARKER
from sepia.runtime.spark.run import SparkRunOptions, run_on_spark

pytestmark = [
    pytest.mark.spark,  # a live job: 102 s at load 10 on 2 cores (43 s more to start a session)
    pytest.mark.skipif(MOSQUITTO is None, reason="no mosquitto (scripts/install-mosquitto)"),
]
PROV_TIME = "<http://www.w3.org/ns/prov#generatedAtTime>"
DEADLINE = 600.0
"""Seconds the job may take to subscribe, take a message in, or give its results on a loaded
2-core machine (a full suite beside it); only a failing run waits this long."""


def rows_in(spark: SparkSession) -> int:
    """The input rows of the job's finished micro-batches (Spark's progress reports)."""
    return sum(
        json.loads(progress.json)["numInputRows"]
        for query in spark.streams.active
        for progress in query.recentProgress
    )


def document(element: StreamElement) -> str:
    """One element as a TriG message (io.md's stream format)."""
    triples = " ".join(f"{t.subject} {t.predicate} {t.object} ." for t in element.triples)
    graph, time = f"<{element.graph}>", time_literal(element.end, element.kind)
    return f"{graph} {{ {triples} }}\n{graph} {PROV_TIME} {time} .\n"


def test_elements_published_on_mqtt_give_the_reference_answer(
    spark: SparkSession, tmp_path: Path
) -> None:
    e1 = example("e1-shops-coupons")
    expected = e1.reference_lines()
    elements = sorted(
        ((e, iri) for iri, path in e1.bindings.items() for e in read_stream(Path(path), iri)),
        key=lambda pair: pair[0].end,
    )
    out = tmp_path / "out.jsonl"
    failures: list[BaseException] = []
    with mosquitto(tmp_path) as (port, log):
        topics = {iri: "e1/" + iri.rsplit("/", 1)[1] for iri in e1.bindings}
        bindings = {iri: f"mqtt://127.0.0.1:{port}/{topic}" for iri, topic in topics.items()}

        def run() -> None:
            try:
                run_on_spark(
                    e1.queries, bindings, e1.data, SparkRunOptions(trigger_seconds=0.2),
                    output=str(out), spark=spark,
                )  # fmt: skip
            except BaseException as error:  # reported by the test thread
                failures.append(error)

        job = threading.Thread(target=run, daemon=True)
        job.start()
        try:
            wait_for(lambda: log.read_text().count("Received SUBSCRIBE") == 2, "2 subscriptions",
                     deadline=DEADLINE)  # fmt: skip
            # One element a micro-batch: the next is published once a batch has taken the
            # last one in. (Order across the two topics does not matter: Spark's watermark
            # is the minimum over the streams, a stream without data yet counting as 0, so
            # only a stream's own disorder makes an element late.)
            for element, iri in elements:
                taken = rows_in(spark)
                publish.single(topics[iri], document(element), qos=1, port=port)
                wait_for(lambda t=taken: rows_in(spark) > t or bool(failures),  # type: ignore[misc]
                         f"a batch to take {element.graph} in", deadline=DEADLINE)  # fmt: skip
            for topic in topics.values():  # the end of both streams: every key flushes
                publish.single(topic, END_MARKER, qos=1, port=port)
            lines = lambda: out.read_text().splitlines() if out.exists() else []  # noqa: E731
            wait_for(lambda: len(lines()) >= len(expected) or bool(failures), "the results",
                     deadline=DEADLINE)  # fmt: skip
        finally:
            for query in spark.streams.active:
                query.stop()
            job.join(60)
    assert not failures, failures
    assert evaluations(out.read_text().splitlines()) == evaluations(expected)
    assert len(expected) == 3  # E1's answer: carl and eve at t=8, diana at t=16
