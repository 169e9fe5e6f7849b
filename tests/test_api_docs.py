"""The Python API's reference is generated from its docstrings: every entry point has a
runnable example (run here as a doctest from the repository root), and pdoc builds the
reference pages (docs/api.md says how)."""

from __future__ import annotations

import doctest
import inspect
from pathlib import Path

import pytest

import sepia

ROOT = Path(__file__).parents[1]
ENTRY_POINTS = ["Result", "Session", "evaluate_reference", "load_background", "parse_query",
                "read_stream", "run_local"]  # fmt: skip


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_every_entry_point_has_a_runnable_example(name: str, monkeypatch):
    monkeypatch.chdir(ROOT)
    entry = getattr(sepia, name)
    module = inspect.getmodule(entry)
    finder = doctest.DocTestFinder(recurse=False)
    tests = [t for t in finder.find(entry, name, module=module) if t.examples]
    assert tests, f"sepia.{name} has no example in its docstring"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


@pytest.mark.filterwarnings("ignore:Found .__version__.:UserWarning")
def test_the_reference_builds_with_every_entry_point(tmp_path: Path):
    pdoc = pytest.importorskip("pdoc")
    pdoc.pdoc("sepia", output_directory=tmp_path)
    page = (tmp_path / "sepia.html").read_text(encoding="utf-8")
    for name in ENTRY_POINTS:
        assert f'id="{name}"' in page, name
    assert "load_background" in page and "push_graph" in page
