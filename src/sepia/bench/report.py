"""What a benchmark run leaves behind: a table for a person, one JSON file per workload
(``bench-results/<date>-<workload>.json``) and PNG plots (throughput per system, latency
CDF, and cost against the growth axis of W10 / W11). Every figure is also given as a ratio
to the floor baseline of the same variant, in the same run, since absolute times on a shared
2-core machine are noisy."""

from __future__ import annotations

import json
import math
import os
import platform
import sys
from collections import defaultdict
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state
from rich.console import Console

from sepia.bench.measure import CDF_POINTS, Measurement
from sepia.io.tables import print_fitted


def machine() -> dict[str, Any]:
    """The machine and versions the figures came from."""
    memory_kib = next((int(line.split()[1]) for line in Path("/proc/meminfo").read_text()
                       .splitlines() if line.startswith("MemTotal")), 0)
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text()
                .splitlines() if line.startswith("model name")), platform.processor())
    versions = {name: metadata.version(name)
                for name in ("sepia", "pyoxigraph", "pyspark", "matplotlib", "numpy")}
    return {"nproc": os.cpu_count(), "memory_gib": round(memory_kib / 2**20, 1), "cpu": cpu,
            "python": sys.version.split()[0], "platform": platform.platform(), **versions}


def floor_ratio(row: Measurement, rows: list[Measurement]) -> float | None:
    """The row's triples/s over the floor's, on the same variant."""
    floor = next((r for r in rows if r.system == "floor" and r.variant == row.variant), None)
    if floor is None or row.triples_per_s is None or not floor.triples_per_s:
        return None
    return row.triples_per_s / floor.triples_per_s


def _number(value: float | None, digits: int = 0) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


def _peak(own: float | None, peer: float | None) -> str:
    """The measuring process's peak, and a peer's process tree's after a '+'."""
    return _number(own, 1) + (f" + {peer:,.1f}" if peer is not None else "")


def print_table(console: Console, workload: str, rows: list[Measurement]) -> None:
    headers = ("variant", "system", "triples/s", "events/s", "x floor", "results", "checked",
               "p50 ms", "p99 ms", "peak MiB", "status")
    cells = [
        (row.variant, row.system, _number(row.triples_per_s), _number(row.events_per_s),
         _number(floor_ratio(row, rows), 3), _number(row.results), row.checked,
         _number(row.p50_ms, 2), _number(row.p99_ms, 2),
         _peak(row.peak_rss_mib, row.peer_rss_mib),
         row.status if not row.note else f"{row.status}: {row.note}")
        for row in rows
    ]
    texts = {"variant", "system", "checked", "status"}
    print_fitted(console, workload, headers, cells, keys=2,
                 right=[h for h in headers if h not in texts])


def write_json(path: Path, workload: dict[str, Any], rows: list[Measurement],
               host: dict[str, Any]) -> None:
    records = [{**asdict(row), "triples_per_s": row.triples_per_s,
                "events_per_s": row.events_per_s, "floor_ratio": floor_ratio(row, rows)}
               for row in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"workload": workload, "machine": host, "runs": records},
                               indent=1) + "\n")


def plot_throughput(path: Path, title: str, rows: list[Measurement]) -> None:
    """Grouped bars: triples/s of every system that ran, per variant (log scale)."""
    ran = [r for r in rows if r.triples_per_s]
    variants = list(dict.fromkeys(r.variant for r in ran))
    systems = list(dict.fromkeys(r.system for r in ran))
    width = 0.8 / max(1, len(systems))
    figure = Figure(figsize=(max(6.0, 1.2 * len(variants) + 3), 4.2))
    axes = figure.subplots()
    for offset, name in enumerate(systems):
        values = {r.variant: r.triples_per_s for r in ran if r.system == name}
        xs = [i + offset * width for i, v in enumerate(variants) if v in values]
        axes.bar(xs, [values[v] for v in variants if v in values], width, label=name)
    axes.set_xticks([i + width * (len(systems) - 1) / 2 for i in range(len(variants))])
    axes.set_xticklabels(variants, rotation=20, ha="right", fontsize=8)
    axes.set_yscale("log")
    axes.set_ylabel("triples / s (log)")
    axes.set_title(title)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=90)


