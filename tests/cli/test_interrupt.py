"""Ctrl-C on a local run: one stops it promptly, keeping every result already written, with
no traceback (the gap in time that used to make it wait is tests/engine/test_time_gaps.py)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

QUERY = """PREFIX : <http://example.org/>
REGISTER RSTREAM :q AS SELECT ?s FROM NAMED WINDOW :w ON :s [RANGE 3 STEP 1]
WHERE { WINDOW :w { ?s :p ?o } }
"""


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
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        started = time.monotonic()
        while (not out.exists() or out.stat().st_size == 0) and time.monotonic() - started < 60:
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        _, errors = process.communicate(timeout=15)
    finally:
        process.kill()
    assert process.returncode == 0, errors
    assert "Traceback" not in errors
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert 0 < len(results) < 3 * 100_000  # stopped early, every line whole
    times = [r["t"] for r in results]
    assert times == sorted(times)
