"""Checkpoint files on a local master, written without a process per file.

Each micro-batch writes an offset log, a commit log and a state changelog file, each to a
temporary file then renamed. Through Hadoop's local FileContext (Spark's default) every
rename starts `readlink` processes and a new file's permissions a `chmod` (there is no
native Hadoop library here): 35-45 ms per file on a live batch, more under load. On a local
master the driver's class path carries `CHECKPOINT_JAR`, whose `LOCAL_CHECKPOINTS` writes
and renames local files through java.nio (its Java source is in `java/`): the same
rename(2), atomic, replacing a file only where Spark allows it. A cluster's executors lack
the jar, and a run's own `--conf spark.sql.streaming.checkpointFileManagerClass=...` wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pyspark.sql import SparkSession

CHECKPOINT_JAR = Path(__file__).with_name("sepia-checkpoints.jar")
"""Built from java/LocalCheckpointFileManager.java (`make checkpoint-jar`); the session
puts it on the driver's class path on every master."""
CHECKPOINT_FILES = "spark.sql.streaming.checkpointFileManagerClass"
LOCAL_CHECKPOINTS = "sepia.spark.LocalCheckpointFileManager"


def local_checkpoints(session: SparkSession, master: str, extra: Mapping[str, str]) -> None:
    """Checkpoint files through `LOCAL_CHECKPOINTS` on a local master, unless the run names
    its own manager (`extra`: its settings) or the driver cannot load the class (a JVM
    started without the jar, a PySpark whose manager it was not built against)."""
    if CHECKPOINT_FILES in extra or not (master == "local" or master.startswith("local[")):
        return
    if _loadable(session, LOCAL_CHECKPOINTS):
        session.conf.set(CHECKPOINT_FILES, LOCAL_CHECKPOINTS)


def _loadable(session: SparkSession, name: str) -> bool:
    """Whether the driver's JVM loads the class `name` (its superclasses found)."""
    jvm = session.sparkContext._jvm
    assert jvm is not None
    try:
        jvm.java.lang.Class.forName(name)
    except Exception:  # py4j's error for a class the JVM does not find or cannot link
        return False
    return True
