"""The user docs (docs/, README.md) stand alone: a reader has neither the project's shared
folder, nor its specification files, nor its issue tracker, so no page sends them there;
papers are named by title and authors (docs/semantics.md lists them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PAGES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
NOT_THERE = re.compile(
    r"\.\./shared|\bseeds?/|\bseed 00\d|\b[Ii]ssues? #?\d|\b(?:language|io)\.md\b"
    r"|\bspec/\w+\.md|\bdesign/\w+\.md"
)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_page_points_at_nothing_the_reader_lacks(page: Path):
    found = [f"{page.name}:{n}: {line.strip()}"
             for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1)
             if NOT_THERE.search(line)]  # fmt: skip
    assert not found, "\n".join(found)


def test_the_papers_are_named_by_title_and_authors():
    legend = (ROOT / "docs" / "semantics.md").read_text(encoding="utf-8")
    for title in ("RSP-QL Semantics", "Capture Event Pattern Matching", "Towards Enriching CQELS",
                  "EP-SPARQL: A Unified Language", "Semantic Complex Event Processing"):
        assert title in " ".join(legend.split()), title
