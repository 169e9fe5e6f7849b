"""`sepia bench`: generate (or reuse) each workload's data, measure every system on every
variant in a fresh process, and write the table, the JSON and the plots."""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from sepia.bench import check, parsing, reasoning, report, soak
from sepia.bench.measure import Measurement, measure
from sepia.bench.systems import DEFAULT_SYSTEMS, SYSTEMS, System
from sepia.workloads import Workload, generate, workload
from sepia.workloads.manifest import MANIFEST, Manifest, Variant

QUICK_BUDGET_S = 2.0  # per run in --quick: enough for the smoke test, bounded in total
FULL_BUDGET_S = 300.0
QUICK_CHECK_BUDGET_S = 20.0  # per evaluation of the check data in --quick (W8: ~5 s idle)


@dataclass(frozen=True, slots=True)
class BenchOptions:
    workloads: tuple[str, ...]
    systems: tuple[str, ...] | None = None  # None: every system that is not opt-in
    quick: bool = False
    scale: int | None = None
    seed: int = 7
    out: Path = Path("bench-results")
    data_dir: Path | None = None  # None: a temporary directory, removed afterwards
    budget_s: float | None = None
    repeat: int = 1  # runs per measurement; the one with the best throughput is kept
    check: bool = True  # result counts against the reference evaluator's on the check data

    @property
    def budget(self) -> float:
        if self.budget_s is not None:
            return self.budget_s
        return QUICK_BUDGET_S if self.quick else FULL_BUDGET_S

    @property
    def check_budget(self) -> float:
        return QUICK_CHECK_BUDGET_S if self.quick else check.CHECK_BUDGET_S

    def measures(self, spec: Workload, variant: Variant) -> bool:
        """Whether the run measures this variant (a quick run: some points of W11's axis)."""
        return not self.quick or spec.quick_x is None or variant.x in spec.quick_x

    def scale_of(self, spec: Workload) -> int:
        if self.scale is not None:
            return self.scale
        return spec.quick_scale if self.quick else spec.scale


def dataset(spec: Workload, scale: int, seed: int, root: Path) -> tuple[Path, Manifest]:
    """The workload's data under ``root``, generated unless the same scale and seed is there."""
    directory = root / f"{spec.id}-s{scale}-seed{seed}"
    if (directory / MANIFEST).exists():
        try:
            return directory, Manifest.load(directory)
        except (KeyError, TypeError):  # written by an older generator: make it again
            pass
    return directory, generate(spec.id, scale, seed, directory)


def _fastest(name: str, data: Path, manifest: Manifest, variant: str,
             options: BenchOptions) -> Measurement:
    runs = [measure(name, data, manifest, variant, options.budget) for _ in range(options.repeat)]
    return max(runs, key=lambda run: run.triples_per_s or 0.0)


def _rows_for(spec: Workload, chosen: System, data: Path, manifest: Manifest,
              options: BenchOptions) -> list[Measurement]:
    if reason := chosen.unavailable():
        if any(chosen.cannot_express(spec, v) is None for v in manifest.variants):
            return [Measurement(chosen.name, "*", "not available yet", reason)]
        return []
    rows = []
    for variant in (v for v in manifest.variants if options.measures(spec, v)):
        if reason := chosen.cannot_express(spec, variant):
            rows.append(Measurement(chosen.name, variant.name, "cannot express", reason))
        else:
            rows.append(_fastest(chosen.name, data, manifest, variant.name, options))
    return rows


def bench_workload(spec: Workload, options: BenchOptions, root: Path,
                   console: Console) -> list[Measurement]:
    scale = options.scale_of(spec)
    with console.status(f"{spec.id}: generating scale {scale}"):
        data, manifest = dataset(spec, scale, options.seed, root)
    parsing.print_parsing(console, spec.id, parsing.workload_parsing(data, manifest))
    names = options.systems or DEFAULT_SYSTEMS
    rows: list[Measurement] = []
    for name in ("floor", *[n for n in names if n != "floor"]):  # the floor first: ratios
        with console.status(f"{spec.id}: {name}"):
            rows += _rows_for(spec, SYSTEMS[name], data, manifest, options)
    if options.check:
        with console.status(f"{spec.id}: result counts against the reference evaluator"):
            rows = checked_rows(spec, manifest, options, root, rows)
    return rows


