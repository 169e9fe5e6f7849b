"""Warm workers: what a live run makes in a Python worker before its query starts
(`job.warm_workers`), so that the query's first tasks find it made."""

from __future__ import annotations

import pyarrow as pa

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
