"""Progress records of a Spark run, from Spark's own progress reports (no Spark needed)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sepia.runtime.spark.job import END_TIME
from sepia.runtime.spark.progress import BatchProgress, ProgressLog, show_watermark

# A progress report as Spark 4.3 gives it for a batch of the Spark job (trimmed to the fields
# the record reads, plus some it ignores).
REPORT = {
    "id": "0d3c9a64-7d0c-4c55-9f0e-3a1b1b7f6a10",
    "runId": "6f1e5f8e-4b0a-4f55-8c55-0b7f1a2c3d4e",
    "name": None,
    "timestamp": "2026-11-22T07:30:06.506Z",
    "batchId": 3,
    "batchDuration": 2512,
    "numInputRows": 12,
    "inputRowsPerSecond": 4.8,
    "processedRowsPerSecond": 4.77,
    "durationMs": {"addBatch": 2100, "queryPlanning": 300, "triggerExecution": 2512},
    "eventTime": {"avg": "1970-01-01T00:00:00.012Z", "watermark": "1970-01-01T00:00:00.016Z"},
    "stateOperators": [
        {
            "operatorName": "transformWithStateInPandasExec",
            "numRowsTotal": 7,
            "numRowsUpdated": 3,
            "memoryUsedBytes": 10652,
        },
    ],
    "sources": [],
    "sink": {"description": "ForeachBatchSink", "numOutputRows": -1},
}


def test_a_batch_record_reads_spark_s_report_and_the_sink_s_count() -> None:
    batch = BatchProgress.from_spark(REPORT, results=4)
    assert (batch.batch, batch.rows_in, batch.results, batch.duration_ms) == (3, 12, 4, 2512)
    assert (batch.watermark_ms, batch.state_rows, batch.state_memory_bytes) == (16, 7, 10652)
    assert (batch.input_rows_per_s, batch.processed_rows_per_s) == (4.8, 4.8)
    assert batch.phases_ms["addBatch"] == 2100
    assert batch.line() == "batch 3: 12 rows in, 4 results, 2.51 s, watermark 16, 7 state rows"


def test_watermarks_show_as_abstract_times_date_times_or_the_end_of_input() -> None:
    assert show_watermark(None) == show_watermark(0) == "none yet"
    assert show_watermark(16) == "16"
    assert show_watermark(1_767_225_600_000) == "2026-01-01T00:00:00.000Z"
    assert show_watermark(END_TIME) == "end of input"


@dataclass
class Report:
    json: str


@dataclass
class FakeQuery:
    recentProgress: list[Report]


def test_the_log_keeps_each_batch_once_and_skips_idle_triggers(tmp_path: Path) -> None:
    idle = {**REPORT, "batchId": 4, "durationMs": {"latestOffset": 1, "triggerExecution": 1}}
    later = {**REPORT, "batchId": 4, "numInputRows": 0}
    query = FakeQuery([Report(json.dumps(REPORT)), Report(json.dumps(idle))])
    metrics = tmp_path / "metrics.jsonl"
    log = ProgressLog(metrics=metrics, results_of={3: 4, 4: 0}.get)
    log.poll(query)
    query.recentProgress.append(Report(json.dumps(later)))
    log.poll(query)
    log.close()
    assert [(b.batch, b.rows_in, b.results) for b in log.batches] == [(3, 12, 4), (4, 0, 0)]
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert [(r["batch"], r["results"], r["watermark_ms"]) for r in records] == [
        (3, 4, 16),
        (4, 0, 16),
    ]
