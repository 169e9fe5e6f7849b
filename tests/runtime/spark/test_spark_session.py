"""Spark needs Java 17+: without it Sepia says so, and how to get it, before Spark starts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sepia.runtime.spark.class_archive import archive_options, complete_archive
from sepia.runtime.spark.run import _one_daemon, short_input
from sepia.runtime.spark.session import (
    SHORT_INPUT_BYTES,
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


def test_a_short_run_starts_light_and_a_runs_own_settings_still_win() -> None:
    """A short run: C1-only JIT and the serial collector on the driver, no web UI, one
    shuffle partition; an explicit partition count and --conf settings override those."""
    short = session_settings(SparkConfig(master="local[2]", short=True))
    assert short["spark.sql.shuffle.partitions"] == "1"
    assert short["spark.ui.enabled"] == "false"
    assert "-XX:TieredStopAtLevel=1" in short["spark.driver.extraJavaOptions"]
    assert "log4j.configurationFile" in short["spark.driver.extraJavaOptions"]
    assert "-XX:TieredStopAtLevel=1" in short["spark.executor.extraJavaOptions"]
    usual = session_settings(SparkConfig(master="local[2]"))
    assert "spark.ui.enabled" not in usual
    assert "TieredStopAtLevel" not in usual["spark.driver.extraJavaOptions"]
    own = SparkConfig(
        master="local[2]", short=True, shuffle_partitions=3, extra={"spark.ui.enabled": "true"}
    )
    assert session_settings(own)["spark.sql.shuffle.partitions"] == "3"
    assert session_settings(own)["spark.ui.enabled"] == "true"


@pytest.mark.parametrize(
    ("master", "gib", "heap"),
    [
        ("local[2]", 24, "4g"),
        ("local[*]", 8, "2g"),
        ("local", 2, "1g"),
        ("spark://h:7077", 24, None),
    ],
)
def test_a_local_driver_gets_a_quarter_of_the_memory(monkeypatch, master, gib, heap) -> None:
    """A quarter of the machine's memory, 1-4 GiB, on a local master only; --conf wins."""
    pages = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": gib * 2**30 // 4096}
    monkeypatch.setattr("os.sysconf", pages.__getitem__)
    assert session_settings(SparkConfig(master=master)).get("spark.driver.memory") == heap
    own = SparkConfig(master=master, extra={"spark.driver.memory": "9g"})
    assert session_settings(own)["spark.driver.memory"] == "9g"


def test_a_live_run_compiles_with_c1_only_and_keeps_the_rest() -> None:
    """C1 only, with room for the code a live job compiles batch after batch (a C1-only
    JVM's own 48 MB filled within minutes, and compiling stopped)."""
    live = session_settings(SparkConfig(master="local[2]", live=True))
    for jvm in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        assert "-XX:TieredStopAtLevel=1" in live[jvm]
        assert "-XX:ReservedCodeCacheSize=256m" in live[jvm]
        assert "SerialGC" not in live[jvm]
    assert "log4j.configurationFile" in live["spark.driver.extraJavaOptions"]
    assert "spark.ui.enabled" not in live
    assert live["spark.sql.shuffle.partitions"] == "4"


def test_only_small_finite_file_input_makes_a_short_run(tmp_path) -> None:
    small = tmp_path / "s.trig"
    small.write_text("<http://e/g> { <http://e/a> <http://e/p> 1 . }\n")
    big = tmp_path / "big" / "b.nq"
    big.parent.mkdir()
    with big.open("wb") as out:
        out.truncate(SHORT_INPUT_BYTES + 1)
    assert short_input({"http://e/s": str(small)})
    assert short_input({"http://e/s": str(small), "http://e/t": str(tmp_path / "big")}) is False
    assert short_input({"http://e/s": str(small)}, follow=True) is False
    assert short_input({"http://e/s": "gen:W1?rate=10"}) is False
    assert short_input({"http://e/s": "-"}) is False  # standard input: size unknown


def test_the_class_archive_is_written_once_then_used(tmp_path) -> None:
    """No archive yet: the JVM is told to write one at exit under a name of this process,
    which `complete_archive` renames once the JVM has exited well; then runs use it."""
    archive = tmp_path / "cache" / "spark-classes-x.jsa"
    options = archive_options(archive)
    written = re.search(r"-XX:ArchiveClassesAtExit=(\S+)", options)
    assert written and Path(written.group(1)).parent == archive.parent
    jvm = subprocess.Popen(  # stands in for the JVM: writes the archive when its input ends
        [sys.executable, "-c", f"import sys; sys.stdin.read(); open({written.group(1)!r}, 'w')"],
        stdin=subprocess.PIPE,
    )
    complete_archive(archive, jvm)
    assert archive.exists() and not Path(written.group(1)).exists()
    assert archive_options(archive).startswith(f"-XX:SharedArchiveFile={archive} ")
    failed = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.exit(3)"], stdin=subprocess.PIPE
    )
    other = tmp_path / "other.jsa"
    Path(re.search(r"=(\S+)", archive_options(other)).group(1)).write_text("half")
    complete_archive(other, failed)
    assert not other.exists() and list(tmp_path.glob(".other.jsa.*")) == []


def test_partial_archives_of_dead_runs_are_dropped(tmp_path) -> None:
    """A run killed before its JVM finished leaves its partial archive; the next run drops
    it, and keeps a partial whose run is still alive (it may still be writing)."""
    archive = tmp_path / "spark-classes-x.jsa"
    script = "import os; print(os.getpid())"
    gone = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    orphan = tmp_path / f".spark-classes-x.jsa.{gone.stdout.strip()}"
    alive = tmp_path / f".spark-classes-x.jsa.{os.getppid()}"
    for partial in (orphan, alive):
        partial.write_text("half")
    archive_options(archive)
    assert not orphan.exists() and alive.exists()
    archive.write_text("done")
    orphan.write_text("half")
    assert archive_options(archive).startswith("-XX:SharedArchiveFile=")
    assert not orphan.exists()


def test_no_writable_cache_folder_means_no_archive(tmp_path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert archive_options(blocked / "sepia" / "spark-classes-x.jsa") == ""


def test_partial_archives_of_other_installations_are_dropped_too(tmp_path) -> None:
    """Each virtual environment has its own archive name; a run killed while writing one
    leaves a partial that no run of that environment may ever drop: any run drops it."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    elsewhere = tmp_path / f".spark-classes-other.jsa.{gone}"
    alive = tmp_path / f".spark-classes-other.jsa.{os.getppid()}"
    finished = tmp_path / "spark-classes-other.jsa"
    for path in (elsewhere, alive, finished):
        path.write_text("x")
    archive_options(tmp_path / "spark-classes-x.jsa")
    assert not elsewhere.exists() and alive.exists() and finished.exists()


@pytest.mark.spark
def test_a_run_of_one_batch_has_one_python_daemon_then_restores_the_setting(spark) -> None:
    """Spark keys its Python daemons by the workers' settings, and only its Arrow stages
    set simplified tracebacks: off within a one-batch run, the route and stateful stages
    share a daemon; a run of many batches keeps the session's setting."""
    conf = "spark.sql.execution.pyspark.udf.simplifiedTraceback.enabled"
    before = spark.conf.get(conf, "true")
    with _one_daemon(spark, one_batch=True):
        assert spark.conf.get(conf) == "false"
    assert spark.conf.get(conf, "true") == before
    with _one_daemon(spark, one_batch=False):
        assert spark.conf.get(conf, "true") == before
