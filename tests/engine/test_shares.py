"""The differential tests compare something: a test whose examples mostly had an empty
reference answer fails, on its own (``shares.py``, a plugin of every run).

Worked example: 40 examples whose answer is empty unless the number drawn ends in 0
have about 10% non-empty answers drawn; ``judge`` keeps one empty answer in eight, so
about 10 / (10 + 90 / 8) = 47% of the compared examples answered, under the 70% floor.
Answering unless it ends in 0 gives about 90% drawn and 99% compared: above it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .shares import FLOOR, KEEP_EMPTY, Tally, verdict

FAMILIES = '''
from types import SimpleNamespace

from hypothesis import given, settings, strategies as st

from engine.shares import judge

ROW = SimpleNamespace(binding={"x": 1}, triples=None, boolean=None)


@settings(max_examples=40, database=None, derandomize=True)
@given(st.integers(0, 10**9))
def test_mostly_silent(n):
    judge(f"q{n}", n, [ROW] if n % 10 == 0 else [])


@settings(max_examples=40, database=None, derandomize=True)
@given(st.integers(0, 10**9))
def test_mostly_answering(n):
    judge(f"q{n}", n, [] if n % 10 == 0 else [ROW])


def test_plain_and_silent():
    judge("q", None, [])  # one example, outside hypothesis: neither rejected nor judged
'''


def test_each_family_mostly_compares_non_empty_answers(tmp_path):
    """Run in a pytest of its own with the plugin: only the mostly silent test fails, and
    says its share; the end of the run sums the shares up."""
    (tmp_path / "test_families.py").write_text(FAMILIES)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    tests = Path(__file__).parents[1]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "engine.shares", "-p", "no:cacheprovider",
         "-rf", "-v", "test_families.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={"PYTHONPATH": str(tests), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    out = done.stdout
    assert "1 failed, 2 passed" in out, out
    assert "FAILED test_families.py::test_mostly_silent - " in out
    assert "of the 40 examples compared had a non-empty reference answer" in out
    assert "under the 70% floor" in out
    assert "non-empty reference answers: 2 differential tests judged, lowest" in out
    assert "test_families.py::test_mostly_answering" in out  # -v: each test's share


def test_the_floor_judges_enough_examples_only():
    assert verdict(Tally(compared=9, answered=0, drawn=9)) is None
    assert verdict(Tally(compared=10, answered=7, drawn=20, drawn_answered=7)) is None
    low = verdict(Tally(compared=10, answered=6, drawn=20, drawn_answered=6))
    assert low is not None and low.startswith("60.0% of the 10 examples compared")
    assert "(30.0% of the 20 drawn)" in low
    assert (FLOOR, KEEP_EMPTY) == (0.70, 8)
