"""`sepia bench live`: the pacing start (by position or by event time) bounded from Spark's
progress reports, each result's deciding element found by its time, and a short paced run of
the Spark job measured."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from sepia.bench.live import (
    LiveBatch,
    LiveOptions,
    StreamPace,
    _end_times,
    batches_of,
    bench_live,
    deciding_release,
    event_speed,
    keeps_up,
    main,
    pacing_start,
    quantiles,
)


def _progress(batch: int, at: str, offsets: list[int], asking_ms: int = 0) -> dict:
    return {"batchId": batch, "timestamp": at, "durationMs": {"latestOffset": asking_ms},
            "sources": [{"endOffset": {"element": e}} for e in offsets]}


def test_the_pacing_start_is_bounded_by_each_batchs_start_and_offsets():
    # A source began releasing at 10.000 s, 100 elements/s (one element each 10 ms): the
    # batch started at 10.005 s read 0 of them (the first is out at 10.010 s); the one at
    # 12.3 s (asking 20 ms) read 230; the one at 13.012 s read 301 (released at 13.010).
    raws = [_progress(0, "1970-01-01T00:00:10.005Z", [0], 3),
            _progress(1, "1970-01-01T00:00:12.300Z", [230], 20),
            _progress(2, "1970-01-01T00:00:13.012Z", [301], 1)]
    lower, upper = pacing_start(raws, [100.0], [10_000])
    # lower: max(10.005 - 0.01, 12.3 - 2.31, 13.012 - 3.02) = 9.995;
    # upper: min(10.009 - 0, 12.321 - 2.3, 13.014 - 3.01) = 10.004 (+ 1 ms: whole ms)
    assert (lower, upper) == (pytest.approx(9.995), pytest.approx(10.004))
    # a stream that ran out says nothing about when it began
    lower, upper = pacing_start([*raws, _progress(3, "1970-01-01T00:01:40.000Z", [10_000])],
                                [100.0], [10_000])
    assert (lower, upper) == (pytest.approx(9.995), pytest.approx(10.004))


def test_a_batch_that_read_nothing_does_not_bound_the_start_from_above():
    # The query's first batch (10.005 s) read nothing: the source began only after it,
    # at 14.000 s, 100 elements/s; the batch at 16.3 s (asking 20 ms) read 230.
    raws = [_progress(0, "1970-01-01T00:00:10.005Z", [0], 3),
            _progress(1, "1970-01-01T00:00:16.300Z", [230], 20)]
    lower, upper = pacing_start(raws, [100.0], [10_000])
    # lower: max(10.005 - 0.01, 16.3 - 2.31) = 13.99; upper: 16.321 - 2.3 = 14.021
    assert (lower, upper) == (pytest.approx(13.99), pytest.approx(14.021))


def test_a_source_released_all_at_once_gives_no_consistent_start():
    raws = [_progress(0, "1970-01-01T00:00:10.000Z", [5_000]),
            _progress(1, "1970-01-01T00:00:11.000Z", [5_000])]
    lower, upper = pacing_start(raws, [100.0], [10_000])
    assert lower > upper  # 5,000 elements in 1 s is not 100 a second


def test_each_batch_keeps_sparks_phases_and_the_stateful_operators_times():
    raw = _progress(4, "1970-01-01T00:00:12.000Z", [500], 2)
    raw["sources"][0]["startOffset"] = {"element": 300}
    raw["durationMs"] |= {"addBatch": 700, "triggerExecution": 900}
    raw["stateOperators"] = [
        {"numRowsTotal": 10, "commitTimeMs": 60, "allUpdatesTimeMs": 300,
         "customMetrics": {"rocksdbCommitFileSyncLatencyMs": 40}},
        {"numRowsTotal": 5, "commitTimeMs": 15, "operatorName": "stateStoreSave"}]
    [batch] = batches_of([raw], began=10.0)
    assert (batch.started_s, batch.duration_s, batch.elements_in) == (2.0, 0.9, 200)
    assert batch.phases_ms == {"latestOffset": 2, "addBatch": 700, "triggerExecution": 900}
    assert batch.state_ms == {"commitTimeMs": 75, "allUpdatesTimeMs": 300,
                              "rocksdbCommitFileSyncLatencyMs": 40}  # summed; names skipped


def test_the_deciding_element_is_the_latest_released_of_each_streams_first_at_or_after_t():
    nearby = np.array([5, 10, 10, 20, 30])  # released at began + 1/4, 2/4, ... (4 a second)
    coupons = np.array([12, 40])  # released at began + 1, 2 (1 a second)
    ends, rates = [nearby, coupons], [4.0, 1.0]
    # t = 10: nearby's element 1 (at 0.5 s), coupons' element 0 (at 1 s): the coupon decides
    assert deciding_release(10, ends, rates, 100.0) == pytest.approx(101.0)
    # t = 25: nearby's element 4 (1.25 s), coupons' element 1 (2 s)
    assert deciding_release(25, ends, rates, 100.0) == pytest.approx(102.0)
    # t = 35: only the coupons have an element at or after it
    assert deciding_release(35, ends, rates, 100.0) == pytest.approx(102.0)
    assert deciding_release(41, ends, rates, 100.0) is None


def test_paced_by_event_time_an_element_is_out_at_its_time_from_the_origin_at_the_speed():
    # speed 0.01 event-time ms per wall-clock ms (one event-time ms is 0.1 s), origin 5:
    nearby = np.array([5, 10, 10, 20, 30])  # out at began + 0, 0.5, 0.5, 1.5, 2.5 s
    coupons = np.array([12, 40])  # out at began + 0.7, 3.5 s
    ends = [nearby, coupons]
    paces = [StreamPace.by_time(times, 5, 0.01) for times in ends]
    assert [paces[0].out(i) for i in range(5)] == pytest.approx([0, 0.5, 0.5, 1.5, 2.5])
    # t = 10: nearby's element 1 (100.5), coupons' element 0 (100.7): the coupon decides
    assert deciding_release(10, ends, paces, 100.0) == pytest.approx(100.7)
    # t = 25: nearby's element 4 (102.5), coupons' element 1 (103.5)
    assert deciding_release(25, ends, paces, 100.0) == pytest.approx(103.5)
    assert deciding_release(35, ends, paces, 100.0) == pytest.approx(103.5)
    assert deciding_release(41, ends, paces, 100.0) is None
    # an element is out once every end before it is (the generator releases a prefix):
    # [5, 30, 20] -> out at 0, 2.5, 2.5 s
    late = StreamPace.by_time(np.array([5, 30, 20]), 5, 0.01)
    assert [late.out(i) for i in range(3)] == pytest.approx([0, 2.5, 2.5])


def test_the_pacing_start_by_event_time_is_bounded_by_each_batchs_start_and_offsets():
    # One stream, ends 1,000 1,000 1,400 2,000 2,600 5,000 ms, origin 1,000, speed 2: out
    # at began + 0, 0, 0.2, 0.5, 0.8, 2.0 s; the source began at 10.000 s.
    pace = StreamPace.by_time(np.array([1_000, 1_000, 1_400, 2_000, 2_600, 5_000]), 1_000, 2.0)
    raws = [_progress(0, "1970-01-01T00:00:05.000Z", [0], 3),  # start-up: none out yet
            _progress(1, "1970-01-01T00:00:10.300Z", [3], 20),  # out to 0.2 s, not 0.5
            _progress(2, "1970-01-01T00:00:10.850Z", [5], 1),  # out to 0.8 s, not 2.0
            _progress(3, "1970-01-01T00:00:12.001Z", [6], 1)]  # ran out: says nothing
    lower, upper = pacing_start(raws, [pace], [6])
    # lower: max(5.0 - 0, 10.3 - 0.5, 10.85 - 2.0) = 9.8
    # upper: min(10.321 - 0.2, 10.852 - 0.8) = 10.052 (+ 1 ms each: whole ms)
    assert (lower, upper) == (pytest.approx(9.8), pytest.approx(10.052))


def test_the_speed_for_a_rate_releases_the_workload_at_that_rate_on_average():
    # 9 elements from the origin 1,000 to 5,000 ms: at 3 elements/s they take 3 s, so
    # 4,000 event-time ms in 3,000 wall-clock ms: speed 4/3
    ends = [np.array([1_000, 1_000, 1_400, 2_000, 2_600, 5_000]), np.array([1_600, 2_000, 3_000])]
    assert event_speed(ends, 1_000, 3.0) == pytest.approx(4 / 3)


def test_the_live_bench_refuses_an_unknown_pace(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit):
        main(["W1", "--rate", "10", "--pace", "fast"])
    assert "--pace" in capsys.readouterr().err


def test_quantiles_and_the_keeps_up_verdict():
    assert quantiles([]) == {"p50": None, "p95": None, "p99": None, "max": None}
    assert quantiles([1.0, 2.0, 3.0]) == {"p50": 2.0, "p95": 2.9, "p99": 2.98, "max": 3.0}
    def batches(durations: list[float]) -> list[LiveBatch]:
        return [LiveBatch(n, float(n), d, 0, 0, 0, 0, 0) for n, d in enumerate(durations)]

    steady = keeps_up(batches([9, 9, 2, 2, 2, 2, 2, 2.2]))
    assert steady["keeps_up"] is True and steady["ratio"] == pytest.approx(1.05)
    growing = keeps_up(batches([9, 9, 2, 2, 3, 3, 4, 4]))
    assert growing["keeps_up"] is False and growing["ratio"] == pytest.approx(2.0)
    assert keeps_up(batches([1.0] * 7))["keeps_up"] is None


@pytest.mark.spark
@pytest.mark.slow
def test_a_short_paced_run_of_the_job_gives_batches_latencies_and_state(spark, tmp_path: Path):
    """W1 (3,000 nearby elements, 5 coupons) released at 100 elements/s, measured for 120 s
    from the first trigger: every result is written after the element that decided it."""
    from sepia.runtime.spark.sources.generator import DEFAULT_CACHE, generated, rows_file

    options = LiveOptions("W1", rate=100.0, duration_s=120.0, scale=3_000)
    json_path, png = bench_live(spark, [options], tmp_path)
    assert png.stat().st_size > 10_000
    [document] = json.loads(json_path.read_text())
    assert document["error"] is None and document["query_runs"] == 1
    low, high = document["began_bounds_s"]
    assert -0.05 < high - low < 1.0  # the offsets fit one start and the rate (to clock skew)
    batches = document["batches"]
    assert [b["batch"] for b in batches] == list(range(len(batches)))
    assert sum(b["elements_in"] for b in batches) == batches[-1]["released"] > 0
    # the first batch is the query's start-up: the source begins releasing after it
    assert batches[0]["elements_in"] == 0
    assert document["start_up_s"] + high > batches[0]["duration_s"] - 0.05
    for batch in batches:  # what a batch read was out by its start (and its offset request)
        assert batch["released"] <= max(0.0, 100.0 * (batch["started_s"] + high + 0.5))
    assert any(b["state_rows"] > 0 for b in batches)
    # The results at t = 1 minute wait for the first nearby element at or after it (the
    # coupons' share, 5 of 3,005 elements, comes out every 6 s): worked out from the rows.
    manifest, directory = generated("W1", 3_000, 7, DEFAULT_CACHE)
    nearby = next(s for s in manifest.streams if s.name == "nearby")
    minute = _end_times(directory / rows_file(nearby))
    first = int(np.argmax(minute >= minute[0] - minute[0] % 60_000 + 60_000))
    out_by = (first + 1) / (100.0 * 3_000 / 3_005)
    assert document["results"] == len(document["latencies"]) > 0
    for written, latency in document["latencies"]:
        assert latency >= 0 and written >= out_by  # no result before its element is out
    assert not math.isnan(document["latency_s"]["p99"])
