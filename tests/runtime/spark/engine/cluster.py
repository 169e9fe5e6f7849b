"""A Spark standalone cluster on loopback, started from the pyspark installation's own
`spark-class`: a master and workers, each in its own process session so that a test can
kill one (with the executors it launched) and stop all of them at the end."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pyspark

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _daemon(*args: str, log: Path) -> subprocess.Popen:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    with log.open("w") as out:
        return subprocess.Popen([str(SPARK_CLASS), *args], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, env=env)  # fmt: skip


class Cluster:
    """A master and `workers` one-core workers; `master` is their spark:// address."""

    def __init__(self, folder: Path, workers: int) -> None:
        port, ui = free_port(), free_port()
        self.master = f"spark://127.0.0.1:{port}"
        self.ui = f"http://127.0.0.1:{ui}/json/"
        self.processes = [_daemon("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                  "--port", str(port), "--webui-port", str(ui),
                                  log=folder / "master.log")]  # fmt: skip
        self.workers = [
            _daemon("org.apache.spark.deploy.worker.Worker", self.master, "--host", "127.0.0.1",
                    "--cores", "1", "--memory", "1g", "--webui-port", str(free_port()),
                    "--work-dir", str(folder / f"work-{n}"), log=folder / f"worker-{n}.log")
            for n in range(workers)
        ]  # fmt: skip
        self.processes += self.workers
        self._wait_for(workers)

    def alive_workers(self) -> int:
        import json

        with urllib.request.urlopen(self.ui, timeout=5) as page:
            return sum(w["state"] == "ALIVE" for w in json.load(page)["workers"])

    def _wait_for(self, workers: int, timeout: float = 90) -> None:
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
