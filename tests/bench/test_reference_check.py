"""Result counts against the reference evaluator (sepia.bench.check) on generated data."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from sepia.bench.check import Verdict, check_workload, reference_count
from sepia.bench.harness import BenchOptions, run_bench
from sepia.workloads import generate


def test_w5_counts_agree_with_the_reference_graph_join_included(tmp_path: Path) -> None:
    """W5's GPM A joins GRAPH <http://smartgrid.org/db>: a system that loaded the background
    into the default graph counted 0 (the local row of the old quick run)."""
    manifest = generate("W5", 300, 7, tmp_path)
    (variant,) = manifest.variants
    expected = reference_count(tmp_path, manifest, variant)
    assert expected > 0
    verdicts = check_workload(tmp_path, manifest, ["floor", "naive", "local"])
    assert set(verdicts) == {("naive", "smart-grid"), ("local", "smart-grid")}
    assert {v.text for v in verdicts.values()} == {"ok"}
    assert {v.system for v in verdicts.values()} == {expected}


def test_verdict_texts() -> None:
    assert Verdict(12, 12).text == "ok"
    assert Verdict(12, 1_500).text == "differs (ref 12, got 1,500)"
    assert Verdict("took over 10 s", None).text == "not checked: took over 10 s"
    assert Verdict(12, "Unsupported: PARTITION BY").text == "not checked: Unsupported: PARTITION BY"


def test_bench_rows_carry_the_check(tmp_path: Path) -> None:
    """W7 (SPAseq Q5): the naive matcher once took B & C at A's own instant and counted
    more than the reference; the row now says ok, the floor row has nothing to check. W9
    (CQELS-CEP, evaluated at every arrival) was too slow for the reference to check."""
    options = BenchOptions(("W7", "W9"), systems=("floor", "naive"), scale=600,
                           out=tmp_path / "results", data_dir=tmp_path / "data")
    written = run_bench(options, Console(file=open("/dev/null", "w")))  # noqa: SIM115
    documents = {p.name.split("-")[-1]: json.loads(p.read_text())
                 for p in written if p.suffix == ".json"}
    checked = {(r["system"], r["checked"]) for r in documents["W7.json"]["runs"]}
    assert checked == {("floor", ""), ("naive", "ok")}
    (naive,) = [r for r in documents["W9.json"]["runs"] if r["system"] == "naive"]
    assert naive["checked"] == "ok"


def test_w10_variants_named_after_their_scale_are_checked(tmp_path: Path) -> None:
    """W10's variants are named after the KB size, which follows the scale: the check data's
    variants (kb60...) stand for the measured ones (kb100...) by position."""
    options = BenchOptions(("W10",), systems=("naive",), scale=100, out=tmp_path / "results",
                           data_dir=tmp_path / "data")
    written = run_bench(options, Console(file=open("/dev/null", "w")))  # noqa: SIM115
    (path,) = [p for p in written if p.suffix == ".json"]
    runs = json.loads(path.read_text())["runs"]
    assert {r["variant"]: r["checked"] for r in runs if r["system"] == "naive"} == {
        "big-after-small-kb100": "ok", "big-after-small-kb1000": "ok",
        "big-after-small-kb10000": "ok"}


def test_the_floor_alone_never_runs_the_reference(tmp_path: Path, monkeypatch) -> None:
    """The floor has no results to check: with no other system the slow judge is not asked."""
    import sepia.bench.check as check

    def judged(*args: object) -> int:
        raise AssertionError("the reference ran")

    monkeypatch.setattr(check, "reference_count", judged)
    manifest = generate("W5", 300, 7, tmp_path)
    assert check_workload(tmp_path, manifest, ["floor"]) == {}
