"""`sepia run` replaying stream files into columnar queries reads them as columns
(``feed.column_batches``): the results, in their order, are those of the element-by-element
replay; `--until` cuts the input at the same element; other runs keep the element path."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from sepia.cli import app
from sepia.runtime.local import feed
from sepia.workloads import generate


@pytest.fixture(scope="module")
def w1(tmp_path_factory) -> Path:
    """W1 (two streams and a background) at 6,000 elements (about 150 s), in the reader's shape."""
    out = tmp_path_factory.mktemp("w1")
    generate("W1", 6000, 7, out)
    return out


def _run(w1: Path, *extra: str) -> str:
    args = ["run", str(w1 / "queries" / "offers-nearby.rq"), "--engine", "local",
            "--format", "jsonl", "--data", str(w1 / "background" / "shops.ttl"),
            "--stream", f"http://example.org/shops#nearby={w1 / 'streams' / 'nearby.trig'}",
            "--stream", f"http://example.org/shops#coupons={w1 / 'streams' / 'coupons.trig'}",
            *extra]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "500"})
    assert result.exit_code == 0, result.output
    return result.stdout


def _paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Which replay each run takes, recorded (columns for files of any size)."""
    monkeypatch.setattr(feed, "COLUMN_BYTES", 0)
    taken: list[str] = []
    for name in ("replay", "replay_columns"):
        original = getattr(feed.Driver, name)

        def recorded(self, inputs, original=original, name=name):
            taken.append(name)
            return original(self, inputs)

        monkeypatch.setattr(feed.Driver, name, recorded)
    return taken


@pytest.mark.parametrize("until", [[], ["--until", "1767225700000"]])  # 100 s
def test_columns_give_the_element_replays_results(w1, monkeypatch, until):
    taken = _paths(monkeypatch)
    columns = _run(w1, *until)
    monkeypatch.setattr("sepia.cli.local.column_batches", lambda *args: None)
    elements = _run(w1, *until)
    assert taken == ["replay_columns", "replay"]
    assert columns == elements
    assert len(columns.splitlines()) > 10
    if until:
        assert len(columns.splitlines()) < len(_run(w1).splitlines())


def test_other_read_options_keep_the_element_path(w1, monkeypatch):
    taken = _paths(monkeypatch)
    _run(w1, "--on-error", "skip")
    assert taken == ["replay"]


def test_small_inputs_keep_the_element_path(w1, monkeypatch):
    """The reader's libraries cost more to load than they save on a small input."""
    taken = _paths(monkeypatch)
    monkeypatch.setattr(feed, "COLUMN_BYTES", 1 << 30)
    _run(w1)
    assert taken == ["replay"]
