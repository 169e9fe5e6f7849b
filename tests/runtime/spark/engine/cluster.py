"""A Spark standalone cluster on loopback, started from the pyspark installation's own
`spark-class`: a master and workers, each in its own process session so that a test can
kill one (with the executors it launched) and stop all of them at the end.

Every daemon binds its ports itself (port 0: any free one): the master's address and web UI
are read from its log once it says it listens, so no port is picked here and then found
taken by another process before the daemon binds it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pyspark

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"


READY_S = 600.0
"""Seconds a daemon may take to say it is up: ~10 s idle, minutes on a loaded 2-core machine
(three JVMs start at once); only a broken cluster waits this long."""


def announced(log: Path, pattern: str, process: subprocess.Popen, timeout: float = READY_S) -> str:
    """The first match of ``pattern``'s group in a daemon's log, waiting for it to appear
    (the daemon's readiness signal)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, log.read_text(errors="replace"))
        if found:
            return found.group(1)
        if process.poll() is not None:
            raise RuntimeError(f"{log.name}: the daemon exited: {log.read_text()[-2000:]}")
        time.sleep(0.2)
    raise TimeoutError(f"{log.name} never said {pattern!r}")


def _daemon(*args: str, log: Path) -> subprocess.Popen:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    with log.open("w") as out:
        return subprocess.Popen([str(SPARK_CLASS), *args], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, env=env)  # fmt: skip


class Cluster:
    """A master and `workers` one-core workers; `master` is their spark:// address."""

    def __init__(self, folder: Path, workers: int) -> None:
        log = folder / "master.log"
        master = _daemon("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                         "--port", "0", "--webui-port", "0", log=log)  # fmt: skip
        self.processes = [master]
        self.master = announced(log, r"Starting Spark master at (spark://\S+)", master)
        ui = announced(log, r"MasterWebUI.* started at http://[^:\s]+:(\d+)", master)
        self.ui = f"http://127.0.0.1:{ui}/json/"
        self.workers = [
            _daemon("org.apache.spark.deploy.worker.Worker", self.master, "--host", "127.0.0.1",
                    "--cores", "1", "--memory", "1g", "--webui-port", "0",
                    "--work-dir", str(folder / f"work-{n}"), log=folder / f"worker-{n}.log")
            for n in range(workers)
        ]  # fmt: skip
        self.processes += self.workers
        self._wait_for(workers)

    def alive_workers(self) -> int:
        import json

        with urllib.request.urlopen(self.ui, timeout=30) as page:
            return sum(w["state"] == "ALIVE" for w in json.load(page)["workers"])

    def _wait_for(self, workers: int, timeout: float = READY_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.alive_workers() >= workers:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise TimeoutError(f"the standalone cluster did not get {workers} workers")

    def kill(self, process: subprocess.Popen) -> None:
        """SIGKILL a daemon and everything it started (a worker's executors)."""
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def stop(self) -> None:
        for process in reversed(self.processes):
            self.kill(process)
