"""Shared fixtures. Spark tests share one local SparkSession: starting one costs ~7 s."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    from sepia.runtime.spark.session import SparkConfig, spark_session

    session = spark_session(SparkConfig(master="local[2]", app_name="sepia-tests"))
    yield session
    session.stop()
