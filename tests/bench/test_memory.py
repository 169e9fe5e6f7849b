"""The peak memory of a peer's process tree (sepia.bench.memory), on real processes.

A child holds 120 MiB, then starts a grandchild that holds 60 MiB. Each holds its memory
until the test has seen the sampler read it (no hold of a fixed time, which a loaded
machine could outlast), and each peak is compared with an interpreter's own, measured in
the same test: the bounds follow the holdings, not this machine's interpreter size."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from sepia.bench.memory import TreePeak, _hwm_kib

HOLD = """
import os, subprocess, sys, time
b = bytearray({mib} << 20)
b[::4096] = b'x' * len(b[::4096])  # every page resident
with open({held!r} + '.tmp', 'w') as f:
    f.write(str(os.getpid()))
os.replace({held!r} + '.tmp', {held!r})
while not os.path.exists({release!r}):
    time.sleep(0.01)
"""
SLACK_MIB = 8
"""How far a holder's peak may be from its bytearray plus a bare interpreter's peak."""
DEADLINE = 600.0
"""Seconds a child may take to hold its memory or be read, on a loaded machine (a full suite
beside it); only a failing run waits this long."""


def hold(folder: Path, mib: int) -> str:
    """A script that holds `mib` MiB, writes its pid to held-`mib` and waits for release-`mib`."""
    return HOLD.format(
        mib=mib, held=str(folder / f"held-{mib}"), release=str(folder / f"release-{mib}")
    )


def held(folder: Path, mib: int, seen: dict[int, int] | None = None) -> tuple[int, float]:
    """Once the holder of `mib` MiB holds it (and `seen`, the sampler, has read it since):
    its pid, and its peak so far in MiB; then it is released."""
    path, end = folder / f"held-{mib}", time.monotonic() + DEADLINE
    while not path.exists():
        assert time.monotonic() < end, f"no process held {mib} MiB in {DEADLINE:.0f} s"
        time.sleep(0.01)
    pid = int(path.read_text())
    peak = _hwm_kib(pid)
    assert peak is not None
    while seen is not None and seen.get(pid, 0) < peak:
        assert time.monotonic() < end, f"the sampler did not read {pid} in {DEADLINE:.0f} s"
        time.sleep(0.01)
    (folder / f"release-{mib}").touch()
    return pid, peak / 1024


def test_the_tree_peak_counts_the_child_and_its_descendants(tmp_path: Path) -> None:
    bare = subprocess.Popen([sys.executable, "-c", hold(tmp_path, 0)])
    _, interpreter = held(tmp_path, 0)
    assert bare.wait(DEADLINE) == 0
    parent = (
        hold(tmp_path, 120)
        + f"subprocess.run([sys.executable, '-c', {hold(tmp_path, 60)!r}], check=True)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", parent], text=True)
    with TreePeak(process) as peak:
        child, _ = held(tmp_path, 120, peak.peaks)
        grandchild, _ = held(tmp_path, 60, peak.peaks)
        process.communicate(timeout=DEADLINE)
    assert process.returncode == 0
    assert peak.mib is not None
    assert set(peak.peaks) == {child, grandchild}  # the child and the grandchild were both seen
    assert abs(peak.peaks[child] / 1024 - (interpreter + 120)) < SLACK_MIB
    assert abs(peak.peaks[grandchild] / 1024 - (interpreter + 60)) < SLACK_MIB
    assert abs(peak.mib - (2 * interpreter + 180)) < 2 * SLACK_MIB  # both holdings at once
