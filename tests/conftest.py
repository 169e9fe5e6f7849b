"""Shared fixtures. Spark tests share one local SparkSession: starting one costs ~7 s.

Hypothesis draws the same examples on every run of the default suite (``derandomize``), so
a suite green here is green in CI: a random draw once hit a SPAseq input the reference took
25 minutes over. ``SEPIA_HYPOTHESIS=explore`` draws new examples (with ``-m slow``: the
nightly-style runs, thousands per family); what they find is kept as a regression test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings
from pyspark.sql import SparkSession

settings.register_profile("suite", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("SEPIA_HYPOTHESIS", "suite"))


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    from sepia.runtime.spark.session import SparkConfig, spark_session

    session = spark_session(SparkConfig(master="local[2]", app_name="sepia-tests"))
    yield session
    session.stop()
