"""`python -m sepia.bench.live --event-log`: each micro-batch's Spark stages read back from
the event log, and the steady batches' route and stateful stages."""

from __future__ import annotations

import json
from pathlib import Path

from sepia.bench.live import event_log_settings, stage_times, steady_stages


def _job(job: int, stages: list[int], run: str, batch: int) -> dict:
    return {"Event": "SparkListenerJobStart", "Job ID": job, "Stage IDs": stages,
            "Properties": {"spark.jobGroup.id": run, "streaming.sql.batchId": str(batch)}}


def _stage(stage: int, tasks: int, submitted: int | None, completed: int) -> dict:
    info = {"Stage ID": stage, "Number of Tasks": tasks, "Completion Time": completed}
    return {"Event": "SparkListenerStageCompleted",
            "Stage Info": info | ({} if submitted is None else {"Submission Time": submitted})}


def _task(stage: int, run_ms: int, cpu_ns: int) -> dict:
    return {"Event": "SparkListenerTaskEnd", "Stage ID": stage,
            "Task Metrics": {"Executor Run Time": run_ms, "Executor CPU Time": cpu_ns}}


def test_each_batch_gets_its_stages_in_order_with_their_tasks_times(tmp_path: Path) -> None:
    events = [
        _job(0, [1], "run-a", 0), _task(1, 900, 300_000_000), _stage(1, 1, 1_000, 2_000),
        _job(1, [2, 3], "run-a", 1),
        _task(2, 400, 100_000_000), _task(2, 500, 150_000_000), _stage(2, 2, 3_000, 3_600),
        _task(3, 250, 50_000_000), _stage(3, 1, 3_600, 3_900),
        _job(2, [4], "run-b", 0), _task(4, 10, 1_000_000), _stage(4, 1, 5_000, 5_010),
        _job(3, [5, 6], "run-a", 2), _stage(5, 3, None, 6_000),  # skipped: never submitted
        _task(6, 80, 20_000_000), _stage(6, 1, 6_000, 6_100),
    ]
    folder = tmp_path / "eventlog_v2_local-1"
    folder.mkdir()
    text = "".join(json.dumps(event) + "\n" for event in events)
    (folder / "events_1_local-1").write_text(text + '{"Event": "SparkListen')  # being written
    (folder / "appstatus_local-1").write_text("")
    assert stage_times(tmp_path, {"run-a"}) == {
        0: [{"tasks": 1, "wall_ms": 1_000, "run_ms": 900, "jvm_cpu_ms": 300}],
        1: [{"tasks": 2, "wall_ms": 600, "run_ms": 900, "jvm_cpu_ms": 250},
            {"tasks": 1, "wall_ms": 300, "run_ms": 250, "jvm_cpu_ms": 50}],
        2: [{"tasks": 1, "wall_ms": 100, "run_ms": 80, "jvm_cpu_ms": 20}],
    }


def test_the_steady_split_is_the_median_first_and_last_stage_of_two_stage_batches() -> None:
    def stages(route: int, stateful: int) -> list[dict[str, int]]:
        return [{"wall_ms": route}, {"wall_ms": stateful}]

    found = [stages(600, 300), [{"wall_ms": 50}], stages(800, 500), stages(700, 400)]
    assert steady_stages(found) == {"route_p50": 700.0, "stateful_p50": 400.0}
    assert steady_stages([[{"wall_ms": 50}]]) == {"route_p50": None, "stateful_p50": None}


def test_the_event_log_is_kept_uncompressed_in_the_folder_given(tmp_path: Path) -> None:
    settings = event_log_settings(tmp_path / "log")
    assert (tmp_path / "log").is_dir()
    assert settings == {"spark.eventLog.enabled": "true", "spark.eventLog.compress": "false",
                        "spark.eventLog.dir": (tmp_path / "log").as_uri()}
