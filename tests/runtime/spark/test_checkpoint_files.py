"""Checkpoint files on a local master go through Sepia's `LocalCheckpointFileManager`
(`sepia.runtime.spark.checkpoint_files`): a new file is written to a temporary name and
renamed into place atomically, over an existing file only where Spark allows it, and a run
so checkpointed gives its results. (Killed and restarted runs on it:
test_spark_recovery.py.)"""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from py4j.protocol import Py4JJavaError

from sepia.runtime.spark.checkpoint_files import (
    CHECKPOINT_FILES,
    CHECKPOINT_JAR,
    LOCAL_CHECKPOINTS,
    local_checkpoints,
)

ROOT = Path(__file__).parents[3]
SOURCE = ROOT / "src" / "sepia" / "runtime" / "spark" / "java" / "LocalCheckpointFileManager.java"
CLASS = "sepia/spark/LocalCheckpointFileManager.class"


def manager(spark, folder: Path):
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    return jvm.sepia.spark.LocalCheckpointFileManager(jvm.org.apache.hadoop.fs.Path(str(folder)),
                                                       conf)  # fmt: skip


def write(spark, fm, path: Path, data: bytes, overwrite: bool) -> None:
    out = fm.createAtomic(spark.sparkContext._jvm.org.apache.hadoop.fs.Path(str(path)), overwrite)
    out.write(data)
    out.close()


@pytest.mark.spark
def test_a_local_session_checkpoints_through_the_local_manager(spark) -> None:
    assert spark.conf.get(CHECKPOINT_FILES) == LOCAL_CHECKPOINTS


@pytest.mark.spark
def test_a_runs_own_manager_and_a_cluster_master_keep_sparks_choice(spark) -> None:
    spark.conf.unset(CHECKPOINT_FILES)
    try:
        local_checkpoints(spark, "local[2]", {CHECKPOINT_FILES: "a.Manager"})
        local_checkpoints(spark, "spark://127.0.0.1:7077", {})
        local_checkpoints(spark, "local-cluster[2,1,1024]", {})
        assert spark.conf.get(CHECKPOINT_FILES, None) is None
    finally:
        local_checkpoints(spark, "local[2]", {})
    assert spark.conf.get(CHECKPOINT_FILES) == LOCAL_CHECKPOINTS


@pytest.mark.spark
def test_a_file_is_renamed_into_place_and_replaced_only_where_allowed(spark, tmp_path) -> None:
    """An offset log's file is never replaced (Spark detects a second writer so); a state
    changelog's is (a batch run again after a restart writes it again). A refused file's
    temporary stays behind, as Spark's FileContext manager leaves it; no checksum file is
    written."""
    fm = manager(spark, tmp_path)
    target = tmp_path / "0"
    write(spark, fm, target, b"first", overwrite=False)
    assert target.read_bytes() == b"first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0"]
    with pytest.raises(Py4JJavaError, match="FileAlreadyExistsException"):
        write(spark, fm, target, b"second", overwrite=False)
    assert target.read_bytes() == b"first"
    write(spark, fm, target, b"third", overwrite=True)
    assert target.read_bytes() == b"third"
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names[-1] == "0" and len(names) == 2 and names[0].endswith(".tmp")


@pytest.mark.spark
def test_a_run_checkpointed_so_gives_its_results(spark, tmp_path) -> None:
    from sepia.runtime.inputs import load_query
    from sepia.runtime.spark.run import run_on_spark

    from .evaluations import evaluations

    e1 = ROOT / "examples" / "e1-shops-coupons"
    bindings = {"http://example.org/nearby": str(e1 / "stream-nearby.trig"),
                "http://example.org/coupons": str(e1 / "stream-coupons.trig")}  # fmt: skip
    out, checkpoint = tmp_path / "out.jsonl", tmp_path / "checkpoint"
    run_on_spark([load_query(e1 / "query.rq")], bindings, [(None, e1 / "background.ttl")],
                 checkpoint=checkpoint, output=str(out), spark=spark)  # fmt: skip
    expected = (e1 / "expected.jsonl").read_text().splitlines()
    assert evaluations(out.read_text().splitlines()) == evaluations(expected)
    job = checkpoint / "job"
    assert any((job / "offsets").iterdir()) and any((job / "commits").iterdir())
    assert list((job / "state").rglob("*.changelog"))


def test_the_jar_is_built_from_its_source(tmp_path) -> None:
    """The committed jar holds the class its source compiles to (`make checkpoint-jar`)."""
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("no javac (a JDK) to compile the source with")
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    subprocess.run([javac, "--release", "17", "-cp", f"{jars}/*", "-d", str(tmp_path),
                    str(SOURCE)], check=True, capture_output=True)  # fmt: skip
    with zipfile.ZipFile(CHECKPOINT_JAR) as jar:
        assert jar.read(CLASS) == (tmp_path / CLASS).read_bytes()
