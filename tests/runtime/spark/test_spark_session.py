"""Spark needs Java 17+: without it Sepia says so, and how to get it, before Spark starts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sepia.runtime.spark.session import (
    SparkConfig,
    SparkUnavailable,
    java_major_version,
    session_settings,
    spark_session,
)

ROOT = Path(__file__).parents[3]


def test_missing_java_is_reported_with_how_to_install_it(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SparkUnavailable, match=r"no java was found.*apt-get install openjdk-17"):
        spark_session()


def test_an_old_java_is_refused(monkeypatch, tmp_path) -> None:
    fake = tmp_path / "bin" / "java"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'java version \"1.8.0_392\"' >&2\n")
    fake.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    assert java_major_version() == 8
    with pytest.raises(SparkUnavailable, match="needs Java 17 or newer; found Java 8"):
        spark_session()


def test_the_setup_script_stops_without_java(tmp_path) -> None:
    done = subprocess.run(
        ["/bin/bash", str(ROOT / "scripts" / "check-java")],
        env={"PATH": str(tmp_path)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "no java was found" in done.stderr and "openjdk-17" in done.stderr


@pytest.mark.parametrize(
    ("master", "partitions"),
    [("local[1]", 2), ("local[3]", 6), ("local[2,4]", 4), ("local", 2), ("local[*]", None)],
)
def test_shuffle_partitions_follow_the_masters_cores(monkeypatch, master, partitions) -> None:
    """Two shuffle partitions per core the master gives: local[1] gets 2, not 2 per core
    of the machine (local[*] and clusters: the machine's count, here mocked to 5)."""
    monkeypatch.setattr("os.cpu_count", lambda: 5)
    settings = session_settings(SparkConfig(master=master))
    assert settings["spark.sql.shuffle.partitions"] == str(partitions or 10)
    assert session_settings(SparkConfig(master=master, shuffle_partitions=7))[
        "spark.sql.shuffle.partitions"
    ] == "7"