def checked_rows(spec: Workload, measured: Manifest, options: BenchOptions, root: Path,
                 rows: list[Measurement]) -> list[Measurement]:
    """The rows with their ``checked`` verdict (sepia.bench.check), and a note where the
    system's count differs from the reference's by design."""
    verdicts: dict[tuple[str, str], check.Verdict] = {}
    if spec.check_scale is not None:
        ran = sorted({row.system for row in rows if row.ran and row.system != "floor"})
        data, manifest = dataset(spec, spec.check_scale, options.seed, root)
        # the same variants in the same order; names may carry the scale (W10's KB size)
        names = {c.name: m.name for c, m in zip(manifest.variants, measured.variants,
                                                  strict=True)}
        verdicts = {(system, names[variant]): verdict for (system, variant), verdict
                    in check.check_workload(data, manifest, ran, options.check_budget,
                                            lambda v: options.measures(spec, v)).items()}
    out = []
    for row in rows:
        if not row.ran or row.system == "floor":
            out.append(row)
            continue
        verdict = verdicts.get((row.system, row.variant))
        text = verdict.text if verdict else f"not checked: {spec.unchecked or 'no count'}"
        why = SYSTEMS[row.system].counts_differ(spec, measured.variant(row.variant))
        note = "; ".join(part for part in (row.note, why) if part)
        out.append(dataclasses.replace(row, checked=text, note=note))
    return out


@dataclass(frozen=True, slots=True)
class Described:
    """What the outputs say a workload or section was."""

    id: str
    title: str
    source: str
    scale: int


def write_outputs(spec: Described, options: BenchOptions, rows: list[Measurement],
                  console: Console) -> list[Path]:
    """The table on the console; the JSON and the plots under ``options.out``."""
    report.print_table(console, f"{spec.id}: {spec.title} ({spec.source})", rows)
    stem = options.out / f"{datetime.now(UTC):%Y-%m-%d}-{spec.id}"
    described = {"id": spec.id, "title": spec.title, "source": spec.source,
                 "scale": spec.scale, "seed": options.seed, "quick": options.quick,
                 "budget_s": options.budget, "repeat": options.repeat}
    written = [stem.with_suffix(".json")]
    report.write_json(written[0], described, rows, report.machine())
    title = f"{spec.id} ({spec.source}), scale {spec.scale}"
    report.plot_throughput(stem.with_name(stem.name + "-throughput.png"), title, rows)
    written.append(stem.with_name(stem.name + "-throughput.png"))
    latency = stem.with_name(stem.name + "-latency.png")
    if report.plot_latency(latency, title, rows):
        written.append(latency)
    growth = stem.with_name(stem.name + "-growth.png")
    axis = "background triples" if spec.id == "W10" else "WITHIN (minutes)"
    if report.plot_growth(growth, title, axis, rows):
        written.append(growth)
    return written


def bench_reasoning(options: BenchOptions, console: Console) -> list[Path]:
    """The stream-reasoning section (sepia.bench.reasoning): its own rows, JSON and plots."""
    size = reasoning.QUICK if options.quick else reasoning.FULL
    with console.status(f"{reasoning.ID}: {size.classes:,} classes, {size.triples:,} triples"):
        rows = reasoning.rows(size)
    spec = Described(reasoning.ID, reasoning.TITLE, reasoning.SOURCE, size.triples)
    return write_outputs(spec, options, rows, console)


def run_bench(options: BenchOptions, console: Console) -> list[Path]:
    """Every workload of ``options``, in order; returns the files written."""
    unknown = [n for n in options.systems or () if n not in SYSTEMS]
    if unknown:
        raise KeyError(f"unknown system(s) {', '.join(unknown)}; known: {', '.join(SYSTEMS)}")
    sections = {reasoning.ID, soak.ID}
    specs = [workload(w) for w in options.workloads if w.lower() not in sections]
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="sepia-bench-") as scratch:
        root = options.data_dir or Path(scratch)
        for spec in specs:
            rows = bench_workload(spec, options, root, console)
            described = Described(spec.id, spec.title, spec.source, options.scale_of(spec))
            written += write_outputs(described, options, rows, console)
        if soak.ID in (w.lower() for w in options.workloads):
            scale = options.scale or (soak.QUICK_SCALE if options.quick else soak.SCALE)
            timeout = options.budget_s or soak.TIMEOUT_S
            def data_of(spec: Workload, scale: int) -> Path:
                return dataset(spec, scale, options.seed, root)[0]

            written += soak.bench_soak(scale, options.seed, data_of, options.out, timeout,
                                       console)
    if reasoning.ID in (w.lower() for w in options.workloads):
        written += bench_reasoning(options, console)
    documents = [p for p in written if p.suffix == ".json" and not p.stem.endswith(soak.ID)]
    summary = options.out / f"{datetime.now(UTC):%Y-%m-%d}-summary.md"
    summary.write_text(report.summary_markdown(documents))
    written.append(summary)
    if report.plot_summary(summary.with_suffix(".png"), documents):
        written.append(summary.with_suffix(".png"))
    return written
