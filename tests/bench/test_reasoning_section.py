"""The stream-reasoning section of `sepia bench` (EP-SPARQL Test 2, issue #8)."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from sepia.bench import reasoning
from sepia.bench.harness import BenchOptions, run_bench
from sepia.cli.app import app


def test_quick_section_rows_agree_with_the_reference_closure(tmp_path: Path) -> None:
    options = BenchOptions(("reasoning",), quick=True, out=tmp_path)
    written = run_bench(options, Console(file=open("/dev/null", "w")))  # noqa: SIM115
    (document,) = [json.loads(p.read_text()) for p in written if p.suffix == ".json"]
    assert document["workload"]["id"] == "reasoning"
    runs = {r["system"]: r for r in document["runs"]}
    assert list(runs) == list(reasoning.METHODS)
    fast = [runs[m] for m in ("expansion", "support_counter", "sparql_path")]
    # every streamed triple is decided, and the three fast methods find the same instances
    assert {(r["elements"], r["status"], r["checked"]) for r in fast} == {
        (reasoning.QUICK.triples, "ok", "ok")}
    assert len({r["results"] for r in fast}) == 1
    assert 0 < fast[0]["results"] < reasoning.QUICK.triples  # some plants are fungi
    judge = runs["reclose"]
    assert (judge["elements"], judge["checked"]) == (reasoning.QUICK.reclose, "(the judge)")
    assert all(0 < r["p50_ms"] <= r["p99_ms"] for r in runs.values())


def test_bench_help_lists_the_section() -> None:
    shown = CliRunner().invoke(app, ["bench", "--help"], terminal_width=200)
    assert shown.exit_code == 0 and "reasoning" in shown.output
