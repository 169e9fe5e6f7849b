"""The driver JVM's class archive (Java's application class-data sharing, AppCDS).

A cold Spark driver loads, parses and verifies some fifteen thousand classes before its
first job; on the demo that was about half the JVM's CPU time before the first result
(11 of 19 s, at load 13 on 2 cores: 84 s to the first result without the archive, 50 s
with it). Java can instead map the classes, already parsed and verified, from an archive
that an earlier run wrote when its JVM exited (`-XX:ArchiveClassesAtExit`).

So the first Spark run on a machine writes the archive as its JVM exits (the run waits for
it after its last result, once), and every later run starts from it. The archive belongs to
one `java` and one PySpark installation (both in its name); a JVM that cannot use it (it
was replaced, its classpath differs) just loads classes as before. Its messages are off:
the JVM writes them to standard output, where results go.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from sepia.runtime.spark.checkpoint_files import CHECKPOINT_JAR

DUMP_WAIT_S = 120.0
"""How long a run that writes the archive waits at exit for its JVM to finish writing."""
_ABANDONED: list[bool] = []
"""Set by `abandon_archive`: this run ends without waiting for the archive."""
QUIET = "-Xlog:cds*=off -Xlog:class+path*=off"


def archive_path() -> Path | None:
    """Where the archive of this `java` and this PySpark lives (None: no `java` found)."""
    import pyspark

    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        return None
    real = os.path.realpath(java)
    jar = hashlib.sha1(CHECKPOINT_JAR.read_bytes()).hexdigest()  # on the class path too
    identity = f"{real} {os.stat(real).st_mtime_ns} {pyspark.__file__} {pyspark.__version__} {jar}"
    digest = hashlib.sha1(identity.encode()).hexdigest()[:12]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sepia"
    return cache / f"spark-classes-{digest}.jsa"


def archive_options(archive: Path | None) -> str:
    """The JVM options that use the archive, or write it at exit when there is none yet
    (to a name of this process's own: `finish_archive` renames it once complete)."""
    if archive is None:
        return ""
    _drop_orphans(archive)
    if archive.exists():
        return f"-XX:SharedArchiveFile={archive} {QUIET}"
    try:
        archive.parent.mkdir(parents=True, exist_ok=True)
    except OSError:  # no writable cache folder: start without an archive
        return ""
    return f"-XX:ArchiveClassesAtExit={_partial(archive)} {QUIET}"


def finish_archive(archive: Path | None, jvm: subprocess.Popen, options: str) -> None:
    """When this process exits, let the JVM it started with `options` (which writes the
    archive as it exits, unless a run's own options replaced `archive_options`') finish,
    then put the archive in place."""
    if archive is None or f"-XX:ArchiveClassesAtExit={_partial(archive)}" not in options:
        return

    atexit.register(complete_archive, archive, jvm)


def complete_archive(archive: Path, jvm: subprocess.Popen) -> None:
    """End the JVM's input, wait for it to write the archive as it exits, and put the
    archive in place (or drop what it left, if it failed or took too long)."""
    partial = _partial(archive)
    if _ABANDONED:  # the JVM writes it all the same; the next run drops it (`_drop_orphans`)
        return
    _end_accumulator_server()
    try:
        if jvm.stdin is not None:
            jvm.stdin.close()  # the gateway JVM exits when its standard input ends
        done = jvm.wait(DUMP_WAIT_S) == 0
    except (OSError, subprocess.TimeoutExpired):
        done = False
    if done and partial.exists():
        partial.rename(archive)
    else:
        partial.unlink(missing_ok=True)


def abandon_archive() -> None:
    """End this run without waiting for its JVM to write the archive (the reader of the
    results went away: the run must end at once); a later run writes it."""
    _ABANDONED.append(True)


def _end_accumulator_server() -> None:
    """PySpark's accumulator server reads from the JVM until the JVM exits; still reading
    then, it prints an EOFError traceback while this process waits for the archive."""
    from pyspark import SparkContext

    server = getattr(SparkContext._active_spark_context, "_accumulatorServer", None)
    if server is not None:
        server.shutdown()


def _partial(archive: Path) -> Path:
    return archive.with_name(f".{archive.name}.{os.getpid()}")


def _drop_orphans(archive: Path) -> None:
    """Drop the partial archives (~200 MB each) of runs that died before `complete_archive`
    (killed, or their JVM outlived them): nobody else would ever remove them. Those of other
    installations too (another `java`, another virtual environment's PySpark), whose own runs
    may never come again (a machine running tests from many fresh clones gathered 5 GB)."""
    for partial in archive.parent.glob(".spark-classes-*.jsa.*"):
        pid = partial.name.rsplit(".", 1)[1]
        if pid.isdigit() and not _running(int(pid)):
            partial.unlink(missing_ok=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # somebody else's process: alive
        return True
    return True
