"""docs/engine.md's Python example ("Using it") runs as written, from the repository root:
its asserts hold the hand-derived results (RANGE 10 STEP 5 closes (0, 10] and (5, 15])."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_the_engine_docs_example_runs_as_written(monkeypatch):
    text = (ROOT / "docs" / "engine.md").read_text(encoding="utf-8")
    section = text[text.index("## Using it") :]
    example = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert example is not None
    monkeypatch.chdir(ROOT)
    exec(compile(example.group(1), "docs/engine.md", "exec"), {})
