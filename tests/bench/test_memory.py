"""The peak memory of a peer's process tree (sepia.bench.memory), on real processes."""

from __future__ import annotations

import subprocess
import sys

from sepia.bench.memory import TreePeak

# A child that holds 120 MiB, then starts a grandchild that holds 60 MiB, both for a while.
HOLD = "b = bytearray({mib} << 20); b[::4096] = b'x' * len(b[::4096]); import time; time.sleep(0.6)"
PARENT = f"""
import subprocess, sys
{HOLD.format(mib=120)}
subprocess.run([sys.executable, "-c", {HOLD.format(mib=60)!r}], check=True)
"""


def test_the_tree_peak_counts_the_child_and_its_descendants() -> None:
    process = subprocess.Popen([sys.executable, "-c", PARENT], text=True)
    with TreePeak(process) as peak:
        process.communicate()
    assert process.returncode == 0
    assert peak.mib is not None
    assert len(peak.peaks) == 2  # the child and the grandchild were both seen
    assert 180 <= peak.mib < 180 + 2 * 60  # both holdings, plus two interpreters at most
