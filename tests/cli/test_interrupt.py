"""Ctrl-C on a local run: one stops it promptly, keeping every result already written, with
no traceback (the gap in time that used to make it wait is tests/engine/test_time_gaps.py).

Promptly is counted in the run's own CPU time, which a loaded machine does not stretch as
it stretches wall time: the whole run takes ~30 CPU seconds, a stop about one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

QUERY = """PREFIX : <http://example.org/>
REGISTER RSTREAM :q AS SELECT ?s FROM NAMED WINDOW :w ON :s [RANGE 3 STEP 1]
WHERE { WINDOW :w { ?s :p ?o } }
"""
DEADLINE = 600.0
"""Seconds the run may take to write its first results, or to end, on a loaded machine (a full
suite beside it; promptness is counted in CPU time, STOP_CPU_S)."""
STOP_CPU_S = 5.0
"""CPU seconds the run may spend after Ctrl-C (finishing the element in hand, closing)."""


def cpu_seconds(pid: int) -> float:
    """The user and system CPU time a running process has used."""
    fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def reap(process: subprocess.Popen) -> float:
    """Wait for the process to end (failing after DEADLINE); its CPU seconds in all."""
    end = time.monotonic() + DEADLINE
    while not (waited := os.wait4(process.pid, os.WNOHANG))[0]:
        assert time.monotonic() < end, f"the run did not end {DEADLINE:.0f} s after Ctrl-C"
        time.sleep(0.05)
    process.returncode = os.waitstatus_to_exitcode(waited[1])
    return waited[2].ru_utime + waited[2].ru_stime


def test_one_ctrl_c_stops_promptly_and_keeps_the_results(tmp_path: Path) -> None:
    stream = tmp_path / "s.trig"
    lines = ["@prefix : <http://example.org/> .", "@prefix prov: <http://www.w3.org/ns/prov#> ."]
    lines += [f":e{i} {{ :s{i} :p :o }} :e{i} prov:generatedAtTime {i} ." for i in range(100_000)]
    stream.write_text("\n".join(lines) + "\n")
    query = tmp_path / "q.rq"
    query.write_text(QUERY)
    out = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "sepia", "run", str(query), "--stream",
               f"http://example.org/s={stream}", "--engine", "local", "--output", str(out)]
    stderr = tmp_path / "stderr.txt"
    with stderr.open("w") as errors_file:
        process = subprocess.Popen(command, stderr=errors_file)
    try:
        end = time.monotonic() + DEADLINE
        while not out.exists() or out.stat().st_size == 0:
            assert process.poll() is None, stderr.read_text()
            assert time.monotonic() < end, f"no result written in {DEADLINE:.0f} s"
            time.sleep(0.1)
        before = cpu_seconds(process.pid)
        process.send_signal(signal.SIGINT)
        after = reap(process) - before
    finally:
        if process.returncode is None:
            process.kill()
            process.wait()
    errors = stderr.read_text()
    assert after < STOP_CPU_S, f"{after:.1f} CPU seconds after Ctrl-C"
    assert process.returncode == 0, errors
    assert "Traceback" not in errors
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert 0 < len(results) < 3 * 100_000  # stopped early, every line whole
    times = [r["t"] for r in results]
    assert times == sorted(times)
