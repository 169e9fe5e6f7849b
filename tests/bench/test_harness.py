"""The harness end to end on tiny workloads: child-process runs, JSON, plots, the CLI.

The first test measures each run in a fresh interpreter, as `sepia bench` does; the others
run the same child code (``run_child``) in this process: an interpreter's start (~5 s, far
more on a loaded machine) per run proves nothing the first test does not."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console
from typer.testing import CliRunner

from sepia.bench import measure
from sepia.bench.harness import BenchOptions, run_bench
from sepia.cli.app import app

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def runs_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -m sepia.bench.measure SYSTEM DATA VARIANT BUDGET`` answered by ``run_child``
    in this process, its JSON line as the child prints it."""

    def child(command: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        name, folder, variant, budget = command[-4:]
        line = json.dumps(measure.run_child(name, Path(folder), variant, float(budget)))
        return subprocess.CompletedProcess(command, 0, line + "\n", "")

    monkeypatch.setattr(measure, "subprocess", SimpleNamespace(run=child))


def _runs(path: Path) -> list[dict]:
    return json.loads(path.read_text())["runs"]


@pytest.mark.long
def test_floor_on_a_tiny_workload_writes_json_and_png(tmp_path: Path) -> None:
    options = BenchOptions(("W11",), systems=("floor",), scale=300, out=tmp_path / "results",
                           data_dir=tmp_path / "data")
    written = run_bench(options, Console(file=open("/dev/null", "w")))  # noqa: SIM115
    names = sorted(p.name.split("-", 3)[-1] for p in written)
    assert names == ["W11-growth.png", "W11-throughput.png", "W11.json", "summary.md"]
    runs = _runs(next(p for p in written if p.suffix == ".json"))
    assert len(runs) == 12  # 2 patterns x 2 strategies x 3 windows, floor only
    assert {(r["status"], r["elements"], r["triples"]) for r in runs} == {("ok", 300, 1500)}
    assert all(r["floor_ratio"] == 1.0 and r["peak_rss_mib"] > 0 for r in runs)
    assert {r["x"] for r in runs} == {6.0, 60.0, 600.0}
    for png in (p for p in written if p.suffix == ".png"):
        assert png.read_bytes()[:8] == PNG_MAGIC


@pytest.mark.usefixtures("runs_in_process")
def test_quick_measures_w11_at_6_and_600_minutes(tmp_path: Path) -> None:
    """--quick leaves out W11's WITHIN 60 minutes (W4's queries, measured in W4), checks
    included."""
    options = BenchOptions(("W11",), systems=("floor", "naive"), quick=True,
                           out=tmp_path / "results", data_dir=tmp_path / "data")
    written = run_bench(options, Console(file=open("/dev/null", "w")))  # noqa: SIM115
    runs = _runs(next(p for p in written if p.suffix == ".json"))
    assert len(runs) == 16 and {r["x"] for r in runs} == {6.0, 600.0}
    assert {r["checked"] for r in runs if r["system"] == "naive"} == {"ok"}


@pytest.mark.usefixtures("runs_in_process")
def test_every_system_has_a_row_and_the_missing_ones_say_why(tmp_path: Path) -> None:
    # 2200 elements: seed 7's W8 has drop-then-rise matches in both variants (297, 168 of
    # them listed; at 1500 none are listed); 4400 took twice as long for nothing more
    options = BenchOptions(("W8",), scale=2200, out=tmp_path, data_dir=tmp_path / "data",
                           repeat=2, systems=("floor", "naive", "local"))
    written = run_bench(options, Console(file=open("/dev/null", "w")))  # noqa: SIM115
    runs = _runs(next(p for p in written if p.suffix == ".json"))
    by_system = {r["system"]: r for r in runs}
    assert set(by_system) == {"floor", "naive", "local"}
    # W8 is EP-SPARQL: the local engine runs it and counts the drop-then-rise matches the
    # hand-written nested loops count.
    counts = {(r["system"], r["variant"]): r["results"] for r in runs}
    for local in (r for r in runs if r["system"] == "local"):
        assert local["status"] == "ok" and local["elements"] == 2200, local["note"]
    assert counts["local", "drop-then-rise"] == counts["naive", "drop-then-rise"] > 0
    floors = {r["variant"]: r for r in runs if r["system"] == "floor"}
    for naive in (r for r in runs if r["system"] == "naive"):
        assert naive["status"] == "ok"
        assert naive["elements"] == floors[naive["variant"]]["elements"] == 2200
        assert naive["results"] > 0 and 0 < naive["p50_ms"] <= naive["p99_ms"]
    # the RDFS variant: the streamed leaf types that only the schema makes :ListedCompany
    # restrict p1 to some companies, so fewer matches, but some
    listed = "drop-then-rise-listed"
    assert counts["local", listed] == counts["naive", listed] > 0
    assert counts["naive", listed] < counts["naive", "drop-then-rise"]
    assert {p.name.split("-", 3)[-1] for p in written} >= {"W8-latency.png", "summary.png"}


@pytest.mark.usefixtures("runs_in_process")
def test_cli_generate_and_quick_bench(tmp_path: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["generate", "--list"])
    assert listed.exit_code == 0 and "W11" in listed.output and "triples" in listed.output
    made = runner.invoke(app, ["generate", "W3", "--scale", "50", "-o", str(tmp_path / "w3")])
    assert made.exit_code == 0, made.output
    assert (tmp_path / "w3" / "queries" / "average-price.rq").exists()
    unknown = runner.invoke(app, ["generate", "W99", "-o", str(tmp_path / "x")])
    assert unknown.exit_code != 0 and "unknown workload" in unknown.output
    quick = runner.invoke(app, ["bench", "W9", "--quick", "--out", str(tmp_path / "r")])
    assert quick.exit_code == 0, quick.output
    assert len(list((tmp_path / "r").glob("*-W9.json"))) == 1


def test_start_up_and_counting_the_written_results_are_not_in_a_run_s_seconds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that took 10 s on the harness's clock, 2 s of them its session's start and 3 s
    reading its written results back to count them, ran for 5 s: both are reported apart
    (the Spark job's pass-through, its yardstick, neither starts a second session nor reads
    its output back)."""
    from sepia.bench.systems import SYSTEMS
    from sepia.bench.systems.base import RunOutcome
    from sepia.workloads import generate

    generate("W3", scale=20, seed=1, out=tmp_path)
    variant = json.loads((tmp_path / "manifest.json").read_text())["variants"][0]["name"]
    clock = iter([100.0, 110.0])
    monkeypatch.setattr(measure.time, "perf_counter", lambda: next(clock))
    fake = SimpleNamespace(run=lambda *_: RunOutcome(20, 60, 7, startup_s=2.0, counting_s=3.0))
    monkeypatch.setitem(SYSTEMS, "fake", fake)
    got = measure.run_child("fake", tmp_path, variant, 60.0)
    assert (got["seconds"], got["startup_s"], got["counting_s"]) == (5.0, 2.0, 3.0)
