"""Warm workers: what a live run makes in a Python worker before its query starts
(`job.warm_workers`), and a file run while its query starts (`job.RouteWarming`), so that
the query's first tasks find it made."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from sepia.lang import parse_query
from sepia.runtime.spark import host, job, run
from sepia.runtime.spark.element_batches import unpack
from sepia.runtime.spark.elements import ELEMENT_FIELDS, PACKED_TERMS
from sepia.runtime.spark.host import job_spec
from sepia.runtime.spark.units import units_of

from .examples import example

EX = "http://example.org/"
S = EX + "stocks"
QUERY = f"""PREFIX : <{EX}>
SELECT ?company ?p1 ?p2 WITHIN 2 SECONDS FROM STREAM S1 <{S}>
PARTITION BY ?company
WHERE {{ SEQ(A ; B)
  DEFINE GPM A ON S1 {{ ?company :price ?p1 FILTER(?p1 > 7919) }}
  DEFINE GPM B ON S1 {{ ?company :price ?p2 FILTER(?p2 < ?p1) }} }}"""
"""A query no other test plans (its FILTER's constant): the worker's caches start without it."""


def test_a_warmed_worker_holds_each_units_engine_and_router() -> None:
    spec = job_spec(units_of([("q", parse_query(QUERY))]), None, streams=(S,), buckets=2)
    [unit] = spec.units
    engine_key = (unit, spec.unit_engines[0], spec.background_digest, spec.rdfs,
                  spec.forget_terms)  # fmt: skip
    router_key = (unit, spec.background_digest, spec.rdfs, job.engine_path())
    assert host._ENGINES.get(engine_key) is None and job._ROUTERS.get(router_key) is None
    rows = pa.record_batch({"id": pa.array([0, 1], pa.int64())})
    assert list(job.warmed([rows], spec)) == [rows]  # the rows given back as they came
    assert host._ENGINES.get(engine_key) is host.unit_engine(spec, 0)
    router = job._ROUTERS.get(router_key)
    assert router is not None and router[0].query is not None


def test_the_stateful_warm_up_makes_each_units_engine_and_gives_result_rows() -> None:
    """`host.WarmHost`, the stateful stage's warm-up: each key makes every unit's engine,
    and gives `WARM_RESULTS` result rows of one made-up line."""
    text = QUERY.replace("7919", "7907")  # a query of its own: the cache starts without it
    spec = job_spec(units_of([("q", parse_query(text))]), None, streams=(S,), buckets=2)
    [unit] = spec.units
    engine_key = (unit, spec.unit_engines[0], spec.background_digest, spec.rdfs,
                  spec.forget_terms)  # fmt: skip
    assert host._ENGINES.get(engine_key) is None
    [results] = host.WarmHost(spec).handleInputRows((0,), iter(()), None)
    assert host._ENGINES.get(engine_key) is host.unit_engine(spec, 0)
    # result rows as a step gives them, for the warm-up to collect as the sink does
    assert list(results.columns) == [c.split()[0] for c in host.RESULT_DDL.split(", ")]
    assert len(results) == host.WARM_RESULTS and results["line"].nunique() == 1
    assert json.loads(results["line"][0])["query"] == "warm"


def test_the_route_stages_warm_up_packs_a_made_up_block_of_each_stream() -> None:
    """`job.warmed` routes `job.warm_block`: on a one-key unit reading two streams, the
    block goes the way a live batch's plain elements go, packed by columns, each stream's
    elements once."""
    text = f"""PREFIX : <{EX}>
SELECT ?c ?n FROM STREAM S1 <{S}> FROM STREAM S2 <{EX}news>
WHERE {{ SEQ(A ; B) DEFINE GPM A ON S1 {{ ?c :price ?p }}
  DEFINE GPM B ON S2 {{ ?c :news ?n }} }}"""
    spec = job_spec(units_of([("q", parse_query(text))]), None, streams=(S, EX + "news"))
    rows = [row for batch in job.route([job.warm_block(spec)], spec) for row in batch.to_pylist()]
    assert {row["graph"] for row in rows} == {PACKED_TERMS}
    elements, _, _ = unpack(tuple(row[f] for f in ELEMENT_FIELDS) for row in rows)
    assert len(elements) == 2 * job.WARM_ELEMENTS
    assert elements.latest() == {S: job.WARM_ELEMENTS - 1, EX + "news": job.WARM_ELEMENTS - 1}


@pytest.mark.spark
def test_a_live_runs_warm_up_runs_on_spark_and_leaves_its_shuffle_partitions(spark) -> None:
    """Both warm-up jobs run on the session (the route stage's, then a batch
    transformWithState in one task), and the session's shuffle partitions are as before."""
    spec = job_spec(units_of([("q", parse_query(QUERY))]), None, streams=(S,))
    before = spark.conf.get(job.SHUFFLE_PARTITIONS)
    job.warm_workers(spark, spec)
    assert spark.conf.get(job.SHUFFLE_PARTITIONS) == before


@pytest.fixture
def warmings(monkeypatch: pytest.MonkeyPatch) -> list[job.RouteWarming]:
    """The route warm-ups the runs of a test start."""
    started: list[job.RouteWarming] = []

    class Recorded(job.RouteWarming):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(run, "RouteWarming", Recorded)
    return started


@pytest.mark.spark
def test_a_file_run_warms_its_route_workers_in_a_job_that_ends_with_the_run(
    spark, tmp_path, warmings
) -> None:
    """The warm-up's job ran on the session, in a group of its own, and succeeded; its
    thread is done when the run returns, and the answer is the local engine's."""
    ex = example("e1-shops-coupons")
    out = tmp_path / "out.jsonl"
    run.run_on_spark(ex.queries, ex.bindings, ex.data, output=str(out), spark=spark)
    [warming] = warmings
    assert not warming.thread.is_alive()
    tracker = spark.sparkContext.statusTracker()
    [job_id] = tracker.getJobIdsForGroup(warming.group)
    assert tracker.getJobInfo(job_id).status == "SUCCEEDED"
    assert out.read_text().splitlines() == ex.local_lines(ex.queries[0])


@pytest.mark.spark
def test_a_file_run_that_fails_leaves_no_warm_up_running(spark, tmp_path, warmings) -> None:
    ex = example("e1-shops-coupons")
    bad = tmp_path / "bad.trig"
    bad.write_text("<http://example.org/G1> { <http://example.org/a> <http://example.org/p> 1 }\n")
    bindings = dict.fromkeys(ex.bindings, str(bad))
    with pytest.raises(run.SparkRunError):
        run.run_on_spark(ex.queries, bindings, ex.data, output=str(tmp_path / "o"), spark=spark)
    [warming] = warmings
    assert not warming.thread.is_alive()
    tracker = spark.sparkContext.statusTracker()
    assert not [j for j in tracker.getActiveJobsIds()
                if j in tracker.getJobIdsForGroup(warming.group)]  # fmt: skip
