"""Warm workers: what a live run makes in a Python worker before its query starts
(`job.warm_workers`), so that the query's first tasks find it made."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sepia.lang import parse_query
from sepia.runtime.spark import host, job
from sepia.runtime.spark.host import job_spec
from sepia.runtime.spark.units import units_of

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


def test_the_stateful_warm_up_makes_each_units_engine() -> None:
    """`host.WarmHost`, the stateful stage's warm-up: each key makes every unit's engine,
    and gives no rows."""
    text = QUERY.replace("7919", "7907")  # a query of its own: the cache starts without it
    spec = job_spec(units_of([("q", parse_query(text))]), None, streams=(S,), buckets=2)
    [unit] = spec.units
    engine_key = (unit, spec.unit_engines[0], spec.background_digest, spec.rdfs,
                  spec.forget_terms)  # fmt: skip
    assert host._ENGINES.get(engine_key) is None
    assert list(host.WarmHost(spec).handleInputRows((0,), iter(()), None)) == []
    assert host._ENGINES.get(engine_key) is host.unit_engine(spec, 0)


@pytest.mark.spark
def test_a_live_runs_warm_up_runs_on_spark_and_leaves_its_shuffle_partitions(spark) -> None:
    """Both warm-up jobs run on the session (the route stage's, then a batch
    transformWithState in one task), and the session's shuffle partitions are as before."""
    spec = job_spec(units_of([("q", parse_query(QUERY))]), None, streams=(S,))
    before = spark.conf.get(job.SHUFFLE_PARTITIONS)
    job.warm_workers(spark, spec)
    assert spark.conf.get(job.SHUFFLE_PARTITIONS) == before
