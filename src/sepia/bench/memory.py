"""Peak memory of a peer's process tree (rsp-js's Node, PyFlink and its JVM), sampled from
/proc while it runs.

Why sampling: the peer is a grandchild of the harness, so the measuring child's own VmHWM
does not include it, and ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` is not honest here: it is
the largest single descendant (not the tree: PyFlink's Python and its JVM are two
processes), and Linux keeps ``ru_maxrss`` across exec, so a peer started from a 60 MiB
Python reports at least those 60 MiB. Each process's VmHWM (its own peak resident set) is
read every ``PERIOD_S`` until it exits; the tree's peak is the sum of the processes' peaks,
an upper bound of the largest simultaneous total (they may peak at different times).
Growth in the last period before a process exits can be missed.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

PERIOD_S = 0.05
PROC = Path("/proc")


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (from every thread's children list)."""
    found: list[int] = []
    try:
        for task in (PROC / str(pid) / "task").iterdir():
            text = (task / "children").read_text()
            found += [int(p) for p in text.split()]
    except OSError:  # gone, or no children files (kernel without CONFIG_PROC_CHILDREN)
        pass
    return found


def _hwm_kib(pid: int) -> int | None:
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class TreePeak:
    """Samples the peak resident set of ``process`` and its descendants until it exits:
    ``with TreePeak(popen) as peak: popen.communicate()``, then ``peak.mib``."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.peaks: dict[int, int] = {}  # pid -> its VmHWM in KiB, the last one read
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self.done.is_set():
            pending = [self.process.pid]
            while pending:
                pid = pending.pop()
                if (hwm := _hwm_kib(pid)) is not None:
                    self.peaks[pid] = max(hwm, self.peaks.get(pid, 0))
                pending += _children(pid)
            self.done.wait(PERIOD_S)

    def __enter__(self) -> TreePeak:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.done.set()
        self.thread.join()

    @property
    def mib(self) -> float | None:
        """The sum of the processes' peaks, in MiB (None: nothing could be read)."""
        return sum(self.peaks.values()) / 1024 if self.peaks else None
