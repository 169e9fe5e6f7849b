"""Query parsing speed (issue: a 50-line query parses in well under 50 ms): each workload's
queries compiled many times by `sepia.lang.compile_query` (grammar, lowering, static
checks; not the cache of compiled queries that `parse_query` reads first),
the median and the worst time reported next to the query's length in lines."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sepia.lang import compile_query
from sepia.workloads.manifest import Manifest

REPEAT = 20


@dataclass(frozen=True, slots=True)
class ParseTiming:
    """How long one query takes to compile."""

    query: str
    lines: int
    median_ms: float
    max_ms: float


def time_parsing(name: str, text: str, repeat: int = REPEAT) -> ParseTiming:
    """Compile `text` `repeat` times (after one warm-up that builds the grammar)."""
    compile_query(text, source=name)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        compile_query(text, source=name)
        times.append((time.perf_counter() - started) * 1000)
    lines = len([line for line in text.splitlines() if line.strip()])
    return ParseTiming(name, lines, statistics.median(times), max(times))


def workload_parsing(data: Path, manifest: Manifest) -> list[ParseTiming]:
    """The parse timings of every distinct query file of a generated workload."""
    files = sorted({v.query for v in manifest.variants if v.query is not None})
    return [time_parsing(name, (data / name).read_text(encoding="utf-8")) for name in files]


def print_parsing(console: Console, workload: str, timings: list[ParseTiming]) -> None:
    table = Table(title=f"{workload}: query parsing ({REPEAT} runs each)", title_justify="left")
    for header in ("query", "lines", "median ms", "max ms"):
        table.add_column(header, justify="left" if header == "query" else "right")
    for t in timings:
        table.add_row(t.query, str(t.lines), f"{t.median_ms:.1f}", f"{t.max_ms:.1f}")
    console.print(table)
