"""`sepia run --engine spark` when things go wrong: no Java, no master, Ctrl-C."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sepia.cli import app

from ..evaluations import evaluations

E1 = Path(__file__).parents[4] / "examples" / "e1-shops-coupons"
STREAMS = {
    "http://example.org/nearby": "stream-nearby.trig",
    "http://example.org/coupons": "stream-coupons.trig",
}


def run_args(streams: dict[str, Path]) -> list[str]:
    args = ["run", str(E1 / "query.rq"), "--data", str(E1 / "background.ttl")]
    for iri, path in streams.items():
        args += ["--stream", f"{iri}={path}"]
    return args


E1_ARGS = run_args({iri: E1 / name for iri, name in STREAMS.items()})
DEADLINE = 600.0
"""Seconds a Spark run may take to finish a batch, stop, or resume on a loaded 2-core machine
(~2 min idle); only a failing run waits this long."""


def test_an_unreachable_master_fails_at_once_with_what_to_do() -> None:
    result = CliRunner().invoke(app, [*E1_ARGS, "--master", "spark://127.0.0.1:1"])
    assert result.exit_code == 1
    assert "cannot reach the Spark master spark://127.0.0.1:1" in result.stderr
    assert "Connection refused" in result.stderr and "--master 'local[*]'" in result.stderr


def test_without_java_the_run_says_how_to_install_it(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path), "JAVA_HOME": None}
    result = CliRunner().invoke(app, E1_ARGS, env=env)
    assert result.exit_code == 1
    assert "no java was found" in result.stderr and "openjdk-17" in result.stderr


@pytest.mark.long
@pytest.mark.spark
def test_ctrl_c_stops_a_followed_run_and_the_checkpoint_resumes_it(spark, tmp_path: Path) -> None:
    """A followed run over two watched folders is interrupted (SIGINT) once its first batch is
    done: exit 130, a message, the finished batches' results kept. The same command without
    --follow then resumes from the checkpoint and ends with E1's whole answer. The followed
    run is a process of its own (it gets the signal; its standard error is the user's); the
    resumed one runs in the suite's session, as `sepia run` reuses a running one: a second
    JVM and its Python workers starting cold took half of the test's ~90 s (at load 7)."""
    folders = {}
    for iri, name in STREAMS.items():
        folders[iri] = tmp_path / name.removesuffix(".trig")
        folders[iri].mkdir()
        shutil.copy(E1 / name, folders[iri])
    out, errors, checkpoint = tmp_path / "out.jsonl", tmp_path / "stderr.txt", tmp_path / "ck"
    command = [sys.executable, "-m", "sepia", *run_args(folders), "--master", "local[2]",
               "--checkpoint", str(checkpoint), "--output", str(out)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[4] / "src")}
    with errors.open("w") as stderr:
        child = subprocess.Popen([*command, "--follow"], stderr=stderr, env=env)
    try:
        deadline = time.monotonic() + DEADLINE
        while "batch 0:" not in errors.read_text():  # the job's progress line: a batch is done
            assert child.poll() is None, errors.read_text()
            assert time.monotonic() < deadline, f"no batch finished in {DEADLINE:.0f} s"
            time.sleep(0.5)
        child.send_signal(signal.SIGINT)
        assert child.wait(DEADLINE) == 130
    finally:
        child.kill()
    told = errors.read_text()
    assert "stopping after the batch in progress" in told
    assert "Python worker" not in told and "Setting default log level" not in told
    said = " ".join(told.split())  # the message is wrapped at the terminal's width
    assert "stopped by Ctrl-C after" in said and f"--checkpoint {checkpoint}" in said
    expected = evaluations((E1 / "expected.jsonl").read_text().splitlines())
    before = evaluations(out.read_text().splitlines())  # whole evaluations: a t leaves in one batch
    assert before == expected[: len(before)]

    resumed = CliRunner().invoke(app, command[3:])
    assert resumed.exit_code == 0, resumed.output
    assert evaluations(out.read_text().splitlines()) == expected
