"""What a Spark run is doing: one record per micro-batch, on the terminal and as JSON lines.

Spark reports every finished micro-batch in `StreamingQuery.recentProgress`; the driver's
wait loop (`run.py`) polls it, so records come from the main thread, in batch order, without
a listener thread. A record holds the rows read, the results the sink wrote (counted by the
sink itself: Spark's foreachBatch sink reports none), the batch's wall time, the watermark
and the rows in the state store. Triggers that found no new data and ran nothing (Spark
reports those every 10 s while idle) are skipped: they have no `addBatch` phase.

The watermark is printed as an integer below 10^11 ms (abstract time units, which the
pipeline reads as milliseconds) and as an ISO date-time above; from the end-of-input marker
on (job.py) it is "end of input".
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from pyspark.sql.streaming import StreamingQuery

from sepia.runtime.spark.host import FLUSH_TIMER

KEPT = 10_000
"""Batches a `ProgressLog` keeps in memory (the metrics file has them all)."""
ABSTRACT_BELOW_MS = 10**11
"""Watermarks below this (1973-03-03) are shown as abstract time units."""


@dataclass(frozen=True, slots=True)
class BatchProgress:
    """One micro-batch, as `--metrics` writes it (one JSON object per line)."""

    batch: int
    timestamp: str
    rows_in: int
    results: int | None
    """Result rows the sink wrote; None when it wrote none because the batch was a replay."""
    duration_ms: int
    watermark_ms: int | None
    state_rows: int
    state_memory_bytes: int
    input_rows_per_s: float | None
    processed_rows_per_s: float | None
    phases_ms: dict[str, int]
    """Spark's own split of the batch's time (addBatch, queryPlanning, walCommit, ...)."""

    @classmethod
    def from_spark(cls, progress: dict[str, Any], results: int | None) -> BatchProgress:
        states = progress.get("stateOperators") or []
        watermark = (progress.get("eventTime") or {}).get("watermark")
        return cls(
            batch=progress["batchId"],
            timestamp=progress["timestamp"],
            rows_in=progress.get("numInputRows", 0),
            results=results,
            duration_ms=progress["durationMs"].get("triggerExecution", 0),
            watermark_ms=epoch_ms(watermark) if watermark else None,
            state_rows=sum(s.get("numRowsTotal", 0) for s in states),
            state_memory_bytes=sum(s.get("memoryUsedBytes", 0) for s in states),
            input_rows_per_s=_rate(progress.get("inputRowsPerSecond")),
            processed_rows_per_s=_rate(progress.get("processedRowsPerSecond")),
            phases_ms=dict(progress["durationMs"]),
        )

    def line(self) -> str:
        """The batch in one line for a person."""
        results = "replayed" if self.results is None else f"{self.results:,} results"
        return (
            f"batch {self.batch}: {self.rows_in:,} rows in, {results}, "
            f"{self.duration_ms / 1000:.2f} s, watermark {show_watermark(self.watermark_ms)}, "
            f"{self.state_rows:,} state rows"
        )


def show_watermark(ms: int | None) -> str:
    if ms is None or ms <= 0:
        return "none yet"
    if ms >= FLUSH_TIMER:
        return "end of input"
    if ms < ABSTRACT_BELOW_MS:
        return str(ms)
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def epoch_ms(text: str) -> int:
    return round(datetime.fromisoformat(text).timestamp() * 1000)


def _rate(value: object) -> float | None:
    return round(float(value), 1) if isinstance(value, int | float) else None


class ProgressLog:
    """Collects the batches of a run's streaming queries (a finite run starts two), prints
    each to `terminal` and appends it to the `metrics` file, as they finish."""

    def __init__(
        self,
        terminal: TextIO | None = None,
        metrics: Path | None = None,
        results_of: Callable[[int], int | None] = lambda _batch: None,
    ) -> None:
        self.terminal = terminal
        self.metrics = metrics.open("a", encoding="utf-8") if metrics else None
        self.results_of = results_of
        self.batches: list[BatchProgress] = []
        """The run's batches, the last `KEPT` of them on a long live run."""
        self._last: dict[str, int] = {}  # per query run: the last batch recorded

    def poll(self, query: StreamingQuery) -> None:
        """Record the batches the query finished since the last poll."""
        for progress in query.recentProgress:
            raw = json.loads(progress.json)
            run, batch = raw["runId"], raw["batchId"]
            if batch <= self._last.get(run, -1) or "addBatch" not in raw.get("durationMs", {}):
                continue
            self._last[run] = batch
            self.add(BatchProgress.from_spark(raw, self.results_of(raw["batchId"])))

    def add(self, batch: BatchProgress) -> None:
        self.batches.append(batch)
        if len(self.batches) >= 2 * KEPT:
            del self.batches[:-KEPT]
        if self.terminal is not None:
            print(batch.line(), file=self.terminal, flush=True)
        if self.metrics is not None:
            self.metrics.write(json.dumps(asdict(batch)) + "\n")
            self.metrics.flush()

    def close(self) -> None:
        if self.metrics is not None:
            self.metrics.close()
            self.metrics = None
