"""The SparkSession Sepia runs on: local mode by default, quiet, Arrow on, small shuffles.

The settings below come from measurements on 2-core machines (design/architecture.md):
200 shuffle partitions were 6.5x slower than 2 (so: two per core the master gives); keyed
state needs the RocksDB provider; Python workers must run the driver's interpreter, not
whatever `python3` is on PATH.

Quiet: log4j2.properties keeps Spark's logs to errors, but some lines reach the JVM's
standard error without log4j (the JVM's own start-up warning, the banner of the driver-side
Python worker of transformWithState). The JVM Sepia starts gets a pipe as standard error,
and a thread forwards everything except those lines.

Retrying: Spark retries a failed task (a Python worker that failed to connect back, a lost
executor) up to `spark.task.maxFailures` times on a cluster, but never in local mode, where
the master URL sets the count and `local[N]` means one attempt. A local master gets
`TASK_ATTEMPTS` attempts (`local[N,F]`) unless it names its own.

Short runs: a small finite input (the demo, a test, a few files: `SHORT_INPUT_BYTES`) spends
nearly all its time starting the JVM and planning the first job, so its session trades peak
speed for start-up (`SHORT_RUN`): the JVM compiles with C1 only and collects with the serial
collector (half the JVM's CPU time before the first result, measured on the demo), the web
UI stays off, and one shuffle partition holds the whole state.

Failing fast: a `spark://` master that does not accept connections would leave Spark retrying
its registration for a minute before giving up; it is tried first, with a short timeout.

Checkpoint files on a local master go through Sepia's own manager, a jar the driver's class
path carries (`checkpoint_files`: Hadoop's local FileContext started processes per file).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark import SparkConf, SparkContext
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

from sepia.runtime.spark.checkpoint_files import CHECKPOINT_JAR, local_checkpoints
from sepia.runtime.spark.class_archive import archive_options, archive_path, finish_archive
from sepia.runtime.spark.worker_python import worker_python

LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
JAVA_HELP = (
    "Install Java 17 or newer (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) "
    "and put `java` on PATH or set JAVA_HOME."
)
MASTER_TIMEOUT_S = 5.0
TASK_ATTEMPTS = 4
"""Attempts of a task before its job fails: Spark's own default on a cluster."""
NOISE = (
    re.compile(r"^WARNING: Using incubator modules"),
    re.compile(r"^(Starting )?Streaming TransformWithStateIn\w* Python worker"),
)
"""Lines of the JVM's standard error that are not log4j's and say nothing to a user."""
SHORT_INPUT_BYTES = 16 * 2**20
"""A finite input up to this size makes a short run (`SparkConfig.short`)."""
SHORT_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""The driver JVM of a short run: the C2 compiler's work (most of a cold JVM's CPU time)
never pays back within a run of seconds, nor do the G1 collector's threads."""
SHORT_RUN = {"spark.ui.enabled": "false", "spark.executor.extraJavaOptions": SHORT_JVM}
"""Settings of a short run besides the driver's `SHORT_JVM` and one shuffle partition: the
executors of a cluster (in local mode they are the driver's JVM) start light too; a run's
own (--conf) still win."""
LIVE_JVM = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m"
"""The driver's and executors' JVM of a live run: C1 only. A live job's JVM work is
plumbing (planning, shuffles, Arrow to Python, the state store's calls), and the C2
compiler threads took a third of the job's CPU in its first minutes: live W1 at 450/s on 2
cores (load 6), the JVM's CPU 23.6 -> 17.6 s over 40 s, batch p50 1.66 -> 1.18 s. A C1-only
JVM reserves 48 MB for compiled code, which a live W1 at 20,000 elements/s filled in 150 s
(28 MB after 20 s, 45 MB after 150 s): the JVM then stops compiling for good."""
TRACEBACK = "Traceback (most recent call last):"
LATE_WORKER = ("CANNOT_OPEN_SOCKET",)
"""The end of the traceback of a Python worker that could not connect back in time."""


class SparkUnavailable(RuntimeError):
    """Spark cannot start here: Java is missing or too old, or the master cannot be reached."""


