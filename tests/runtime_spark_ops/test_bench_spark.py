"""`sepia bench --engine spark`: the Spark systems on a small W4, counted against the
reference evaluator on the same files; they stay out of runs that do not name them."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sepia.bench.harness import dataset
from sepia.bench.systems import DEFAULT_SYSTEMS, SYSTEMS
from sepia.io.streams import read_stream
from sepia.runtime.inputs import load_query
from sepia.semantics import evaluate
from sepia.workloads import workload


def test_the_spark_systems_are_registered_and_opt_in() -> None:
    assert {"spark", "spark-1core", "spark-passthrough"} <= set(SYSTEMS)
    assert not {"spark", "spark-1core", "spark-passthrough"} & set(DEFAULT_SYSTEMS)
    w4, w1 = workload("W4"), workload("W1")
    one_core = SYSTEMS["spark-1core"]
    variant = type("V", (), {"query": "q.rq"})()
    assert one_core.cannot_express(w4, variant) is None
    assert "W4, W5, W6, W7" in one_core.cannot_express(w1, variant)


@pytest.mark.spark
@pytest.mark.slow  # two Spark runs: ~40 s on an idle machine, minutes on a busy one
def test_the_job_and_the_pass_through_count_the_workload(
    spark: SparkSession, tmp_path: Path
) -> None:
    data, manifest = dataset(workload("W4"), 120, 7, tmp_path)
    variant = manifest.variants[0]
    assert variant.query is not None
    query = load_query(data / variant.query)
    streams = {s.iri: list(read_stream(data / s.path, s.iri)) for s in manifest.streams}
    expected = len(list(evaluate(query.query, streams, None, name=query.name)))
    assert expected > 0

    job = SYSTEMS["spark"].run(data, manifest, variant, math.inf)
    assert (job.elements, job.triples, job.results) == (120, manifest.triples, expected)
    assert job.latencies_ms and all(d > 0 for d in job.latencies_ms)  # batch durations

    passed = SYSTEMS["spark-passthrough"].run(data, manifest, variant, math.inf)
    assert (passed.elements, passed.triples, passed.results) == (120, manifest.triples, None)
