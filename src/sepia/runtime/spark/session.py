"""The SparkSession Sepia runs on: local mode by default, quiet, Arrow on, small shuffles.

The settings below come from measurements on 2-core machines (design/architecture.md):
200 shuffle partitions were 6.5x slower than 2; keyed state needs the RocksDB provider;
Python workers must run the driver's interpreter, not whatever `python3` is on PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import SparkSession

LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
JAVA_HELP = (
    "Install Java 17 or newer (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) "
    "and put `java` on PATH or set JAVA_HOME."
)


class SparkUnavailable(RuntimeError):
    """Spark cannot start here: Java is missing or too old, or the master cannot be reached."""


@dataclass(frozen=True, slots=True)
class SparkConfig:
    """What a run may change about its session; everything else is Sepia's tuned default."""

    master: str = "local[*]"
    app_name: str = "sepia"
    shuffle_partitions: int = 2 * (os.cpu_count() or 1)
    extra: dict[str, str] = field(default_factory=dict)


def java_major_version() -> int:
    """The major version of the `java` Spark will start, or raise SparkUnavailable."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        raise SparkUnavailable(f"Spark needs Java, and no java was found. {JAVA_HELP}")
    banner = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    found = re.search(r'version "(\d+)(?:\.(\d+))?', banner)
    if not found:
        raise SparkUnavailable(f"could not read the Java version from {java!r}. {JAVA_HELP}")
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def _prepare_environment() -> None:
    """Point Spark's Python workers at this interpreter and keep the driver on loopback."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def spark_session(config: SparkConfig | None = None) -> SparkSession:
    """Start (or reuse) the SparkSession for a run, after checking that Java can run it."""
    config = config or SparkConfig()
    major = java_major_version()
    if major < 17:
        raise SparkUnavailable(f"Spark 4 needs Java 17 or newer; found Java {major}. {JAVA_HELP}")
    _prepare_environment()
    builder = (
        SparkSession.builder.master(config.master)
        .appName(config.app_name)
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(config.shuffle_partitions))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config(
            "spark.sql.streaming.stateStore.providerClass",
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
        )
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j.configurationFile={LOG_CONFIG}")
    )
    for key, value in config.extra.items():
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()
    except Exception as error:  # py4j / JVM start-up failures carry no common type
        raise SparkUnavailable(f"Spark could not start on {config.master}: {error}") from error
    session.sparkContext.setLogLevel("ERROR")
    return session