@dataclass(frozen=True, slots=True)
class SparkConfig:
    """What a run may change about its session; everything else is Sepia's tuned default."""

    master: str = "local[*]"
    app_name: str = "sepia"
    shuffle_partitions: int | None = None
    """None: two per core the master gives (``local_cores``), one for a short run."""
    extra: dict[str, str] = field(default_factory=dict)
    short: bool = False
    """A short run (a small finite input): start-up before peak speed (`SHORT_RUN`)."""
    live: bool = False
    """A live run (live sources or followed folders): C1 only (`LIVE_JVM`)."""


def local_cores(master: str) -> int:
    """The cores a master gives this process: N for ``local[N]`` (and ``local[N,F]``), 1 for
    ``local``, the machine's for ``local[*]`` and for a cluster (whose size is not known
    before it starts; the machine's count is the usual order)."""
    found = re.fullmatch(r"local\[(\d+)(?:,\d+)?\]", master)
    if found:
        return max(1, int(found.group(1)))
    return 1 if master == "local" else os.cpu_count() or 1


def with_task_retries(master: str, attempts: int = TASK_ATTEMPTS) -> str:
    """A local master that retries a failed task: `local[N]` -> `local[N,attempts]`
    (`local` and `local[*]` alike); a master naming its attempts, or not local, as it is."""
    found = re.fullmatch(r"local(?:\[(\d+|\*)\])?", master)
    return f"local[{found.group(1) or 1},{attempts}]" if found else master


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


def _prepare_environment(master: str) -> None:
    """Point Spark's Python workers at this interpreter (on a local master through
    `worker_python`, which starts them from the installed PySpark) and keep the driver on
    loopback."""
    local = master.startswith("local")
    os.environ.setdefault("PYSPARK_PYTHON", worker_python() if local else sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def check_master(master: str, timeout: float = MASTER_TIMEOUT_S) -> None:
    """Raise SparkUnavailable unless a `spark://` master (one of its hosts, for HA) accepts
    connections; other masters are left to Spark."""
    if not master.startswith("spark://"):
        return
    errors = []
    for address in master.removeprefix("spark://").split(","):
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=timeout):
                return
        except (OSError, ValueError) as error:
            errors.append(f"{address}: {error}")
    raise SparkUnavailable(
        f"cannot reach the Spark master {master} ({'; '.join(errors)}). Start it "
        "($SPARK_HOME/sbin/start-master.sh), check the address, or run locally with "
        "--master 'local[*]'."
    )


def session_settings(config: SparkConfig, jvm_options: str = "") -> dict[str, str]:
    """The session's Spark settings: Sepia's tuned defaults under the run's own;
    `jvm_options`: more options of the driver JVM (the class archive's)."""
    short = f" {SHORT_JVM}" if config.short else f" {LIVE_JVM}" if config.live else ""
    jvm = f"-Dlog4j.configurationFile={LOG_CONFIG}{short} {jvm_options}".rstrip()
    return {
        "spark.master": with_task_retries(config.master),
        "spark.app.name": config.app_name,
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(
            config.shuffle_partitions or (1 if config.short else 2 * local_cores(config.master))
        ),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.streaming.stateStore.providerClass":
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
        # A batch's state commit writes the changes to a changelog file, not a checkpoint of
        # RocksDB's files (uploaded in the background): a live W1 batch's commit took 68 ms
        # instead of 204 ms. Recovery replays the changelog on the last snapshot.
        "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.extraJavaOptions": jvm,
        "spark.driver.extraClassPath": str(CHECKPOINT_JAR),
        # The job's plan carries the background (host.JobSpec). Past this many bytes PySpark
        # ships a pickled plan as a broadcast, which the driver-side Python process of
        # transformWithState cannot load (BROADCAST_VARIABLE_NOT_LOADED: a W10 background
        # of 50,000 triples failed so), so plans stay inline up to 2 GiB.
        "spark.broadcast.UDFCompressionThreshold": str(2**31 - 1),
        # Python workers fork from a daemon that has imported Sepia already (daemon.py).
        "spark.python.daemon.module": "sepia.runtime.spark.daemon",
        **(SHORT_RUN if config.short else {}),
        **({"spark.executor.extraJavaOptions": LIVE_JVM} if config.live else {}),
        **driver_memory(config.master),
        **config.extra,
    }  # fmt: skip


