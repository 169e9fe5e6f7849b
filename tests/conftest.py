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

import w3c_suites

settings.register_profile("suite", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("SEPIA_HYPOTHESIS", "suite"))


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    from sepia.runtime.spark.session import SparkConfig, spark_session

    session = spark_session(SparkConfig(master="local[2]", app_name="sepia-tests"))
    yield session
    session.stop()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under CI a missing W3C suite fails the run before any test (see ``w3c_suites``)."""
    if w3c_suites.missing() and w3c_suites.in_ci():
        failure = "CI=true, so the run fails. " + w3c_suites.message()
        pytest.exit(failure, returncode=pytest.ExitCode.USAGE_ERROR)


def pytest_terminal_summary(terminalreporter) -> None:
    """Outside CI a missing suite is one warning line at the end of the run."""
    if w3c_suites.missing():
        terminalreporter.write_line(
            "WARNING: their tests were skipped. " + w3c_suites.message(), yellow=True, bold=True
        )
