"""Live runs on MQTT: elements published one per message to a Mosquitto broker on loopback,
the Spark job subscribed to every stream's topic. E1 (shops and coupons): its output is the
reference evaluator's answer on E1's stream files. A PARTITION BY query spread over
buckets: a result is written in the batch that took its deciding element in."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox
import pytest
from paho.mqtt import publish
from pyspark.sql import SparkSession

from runtime.spark.engine.examples import example
from runtime.spark.evaluations import evaluations
from runtime.spark.sources.test_streaming_sources import MOSQUITTO, mosquitto, wait_for
from sepia.io.streams import read_stream
from sepia.io.writers import time_literal
from sepia.lang import parse_query
from sepia.rdf.results import jsonl_line
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import NamedQuery
from sepia.runtime.spark.job import END_MARKER
from sepia.runtime.spark.run import SparkRunOptions, run_on_spark
from sepia.semantics import evaluate

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
    published(spark, tmp_path, e1.queries, e1.data, elements, out, len(expected))
    assert evaluations(out.read_text().splitlines()) == evaluations(expected)
    assert len(expected) == 3  # E1's answer: carl and eve at t=8, diana at t=16


EX = "http://example.org/"
A, B = EX + "a", EX + "b"
BUCKETED = f"""PREFIX : <{EX}>
SELECT ?c ?p1 ?p2 FROM STREAM S1 <{A}> FROM STREAM S2 <{B}> PARTITION BY ?c
WHERE {{ SEQ(X, Y)
  DEFINE GPM X ON S1 {{ ?c :price ?p1 }}
  DEFINE GPM Y ON S2 {{ ?c :price ?p2 }} }}"""


def priced(stream: str, company: str, price: int, t: int) -> tuple[StreamElement, str]:
    triple = ox.Triple(ox.NamedNode(EX + company), ox.NamedNode(EX + "price"), ox.Literal(price))
    return StreamElement(stream, f"{EX}g{t}", t, t, (triple,)), stream


def test_a_partition_by_bucket_gives_its_result_in_the_batch_that_decides_it(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Live, one element a batch, two buckets (c1's bucket 0, c0's 1): c1's match (1, 2)
    is due once both streams are past 2, which the fourth element (c0's, on b at 4) shows;
    it reaches c0's bucket only, and c1's bucket, told by its mark rows, writes c1's match
    in that batch. The end of input then flushes c0's; the whole is the reference's."""
    query = NamedQuery("q", parse_query(BUCKETED), Path("q.rq"))
    elements = [priced(A, "c1", 1, 1), priced(B, "c1", 2, 2),
                priced(A, "c0", 5, 3), priced(B, "c0", 6, 4)]  # fmt: skip
    streams = {A: [e for e, iri in elements if iri == A], B: [e for e, iri in elements if iri == B]}
    expected = [jsonl_line(r, TimeKind.ABSTRACT) for r in evaluate(query.query, streams, name="q")]
    out = tmp_path / "out.jsonl"
    by_batch: list[list[str]] = []
    written = lambda: out.read_text().splitlines() if out.exists() else []  # noqa: E731
    published(spark, tmp_path, [query], [], elements, out, len(expected), buckets=2,
              taken=lambda: by_batch.append(written()))  # fmt: skip
    assert [[json.loads(line)["t"] for line in lines] for lines in by_batch] == [[], [], [], [2]]
    assert evaluations(out.read_text().splitlines()) == evaluations(expected)
    assert len(expected) == 2


def published(
    spark: SparkSession,
    tmp_path: Path,
    queries: list[NamedQuery],
    data: list[tuple[str | None, Path]],
    elements: list[tuple[StreamElement, str]],
    out: Path,
    expected: int,
    buckets: int | None = None,
    taken: Callable[[], None] = lambda: None,
) -> None:
    """Run the job on MQTT, publish `elements` one a micro-batch (`taken` called once a
    batch has taken each in), then the end of every stream, until `expected` results."""
    failures: list[BaseException] = []
    iris = dict.fromkeys(iri for _, iri in elements)
    with mosquitto(tmp_path) as (port, log):
        topics = {iri: "e1/" + iri.rsplit("/", 1)[1] for iri in iris}
        bindings = {iri: f"mqtt://127.0.0.1:{port}/{topic}" for iri, topic in topics.items()}

        def run() -> None:
            try:
                run_on_spark(
                    queries, bindings, data, SparkRunOptions(trigger_seconds=0.2, buckets=buckets),
                    output=str(out), spark=spark,
                )  # fmt: skip
            except BaseException as error:  # reported by the test thread
                failures.append(error)

        job = threading.Thread(target=run, daemon=True)
        job.start()
        try:
            wait_for(lambda: log.read_text().count("Received SUBSCRIBE") == len(topics),
                     f"{len(topics)} subscriptions", deadline=DEADLINE)  # fmt: skip
            # One element a micro-batch: the next is published once a batch has taken the
            # last one in (its results are written before its progress is: the sink runs
            # in the batch). (Order across the two topics does not matter: Spark's
            # watermark is the minimum over the streams, a stream without data yet counting
            # as 0, so only a stream's own disorder makes an element late.)
            for element, iri in elements:
                before = rows_in(spark)
                publish.single(topics[iri], document(element), qos=1, port=port)
                wait_for(lambda t=before: rows_in(spark) > t or bool(failures),  # type: ignore[misc]
                         f"a batch to take {element.graph} in", deadline=DEADLINE)  # fmt: skip
                taken()
            for topic in topics.values():  # the end of both streams: every key flushes
                publish.single(topic, END_MARKER, qos=1, port=port)
            lines = lambda: out.read_text().splitlines() if out.exists() else []  # noqa: E731
            wait_for(lambda: len(lines()) >= expected or bool(failures), "the results",
                     deadline=DEADLINE)  # fmt: skip
        finally:
            for query in spark.streams.active:
                query.stop()
            job.join(60)
    assert not failures, failures