def driver_memory(master: str) -> dict[str, str]:
    """A local master's driver heap: a quarter of the machine's memory, 1-4 GiB. On a local
    master the driver runs the tasks too, and Spark's own 1 GiB ran out in W7's one-key
    stateful task at 1,000,000 elements (`OutOfMemoryError: Java heap space`). A cluster's
    driver keeps Spark's default; `--conf spark.driver.memory=...` wins either way."""
    if not master.startswith("local"):
        return {}
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):  # no such counters here: Spark's default
        return {}
    return {"spark.driver.memory": f"{max(1, min(4, total // 4 // 2**30))}g"}


def _jvm_running() -> bool:
    """Whether this process has its JVM already (later sessions reuse it);
    PYSPARK_GATEWAY_PORT set: a JVM exists already."""
    return SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ


def _launch_quiet_jvm(settings: dict[str, str]) -> subprocess.Popen | None:
    """Start the JVM gateway with its standard error filtered (once per Python process)
    and return its process (None: it was running)."""
    if _jvm_running():
        return None
    conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
    threading.Thread(
        target=_forward, args=(gateway.proc.stderr,), name="sepia-jvm-stderr", daemon=True
    ).start()
    SparkContext._ensure_initialized(gateway=gateway, conf=conf)
    return gateway.proc


def _forward(lines: Iterable[bytes]) -> None:
    """Copy the JVM's standard error to ours, without the NOISE lines (and the blank line
    the Python worker prints after each), and without the traceback of a Python worker
    that started after Spark had given up waiting for it (`LATE_WORKER`: the run starts the
    query again, `run._await`). A traceback is held until its last line says what it is."""
    dropped = False
    held: list[bytes] = []
    for raw in lines:
        text = raw.decode(errors="replace")
        if held:
            held.append(raw)
            if text[:1] not in (" ", "\t", ""):  # the exception line ends the traceback
                if not any(cause in text for cause in LATE_WORKER):
                    os.write(2, b"".join(held))
                held = []
            continue
        if text.startswith(TRACEBACK):
            held = [raw]
            continue
        if any(p.match(text) for p in NOISE) or (dropped and not text.strip()):
            dropped = True
            continue
        dropped = False
        os.write(2, raw)
    if held:
        os.write(2, b"".join(held))


def spark_session(config: SparkConfig | None = None) -> SparkSession:
    """Start (or reuse) the SparkSession for a run, after checking that Java can run it and
    that a standalone master can be reached."""
    config = config or SparkConfig()
    major = java_major_version()
    if major < 17:
        raise SparkUnavailable(f"Spark 4 needs Java 17 or newer; found Java {major}. {JAVA_HELP}")
    check_master(config.master)
    _prepare_environment(config.master)
    archive = None if _jvm_running() else archive_path()
    settings = session_settings(config, archive_options(archive))
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    handler = signal.getsignal(signal.SIGINT)
    try:
        jvm = _launch_quiet_jvm(settings)
        if jvm is not None:
            finish_archive(archive, jvm, settings["spark.driver.extraJavaOptions"])
        session = builder.getOrCreate()
    except Exception as error:  # py4j / JVM start-up failures carry no common type
        raise SparkUnavailable(f"Spark could not start on {config.master}: {error}") from error
    finally:
        _restore_interrupts(handler)
    session.sparkContext.setLogLevel("ERROR")
    local_checkpoints(session, config.master, config.extra)
    return session


def _restore_interrupts(handler: Any) -> None:
    """Put back the Ctrl-C (SIGINT) handler a new SparkContext replaced. PySpark's cancels
    every job and raises KeyboardInterrupt inside whatever py4j command is running (a logged
    traceback, a broken gateway); a Sepia run counts Ctrl-Cs itself while its query runs
    (`interrupts`) and otherwise ends on Python's KeyboardInterrupt with one line."""
    if handler is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, handler)


@contextmanager
def setting(spark: SparkSession, key: str, value: str | None) -> Iterator[None]:
    """Within: the session's setting `key` at `value` (None: left as it is), then back to
    what it was (Spark's default where it was unset, as `conf.get` reads it)."""
    if value is None:
        yield
        return
    before = spark.conf.get(key)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        spark.conf.set(key, before)
