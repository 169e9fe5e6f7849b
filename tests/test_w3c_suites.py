"""A missing W3C suite is never a quiet green run: under CI=true pytest stops at its start
naming where the suites are expected; elsewhere one warning line says what was skipped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def run_without_suites(tmp_path: Path, ci: str) -> subprocess.CompletedProcess:
    """pytest on one conformance module, the shared folder pointed at an empty directory."""
    env = {**os.environ, "SEPIA_SHARED": str(tmp_path), "CI": ci}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
         str(TESTS / "semantics" / "test_conformance.py")],
        cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=120,
    )


def test_ci_fails_naming_where_the_suites_are_expected(tmp_path):
    done = run_without_suites(tmp_path, "true")
    assert done.returncode == 4, done.stdout + done.stderr
    expected = tmp_path / "conformance" / "w3c-sparql" / "sparql11"
    assert "CI=true, so the run fails. W3C conformance suites not found" in done.stdout
    assert f"expected at {expected}" in done.stdout


def test_outside_ci_one_warning_line(tmp_path):
    done = run_without_suites(tmp_path, "")
    assert done.returncode == 5, done.stdout + done.stderr  # nothing ran but the skip
    warnings = [line for line in done.stdout.splitlines() if line.startswith("WARNING:")]
    assert len(warnings) == 1 and "SPARQL 1.1 evaluation" in warnings[0], done.stdout
    assert "1 skipped" in done.stdout
