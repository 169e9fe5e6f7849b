"""Shared fixtures. Spark tests share one local SparkSession: starting one costs ~7 s.

``make test`` runs the suite on two pytest-xdist workers (``-n 2 --dist loadgroup``): every
test that uses the ``spark`` fixture is put in one group, so the whole run still starts one
SparkSession, on one worker, while the other worker runs the pure-Python tests beside it.

Hypothesis draws the same examples on every run of the default suite (each test seeded by
its own digest, as ``derandomize`` would), so a suite green here is green in CI: a random
draw once hit a SPAseq input the reference took 25 minutes over. Before drawing, each test
replays the failures kept in ``tests/hypothesis-examples/`` (read only): ``make explore``
(``SEPIA_HYPOTHESIS=explore``, random draws for a given time) writes every failure it finds
there, and committing the folder keeps it as a regression the default run replays.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.database import DirectoryBasedExampleDatabase, ReadOnlyDatabase
from hypothesis.internal.compat import int_from_bytes
from hypothesis.internal.reflection import function_digest
from pyspark.sql import SparkSession

import w3c_suites
from engine import shares

EXAMPLES = DirectoryBasedExampleDatabase(Path(__file__).parent / "hypothesis-examples")
settings.register_profile("suite", database=ReadOnlyDatabase(EXAMPLES))
settings.register_profile("explore", database=EXAMPLES)
PROFILE = os.environ.get("SEPIA_HYPOTHESIS", "suite")
settings.load_profile(PROFILE)
os.environ.setdefault("SEPIA_CACHE_DIR", tempfile.mkdtemp(prefix="sepia-test-queries-"))
"""Compiled queries (``sepia.lang.cache``) go to a folder of this run, not the user's."""


def seed_from_digest(item: pytest.Item) -> None:
    """The suite's fixed draws: seed a hypothesis test as ``derandomize=True`` does (which
    would also switch the example database off)."""
    test = getattr(item, "obj", None)
    inner = getattr(getattr(test, "hypothesis", None), "inner_test", None)
    if inner is not None and getattr(test, "_hypothesis_internal_use_seed", None) is None:
        test._hypothesis_internal_use_seed = int_from_bytes(function_digest(inner))


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    from sepia.runtime.spark.session import SparkConfig, spark_session

    # One shuffle partition per core (a run's default is two): the tests' inputs are tiny,
    # and each partition of a keyed state costs a task per batch (its Python worker and its
    # state store), so batches took 25% longer with four (measured warm, at load 15). The
    # buckets of a PARTITION BY query follow the cores, not this, and stay four.
    # The JVM of a short run (C1 only, the serial collector, no web UI): the suite's jobs
    # are tiny and never pay back C2's compiling (a sample of the Spark tests took 36% less
    # CPU time and about 25% less wall time so, back to back at load 9-15).
    config = SparkConfig(
        master="local[2]", app_name="sepia-tests", shuffle_partitions=2, short=True
    )
    session = spark_session(config)
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


def pytest_configure(config: pytest.Config) -> None:
    """Each differential test is held to its share of non-empty reference answers."""
    config.pluginmanager.register(shares, "differential-shares")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Fixed draws outside exploration; the Spark tests in one xdist group (one session);
    the ``long`` tests first (see ``long_first``)."""
    for item in items:
        if PROFILE != "explore":
            seed_from_digest(item)
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("spark"))
    long_first(items)


def long_first(items: list[pytest.Item]) -> None:
    """Move the tests marked ``long`` to the front, the rest in their order.

    The run lasts as long as its slower xdist worker. ``--dist loadgroup`` hands the Spark
    group (the largest unit) to one worker first, then single tests in this order to
    whichever worker is free: a test of minutes handed out last (the standalone cluster
    test, collected late) would run on one worker after the other has finished. Handed out
    first, they run beside the Spark group, and the run ends on short tests."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