def plot_latency(path: Path, title: str, rows: list[Measurement]) -> bool:
    """Latency CDF per (system, variant) that reported per-result times; False if none did."""
    curves = [r for r in rows if r.latency_quantiles_ms]
    if not curves:
        return False
    figure = Figure(figsize=(6.4, 4.2))
    axes = figure.subplots()
    fractions = [i / (CDF_POINTS - 1) for i in range(CDF_POINTS)]
    lowest, highest = math.inf, 0.0
    for row in curves:
        values = [max(q, 1e-3) for q in row.latency_quantiles_ms]
        lowest, highest = min(lowest, values[0]), max(highest, values[-1])
        axes.plot(values, fractions, label=f"{row.system} {row.variant}")
    if highest > 20 * lowest:  # a log axis only where the spread needs one
        axes.set_xscale("log")
    axes.set_xlabel("latency, arrival to result (ms)")
    axes.set_ylabel("fraction of results")
    axes.set_title(title)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    return True


GROWTH_LINES = ("--", "-", ":", "-.")


def plot_growth(path: Path, title: str, axis: str, rows: list[Measurement]) -> bool:
    """Run time against the variant's growth axis, one line per system and query series."""
    series: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for row in rows:
        if row.x is not None and row.seconds and row.status == "ok":
            series[f"{row.system} {row.series}"].append((row.x, row.seconds))
    if not series:
        return False
    figure = Figure(figsize=(8.4, 4.2))
    axes = figure.subplots()
    queries = sorted({label.split(" ", 1)[1] for label in series})
    systems = sorted({label.split(" ", 1)[0] for label in series})
    for label, points in sorted(series.items()):
        system, query = label.split(" ", 1)
        points.sort()
        # one colour per query (per system when there is one query), one line style per
        # system: W11's 12 lines stay tellable apart
        colour = queries.index(query) if len(queries) > 1 else systems.index(system)
        axes.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label,
                  color=f"C{colour % 10}",
                  linestyle=GROWTH_LINES[systems.index(system) % len(GROWTH_LINES)],
                  alpha=0.6 if system == "floor" else 1.0)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel(f"{axis} (log)")
    axes.set_ylabel("run time, s (log)")
    axes.set_title(title)
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # off the lines
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    return True


def summary_markdown(paths: list[Path]) -> str:
    """One Markdown table over the JSON files of a run, for docs/benchmarks.md."""
    lines = ["| workload | variant | system | triples/s | events/s | x floor | results "
             "| checked | p50 ms | p99 ms | peak MiB | status |", "|" + "---|" * 12]
    for path in paths:
        document = json.loads(path.read_text())
        for run in document["runs"]:
            status = run["status"] + (f": {run['note']}" if run["note"] else "")
            lines.append("| " + " | ".join((
                document["workload"]["id"], run["variant"], run["system"],
                _number(run["triples_per_s"]), _number(run["events_per_s"]),
                _number(run["floor_ratio"], 3), _number(run["results"]), run.get("checked", ""),
                _number(run["p50_ms"], 2),
                _number(run["p99_ms"], 2), _peak(run["peak_rss_mib"], run.get("peer_rss_mib")),
                status)) + " |")
    return "\n".join(lines) + "\n"


def plot_summary(path: Path, json_paths: list[Path]) -> bool:
    """Every system's triples/s as a multiple of the floor's, per workload and variant
    (horizontal bars, log scale): the whole run in one picture."""
    bars: list[tuple[str, str, float]] = []
    for json_path in json_paths:
        document = json.loads(json_path.read_text())
        for run in document["runs"]:
            if run["system"] != "floor" and run["floor_ratio"]:
                label = f"{document['workload']['id']} {run['variant']}"
                bars.append((label, run["system"], run["floor_ratio"]))
    if not bars:
        return False
    figure = Figure(figsize=(7.5, 1.2 + 0.22 * len(bars)))
    axes = figure.subplots()
    systems = list(dict.fromkeys(system for _, system, _ in bars))
    colours = {name: f"C{i + 1}" for i, name in enumerate(systems)}
    positions = range(len(bars))
    axes.barh(positions, [ratio for *_, ratio in bars],
              color=[colours[system] for _, system, _ in bars])
    axes.set_yticks(positions, [f"{label} ({system})" for label, system, _ in bars], fontsize=7)
    axes.invert_yaxis()
    axes.axvline(1.0, color="black", linewidth=0.8)
    axes.axvline(0.5, color="grey", linestyle="--", linewidth=0.8,
                 label="target of the local engine on W1-W9: 0.5")
    axes.legend(fontsize=7, loc="lower right")
    axes.set_xscale("log")
    axes.set_xlabel("triples/s as a multiple of the floor (pyoxigraph parse only), log")
    axes.set_title("throughput relative to the floor, same data, same run")
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    return True
