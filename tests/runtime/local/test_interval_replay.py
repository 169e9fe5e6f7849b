"""`sepia run` replaying interval-stamped stream files into a row-engine query (CQELS-CEP
over W9's subway network, the row engine forced: by default it runs on the columnar core)
reads them with the columnar reader's text kernels (``feed.file_elements``): the results,
in their order, are those of the row reader's replay; other read options keep the row
reader. On the columnar core (elements whose start and end lines agree are points, read
as columns) its lines are the row engine's."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from sepia.cli import app
from sepia.engine.columnar import frontend
from sepia.runtime.local import feed
from sepia.workloads import generate

NS = "http://example.org/transport#"


@pytest.fixture(scope="module")
def w9(tmp_path_factory) -> Path:
    """W9 at 4,000 elements: each a start line, an end line and a graph line."""
    out = tmp_path_factory.mktemp("w9")
    generate("W9", 4000, 7, out)
    return out


def _run(w9: Path, *extra: str) -> str:
    args = ["run", str(w9 / "queries" / "repeated-delays.rq"), "--engine", "local",
            "--format", "jsonl", "--data",
            f"{NS}transportationMap={w9 / 'background' / 'transportation-map.ttl'}",
            "--stream", f"{NS}publicTransport={w9 / 'streams' / 'public-transport.trig'}",
            *extra]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "500"})
    assert result.exit_code == 0, result.output
    return result.stdout


def _read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The elements each run read through the columnar reader (columns for any size)."""
    monkeypatch.setattr(feed, "COLUMN_BYTES", 0)
    counts: list[int] = []
    original = frontend.stream_elements

    def counted(*args, **kwargs):
        elements = list(original(*args, **kwargs))
        counts.append(len(elements))
        return iter(elements)

    monkeypatch.setattr(frontend, "stream_elements", counted)
    return counts


def test_intervals_read_as_columns_give_the_row_readers_results(w9, monkeypatch):
    monkeypatch.setenv("SEPIA_ENGINE_PATH", "rows")
    counts = _read(monkeypatch)
    columns = _run(w9)
    monkeypatch.setattr(feed, "COLUMN_BYTES", 1 << 40)
    rows = _run(w9)
    assert counts == [4000]
    assert columns == rows
    assert len(columns.splitlines()) > 10


def test_w9_on_the_columnar_core_gives_the_row_engines_lines(w9, monkeypatch):
    monkeypatch.setattr(feed, "COLUMN_BYTES", 0)
    columnar = _run(w9)
    monkeypatch.setenv("SEPIA_ENGINE_PATH", "rows")
    assert columnar == _run(w9)
    assert len(columnar.splitlines()) > 10


def test_other_read_options_keep_the_row_reader(w9, monkeypatch):
    monkeypatch.setenv("SEPIA_ENGINE_PATH", "rows")
    counts = _read(monkeypatch)
    _run(w9, "--on-error", "skip")
    assert counts == []
