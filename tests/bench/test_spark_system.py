"""The Spark bench system counts as every system does, on a background past the size at
which PySpark would ship the job's plan as a broadcast (it failed there before)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sepia.bench.systems.local_engine import LocalEngine
from sepia.bench.systems.spark import SYSTEMS
from sepia.workloads import generate

pytestmark = pytest.mark.spark


def test_a_large_background_runs_and_matches_count_once(spark: SparkSession, tmp_path: Path):
    manifest = generate("W10", scale=150, seed=3, out=tmp_path)
    variant = max(manifest.variants, key=lambda v: v.x or 0)  # the largest background
    assert (tmp_path / manifest.background_of(variant)[0][1]).stat().st_size > 2**20
    deadline = time.perf_counter() + 600
    on_spark = SYSTEMS[0].run(tmp_path, manifest, variant, deadline)
    local = LocalEngine().run(tmp_path, manifest, variant, deadline)
    assert on_spark.results == local.results > 0
