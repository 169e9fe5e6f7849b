"""A new user's first steps in a terminal 80 columns wide, as the real `sepia` process
runs them: help, every example folder, then the usual mistakes (a typo in a query, a
mistyped stream IRI, a missing file). Nothing prints a Python traceback or a line wider
than 80 columns, and every error says what to do. The sub-commands' help is rendered in this
process (the same typer app and COLUMNS, ~0.2 s each instead of a ~10 s interpreter start);
the top-level help and everything else run as the real process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sepia.cli import app

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples"
E1 = EXAMPLES / "e1-shops-coupons"


def sepia(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "sepia", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=600)  # fmt: skip


def in_process(*args: str) -> subprocess.CompletedProcess[str]:
    """``sepia ARGS`` through the same typer app in this process, 80 columns wide."""
    done = CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})
    return subprocess.CompletedProcess(["sepia", *args], done.exit_code, done.stdout, done.stderr)


def readable(done: subprocess.CompletedProcess[str]) -> str:
    text = done.stdout + done.stderr
    assert "Traceback" not in text, text
    wide = [line for line in text.splitlines() if len(line) > 80]
    assert not wide, "\n".join(wide)
    return text


def test_help_fits_80_columns_and_says_where_to_start():
    top = sepia("--help")
    commands = (["run"], ["bench"], ["validate"], ["check"], ["explain"], ["generate"],
                ["compare"])  # fmt: skip
    for done in (top, *(in_process(*command, "--help") for command in commands)):
        assert done.returncode == 0, done.stderr
        text = readable(done)
        options = [line for line in text.splitlines() if line.startswith("  --")]
        assert not [line for line in options if "<list[" in line or "<str>" in line], options
        assert "…" not in text
    assert "sepia run examples/e1-shops-coupons" in top.stdout
    assert "mqtt://" in in_process("run", "--help").stdout


@pytest.mark.parametrize(
    "example", sorted(p.name for p in EXAMPLES.iterdir() if (p / "run.json").exists())
)
def test_every_example_folder_runs_as_it_is(example: str):
    done = sepia("run", f"examples/{example}", "--engine", "reference", "--format", "table")
    assert done.returncode == 0, done.stderr
    text = readable(done)
    assert " t=" in text  # at least one evaluation printed
    assert "<http://example.org/" not in text  # shortened with the query's prefixes


def test_a_typo_in_a_query_points_at_it(tmp_path: Path):
    query = tmp_path / "typo.rq"
    query.write_text((E1 / "query.rq").read_text().replace("SELECT", "SELEC", 1))
    done = sepia("run", "typo.rq", "--engine", "local",
                 "--stream", f"http://example.org/nearby={E1 / 'stream-nearby.trig'}", cwd=tmp_path)
    assert done.returncode == 1
    text = readable(done)
    assert "typo.rq:" in text and "unexpected 'SELEC'" in text and "^" in text
    assert "fix the query where the caret points" in text


def test_a_mistyped_stream_iri_gets_the_closest_one():
    e1 = "examples/e1-shops-coupons"
    done = sepia("run", e1, "--engine", "local",
                 "--stream", f"http://example.org/nearbi={e1}/stream-nearby.trig",
                 "--stream", f"http://example.org/coupons={e1}/stream-coupons.trig")
    assert done.returncode == 1
    text = readable(done)
    assert "no --stream given for <http://example.org/nearby>" in text
    assert "did you mean http://example.org/nearby?" in " ".join(text.split())


def test_a_missing_file_is_named_with_what_to_do():
    done = sepia("run", "examples/e1-shops-coupons/querry.rq", "--engine", "local")
    assert done.returncode == 2
    text = readable(done)
    assert "querry.rq" in text and "does not exist" in text and "sepia run --help" in text
    done = sepia("run", "examples/e1-shops-coupons", "--engine", "local",
                 "--stream", "http://example.org/nearby=nearby.trig")
    assert done.returncode == 1
    text = readable(done)
    assert "nearby.trig: no such file or directory" in text and "check the path" in text
