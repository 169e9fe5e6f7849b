"""`python -m sepia.bench.live`: the Spark job on a paced generator, measured while it runs.

A workload's generated streams are released at ``rate`` elements per second in all by the
generator source and run through the Spark job as `sepia run --engine spark` runs it
(`run_on_spark`, a followed run, 1 s trigger) for ``duration`` seconds. A watcher thread
reads the streaming query's progress (each micro-batch's duration, input rows, end offsets
and state store rows and bytes) and the result file as it grows (the wall time each result
line appeared), then stops the query.

``--pace position`` (the default) releases each stream by position, at its share of the
rate by its element count (`gen:W1?rate=...`, `stream_rates`): element i of a stream is
out at ``began + (i + 1) / rate_s``. Two streams so paced drift apart in event time (W1's
coupons lag or lead its nearby sightings by what their seeded times happen to be), and the
engine holds the faster stream's elements until the slower catches up. ``--pace time``
releases them by event time (`gen:W1?speed=...`), as a live source delivers elements at
about their time: every stream of the workload from one origin (the earliest end time over
all of them), at the speed ``rate x span / elements / 1000`` event-time milliseconds per
wall-clock millisecond (`event_speed`; span: from the origin to the latest end time of the
measured streams, in ms; elements: theirs in all), so that the workload is released at
``rate`` elements per second on average, faster where its times are dense and slower where
they are sparse. Element i is then out at ``began + (max(end[0..i]) - origin) / (1000 x
speed)``. Event time measures the engine, not the drift, and is the pace to compare with
a live system; position stays the default so the runs recorded before it stay comparable.

A result's latency is the wall time its line was written minus the wall time the element
that decided it was released. The deciding element, on each stream, is the first whose time
is at or after the result's time t (before it, the watermark cannot pass t: a window closing
at t, a match ending at t); with several streams, the latest released of those (Spark's
watermark is the least of the streams'). The source releases element i of a stream at
``began + out(i)`` (``out(i)``: ``(i + 1) / rate_s`` or the event-time one above;
``began``: its second offset request, once the query's first batch has planned the query
and started its workers; a clock the source keeps in its own process), so ``began`` is
bounded from the progress reports: a batch that started at T and whose offset request took
L seconds read the E elements released by then, so ``T - out(E) < began``, and
``began <= T + L - out(E - 1)`` once E > 0 (T is given in whole milliseconds). The time
from the run's call to ``began`` is its start-up
(``start_up_s``: planning, the workers warmed, the query's first batch), reported apart.
Latencies use the lower bound: they are never under-reported, and over-reported by at most
the bounds' width (reported; the source's monotonic clock and Spark's wall clock can cross
them by some milliseconds).

``--passthrough`` runs the same paced source into Spark's no-op sink, no query: what Spark
itself does with the rate.

``--event-log DIR`` keeps Spark's event log there and adds each batch's stages to the report
(`stage_times`: tasks, wall time, the tasks' run time and the JVM's CPU time in them), the
split of `addBatch` that the progress reports and Python profiles do not give: the route
stage (source read, route, shuffle write) against the stateful one.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sepia.rdf.results import result_from_json
from sepia.runtime.spark.progress import BatchProgress, epoch_ms

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from sepia.workloads.manifest import Manifest, StreamFile

ID = "live"
RUNS = {"W1": "offers-nearby", "W3": "average-price", "W4": "v-shape-sc"}
"""The variant measured per workload (W3 averages over a sliding window; W4 is PARTITION BY,
stateful)."""
DURATION_S = 300.0
HEADROOM = 1.2
"""Elements generated over rate x duration: the stream must not run out before the end."""
TAIL_S = 0.02
"""How often the watcher looks for new result lines (the write times' resolution)."""
PROGRESS_S = 1.0
"""How often it reads the query's progress (Spark keeps the last 100 batches)."""
QUIET_S = 10.0
"""How long the watcher waits, once the time is up, for a moment between two batches."""
KEEPS_UP = 1.25
"""Falling behind: the last quarter's median batch is this much longer than the second's."""


@dataclass(frozen=True, slots=True)
class LiveBatch:
    """One micro-batch; times in seconds since the source began releasing elements."""

    batch: int
    started_s: float
    duration_s: float
    rows_in: int
    elements_in: int
    released: int
    """Elements (all streams) released by the batch's start: its end offsets."""
    state_rows: int
    state_bytes: int
    phases_ms: dict[str, int] = dataclasses.field(default_factory=dict)
    """Spark's split of the batch's time (addBatch, walCommit, ...): where a batch goes."""
    state_ms: dict[str, int] = dataclasses.field(default_factory=dict)
    """The stateful operator's own times and counts (commit, updates, shuffle partitions)."""
    stages: list[dict[str, int]] = dataclasses.field(default_factory=list)
    """Its Spark stages in order (`stage_times`; with ``--event-log`` only)."""


@dataclass(slots=True)
class Watch:
    """What the watcher saw: raw progress per batch id, result lines with their write time."""

    raw: dict[int, dict[str, Any]] = dataclasses.field(default_factory=dict)
    lines: list[tuple[float, str]] = dataclasses.field(default_factory=list)
    runs: set[str] = dataclasses.field(default_factory=set)
    error: str | None = None


PACES = ("position", "time")
"""``--pace``: by element position at each stream's share of the rate, or by event time."""


@dataclass(frozen=True, slots=True)
class StreamPace:
    """When a stream's elements are out, in seconds after the source began: by position at
    ``rate`` elements a second, or by event time at ``speed`` (event-time ms per wall-clock
    ms) from ``origin`` (`by_time`)."""

    rate: float | None = None
    speed: float | None = None
    origin: int = 0
    highs: np.ndarray | None = None
    """The running maximum of the stream's end times, by position: the generator releases
    the elements before the first whose end is past its time, so an element is out once
    every end up to it is."""

    @classmethod
    def by_time(cls, ends: np.ndarray, origin: int, speed: float) -> StreamPace:
        return cls(speed=speed, origin=origin, highs=np.maximum.accumulate(ends))

    def out(self, index: int) -> float:
        """Seconds from ``began`` to the release of the element at ``index``."""
        if self.rate is not None:
            return (index + 1) / self.rate
        assert self.highs is not None and self.speed is not None
        return (int(self.highs[index]) - self.origin) / (1000 * self.speed)


def paced(pace: float | StreamPace) -> StreamPace:
    """A stream's pace; a number is a rate (by position)."""
    return pace if isinstance(pace, StreamPace) else StreamPace(rate=float(pace))


def event_speed(ends: Sequence[np.ndarray], origin: int, rate: float) -> float:
    """The speed (event-time ms per wall-clock ms) that releases the streams of ``ends``
    (end times, ms), paced from ``origin``, at ``rate`` elements a second on average:
    ``rate x span / elements / 1000``, the span from ``origin`` to their latest end."""
    elements = sum(len(e) for e in ends)
    span = max((int(e.max()) for e in ends if len(e)), default=origin) - origin
    return rate * max(span, 1) / max(elements, 1) / 1000


def stream_rates(streams: Sequence[StreamFile], rate: float) -> list[float]:
    """Each stream's share of ``rate`` by its elements: its rate when paced by position, its
    average when paced by event time."""
    total = sum(s.elements for s in streams)
    return [rate * s.elements / total for s in streams]


def scale_for(rate: float, duration_s: float) -> int:
    return math.ceil(rate * duration_s * HEADROOM) + 1_000


def pacing_start(raws: Sequence[dict[str, Any]], paces: Sequence[float | StreamPace],
                 totals: Sequence[int]) -> tuple[float, float]:
    """Bounds (epoch seconds) on when the source began releasing (see the module's note),
    from each stream's pace (a number: its rate, by position); only batches whose streams
    had not run out count."""
    lower, upper = -math.inf, math.inf
    chosen = [paced(p) for p in paces]
    for raw in raws:
        started = epoch_ms(raw["timestamp"]) / 1000
        asking = (raw["durationMs"].get("latestOffset", 0) + 1) / 1000  # + ms truncation
        for source, pace, total in zip(raw["sources"], chosen, totals, strict=True):
            released = _offset(source["endOffset"])
            if released < total:  # the next element was not out yet
                lower = max(lower, started - pace.out(released))
            if 0 < released < total:  # none released: the source may not have begun
                upper = min(upper, started + asking - pace.out(released - 1))
    return lower, upper


def _offset(offset: Any) -> int:
    offset = json.loads(offset) if isinstance(offset, str) else offset
    return int(offset["element"]) if offset else 0


def deciding_release(t_ms: int, ends: Sequence[np.ndarray],
                     paces: Sequence[float | StreamPace], began: float) -> float | None:
    """When the element that decided a result at ``t_ms`` was released, each stream paced
    by ``paces`` (a number: its rate, by position) from ``began`` (None: no stream has an
    element at or after it)."""
    released = None
    for times, pace in zip(ends, paces, strict=True):
        index = int(np.searchsorted(times, t_ms, side="left"))
        if index < len(times):
            at = began + paced(pace).out(index)
            released = at if released is None else max(released, at)
    return released


def quantiles(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None, "p99": None, "max": None}
    found = np.percentile(np.asarray(values, dtype=float), [50, 95, 99, 100])
    return dict(zip(("p50", "p95", "p99", "max"), (round(float(v), 3) for v in found),
                    strict=True))


def stage_times(log_dir: Path, run_ids: set[str]) -> dict[int, list[dict[str, int]]]:
    """Each micro-batch's stages (of the query runs ``run_ids``), in order, from Spark's
    JSON event log under ``log_dir`` (uncompressed): tasks, ``wall_ms`` from submission to
    completion, and the tasks' summed ``run_ms`` and ``jvm_cpu_ms`` (the task threads' CPU:
    the Python workers' is not in it)."""
    batch_of: dict[int, int] = {}  # stage id -> batch id
    stages: dict[int, dict[str, int]] = {}
    for path in sorted(log_dir.rglob("*")):
        if not path.is_file() or path.name.startswith((".", "appstatus")):
            continue
        for line in path.open(encoding="utf-8"):
            if not line.endswith("\n"):  # being written
                break
            event = json.loads(line)
            kind = event["Event"]
            if kind == "SparkListenerJobStart":
                properties = event.get("Properties") or {}
                if properties.get("spark.jobGroup.id") in run_ids:
                    batch = int(properties["streaming.sql.batchId"])
                    batch_of |= dict.fromkeys(event["Stage IDs"], batch)
            elif kind == "SparkListenerStageCompleted":
                info = event["Stage Info"]
                if "Submission Time" in info and "Completion Time" in info:
                    stage = stages.setdefault(info["Stage ID"], {"run_ms": 0, "jvm_cpu_ms": 0})
                    stage["tasks"] = info["Number of Tasks"]
                    stage["wall_ms"] = info["Completion Time"] - info["Submission Time"]
            elif kind == "SparkListenerTaskEnd":
                metrics = event.get("Task Metrics") or {}
                stage = stages.setdefault(event["Stage ID"], {"run_ms": 0, "jvm_cpu_ms": 0})
                stage["run_ms"] += metrics.get("Executor Run Time", 0)
                stage["jvm_cpu_ms"] += metrics.get("Executor CPU Time", 0) // 1_000_000
    found: dict[int, list[dict[str, int]]] = {}
    for stage_id in sorted(stages):
        if stage_id in batch_of and "wall_ms" in stages[stage_id]:
            found.setdefault(batch_of[stage_id], []).append(stages[stage_id])
    return found


def batches_of(raws: Sequence[dict[str, Any]], began: float,
               stages: dict[int, list[dict[str, int]]] | None = None) -> list[LiveBatch]:
    """The batches that ran (an `addBatch` phase), in order, timed from ``began``."""
    stages = stages or {}
    batches = []
    for raw in sorted(raws, key=lambda r: r["batchId"]):
        if "addBatch" not in raw["durationMs"]:
            continue
        spark = BatchProgress.from_spark(raw, None)
        ends = sum(_offset(s["endOffset"]) for s in raw["sources"])
        starts = sum(_offset(s["startOffset"]) for s in raw["sources"])
        batches.append(LiveBatch(
            spark.batch, round(epoch_ms(raw["timestamp"]) / 1000 - began, 3),
            spark.duration_ms / 1000, spark.rows_in, ends - starts, ends, spark.state_rows,
            spark.state_memory_bytes, spark.phases_ms, _state_metrics(raw),
            stages.get(spark.batch, [])))  # fmt: skip
    return batches


STATE_METRICS = ("allUpdatesTimeMs", "allRemovalsTimeMs", "commitTimeMs", "numRowsUpdated",
                 "numShufflePartitions", "numStateStoreInstances")


def _state_metrics(raw: dict[str, Any]) -> dict[str, int]:
    """The stateful operator's times and counts in one batch's progress (summed over
    operators; custom metrics such as RocksDB's and transformWithState's included)."""
    found: dict[str, int] = {}
    for operator in raw.get("stateOperators") or []:
        metrics = {k: operator.get(k) for k in STATE_METRICS} | operator.get("customMetrics", {})
        for name, value in metrics.items():
            if isinstance(value, int | float):
                found[name] = found.get(name, 0) + int(value)
    return found


def steady_stages(stages: Sequence[list[dict[str, int]]]) -> dict[str, float | None]:
    """The median wall time of the batches' first stage (the route stage: source read,
    route, shuffle write) and last (the stateful stage, the results' collect), where a
    batch has two."""
    both = [found for found in stages if len(found) >= 2]
    if not both:
        return {"route_p50": None, "stateful_p50": None}
    return {"route_p50": float(np.median([found[0]["wall_ms"] for found in both])),
            "stateful_p50": float(np.median([found[-1]["wall_ms"] for found in both]))}


def keeps_up(batches: Sequence[LiveBatch]) -> dict[str, Any]:
    """Whether batches stop growing: the last quarter's median duration against the
    second quarter's (the first holds start-up and its backlog)."""
    if len(batches) < 8:
        return {"ratio": None, "keeps_up": None}
    quarter = len(batches) // 4
    second = float(np.median([b.duration_s for b in batches[quarter:2 * quarter]]))
    last = float(np.median([b.duration_s for b in batches[-quarter:]]))
    ratio = last / second if second else math.inf
    return {"second_quarter_p50_s": round(second, 3), "last_quarter_p50_s": round(last, 3),
            "ratio": round(ratio, 3), "keeps_up": ratio <= KEEPS_UP}


class Watcher(threading.Thread):
    """Follows the session's streaming query and the result file; stops the query once
    ``duration_s`` have passed since its first trigger."""

    def __init__(self, spark: SparkSession, results: Path, duration_s: float,
                 start_timeout_s: float = 900.0) -> None:
        super().__init__(daemon=True)
        self.spark, self.results, self.duration_s = spark, results, duration_s
        self.start_timeout_s = start_timeout_s
        self.watch = Watch()
        self.finished = threading.Event()
        """Set by the runner once the run has returned."""
        self._read = 0

    def run(self) -> None:
        try:
            self._follow()
        except Exception as error:  # told in the report, the run stops
            self.watch.error = f"{type(error).__name__}: {error}"
            for query in self.spark.streams.active:
                query.stop()

    def _follow(self) -> None:
        waited = time.time()
        while not self.spark.streams.active:
            if self.finished.is_set():
                return
            if time.time() - waited > self.start_timeout_s:
                raise TimeoutError(f"no streaming query after {self.start_timeout_s:g} s")
            time.sleep(TAIL_S)
        query = self.spark.streams.active[0]
        polled = 0.0
        while not self.finished.is_set():
            self._tail()
            if time.time() - polled >= PROGRESS_S:
                polled = time.time()
                query = self._progress(query)
                if self._due():
                    self._stop_between_batches()
            self.finished.wait(TAIL_S)
        self._progress(query)
        self._tail()

    def _due(self) -> bool:
        """``duration_s`` have passed since the first trigger (the source's start)."""
        if not self.watch.raw:
            return False
        first = self.watch.raw[min(self.watch.raw)]
        return time.time() >= epoch_ms(first["timestamp"]) / 1000 + self.duration_s

    def _stop_between_batches(self) -> None:
        """Stop the query once no batch runs (up to QUIET_S): stopping one mid-batch can
        leave a StackOverflowError from Spark's stream thread on standard error."""
        waited = time.time()
        for query in self.spark.streams.active:
            while query.status["isTriggerActive"] and time.time() - waited < QUIET_S:
                self._tail()  # results written meanwhile keep their own write time
                time.sleep(TAIL_S)
            query.stop()

    def _progress(self, query: StreamingQuery) -> StreamingQuery:
        """Record the query's recent batches; a query started again (a transient failure)
        replaces it."""
        for progress in query.recentProgress:
            raw = json.loads(progress.json)
            self.watch.raw[raw["batchId"]] = raw
            self.watch.runs.add(raw["runId"])
        active = self.spark.streams.active
        return active[0] if active else query

    def _tail(self) -> None:
        """Stamp the result lines written since the last look."""
        if not self.results.exists():
            return
        with self.results.open("rb") as file:
            file.seek(self._read)
            chunk = file.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        if complete:
            now = time.time()
            self._read += len(complete)
            self.watch.lines += [(now, line) for line in complete.decode().splitlines() if line]


@dataclass(frozen=True, slots=True)
class LiveOptions:
    workload: str
    rate: float
    duration_s: float = DURATION_S
    seed: int = 7
    scale: int | None = None
    """Elements generated (None: enough for rate x duration)."""
    passthrough: bool = False
    event_log: Path | None = None
    """Where the session keeps Spark's event log (None: not kept; `stage_times`)."""
    pace: str = "position"
    """``position`` (each stream at its share of ``rate``) or ``time`` (by event time,
    ``rate`` on average): `PACES`."""


def run_live(spark: SparkSession, options: LiveOptions, scratch: Path) -> dict[str, Any]:
    """One paced run through the Spark job (or the pass-through); its JSON document."""
    from sepia.runtime.spark.sources.generator import (
        DEFAULT_CACHE,
        generated,
        rows_file,
        workload_origin,
    )

    if options.pace not in PACES:
        raise ValueError(f"pace is one of {', '.join(PACES)}, not {options.pace!r}")
    scale = options.scale or scale_for(options.rate, options.duration_s)
    manifest, directory = generated(options.workload, scale, options.seed, DEFAULT_CACHE)
    variant = manifest.variant(RUNS[options.workload])
    streams = manifest.streams_of(variant)
    rates = stream_rates(streams, options.rate)
    ends = [_end_times(directory / rows_file(s)) for s in streams]
    speed = None
    paces: list[float | StreamPace] = list(rates)
    paced_by = [f"rate={r!r}" for r in rates]
    if options.pace == "time":
        origin = workload_origin(tuple(directory / rows_file(s) for s in manifest.streams))
        speed = event_speed(ends, origin, options.rate)
        paces = [StreamPace.by_time(e, origin, speed) for e in ends]
        paced_by = [f"speed={speed!r}"] * len(streams)
    specs = {s.iri: f"gen:{options.workload}?stream={s.name}&{p}&scale={scale}"
                    f"&seed={options.seed}" for s, p in zip(streams, paced_by, strict=True)}
    results = scratch / "results.jsonl"
    watcher = Watcher(spark, results, options.duration_s)
    load_before = os.getloadavg()
    called = time.time()
    watcher.start()
    try:
        if options.passthrough:
            _pass_through(spark, specs, scratch)
        else:
            _job(spark, manifest, directory, variant.name, specs, results, scratch)
    except Exception as error:  # a failed run is reported with what it did
        watcher.watch.error = f"{type(error).__name__}: {error}"
    finally:
        watcher.finished.set()
        watcher.join()
    watch = watcher.watch
    lower, upper = pacing_start(list(watch.raw.values()), paces,
                                [s.elements for s in streams])
    stages = stage_times(options.event_log, watch.runs) if options.event_log else None
    batches = batches_of(list(watch.raw.values()), lower, stages)
    latencies, undecided = [], 0
    for written, line in watch.lines:
        t_ms = result_from_json(json.loads(line)).t
        released = deciding_release(t_ms, ends, paces, lower)
        if released is None:
            undecided += 1
        else:
            latencies.append((round(written - lower, 3), round(written - released, 3)))
    half = options.duration_s / 2
    steady = [b for b in batches if b.started_s >= half]
    return {
        "workload": options.workload, "variant": variant.name,
        "system": "spark-passthrough" if options.passthrough else "spark",
        "rate": options.rate, "stream_rates": dict(zip(specs, rates, strict=True)),
        "pace": options.pace, "speed": speed,
        "duration_s": options.duration_s, "scale": scale, "seed": options.seed,
        "date": f"{datetime.now(UTC):%Y-%m-%dT%H:%M}Z",
        "load_before": [round(x, 1) for x in load_before],
        "load_after": [round(x, 1) for x in os.getloadavg()],
        "began_bounds_s": [0.0, round(upper - lower, 3)],
        "start_up_s": round(lower - called, 3),
        "query_runs": len(watch.runs), "error": watch.error,
        "released": batches[-1].released if batches else 0,
        "ran_s": round(batches[-1].started_s + batches[-1].duration_s, 3) if batches else 0,
        "batch_s": quantiles([b.duration_s for b in batches]),
        "batch_s_second_half": quantiles([b.duration_s for b in steady]),
        "results": len(watch.lines), "undecided": undecided,
        "latency_s": quantiles([latency for _, latency in latencies]),
        "latency_s_second_half": quantiles([lat for at, lat in latencies if at >= half]),
        **keeps_up(batches),
        "stages_ms_second_half": steady_stages([b.stages for b in steady]),
        "state": {"first_rows": batches[0].state_rows if batches else None,
                  "last_rows": batches[-1].state_rows if batches else None,
                  "max_rows": max((b.state_rows for b in batches), default=None),
                  "last_bytes": batches[-1].state_bytes if batches else None},
        "batches": [dataclasses.asdict(b) for b in batches],
        "latencies": latencies,
    }


def _end_times(rows: Path) -> np.ndarray:
    """Each element's end time, by position (the source's offsets), from its Parquet rows."""
    import pyarrow.parquet as pq

    table = pq.read_table(rows, columns=["seq", "end"])
    grouped = table.group_by("seq").aggregate([("end", "max")]).sort_by("seq")
    positions = grouped["seq"].to_numpy()
    assert (positions == np.arange(len(positions))).all(), "an element without rows"
    return grouped["end_max"].to_numpy()


def _job(spark: SparkSession, manifest: Manifest, directory: Path, variant: str,
         specs: dict[str, str], results: Path, scratch: Path) -> None:
    from sepia.runtime.inputs import load_query
    from sepia.runtime.spark.run import SparkRunOptions, run_on_spark

    chosen = manifest.variant(variant)
    assert chosen.query is not None
    run_on_spark([load_query(directory / chosen.query)], specs,
                 [(graph, directory / path) for graph, path in manifest.background_of(chosen)],
                 SparkRunOptions(follow=True, rdfs=chosen.rdfs), checkpoint=scratch / "job",
                 output=str(results), fmt="jsonl", spark=spark)  # fmt: skip


def _pass_through(spark: SparkSession, specs: dict[str, str], scratch: Path) -> None:
    """The paced sources' rows into Spark's no-op sink, with the job's trigger (a
    generator's range rows read, as the job's route stage reads them)."""
    from functools import reduce

    from pyspark.sql import DataFrame

    from sepia.runtime.spark.ingest import INGEST_DDL
    from sepia.runtime.spark.sources import source_for
    from sepia.runtime.spark.sources.generator import ranged

    rows = reduce(DataFrame.unionByName, [source_for(spark, iri, spec)
                                          for iri, spec in specs.items()])
    rows = rows.mapInArrow(ranged, INGEST_DDL)
    query = (rows.writeStream.format("noop").trigger(processingTime="1 second")
             .option("checkpointLocation", str(scratch / "passthrough")).start())
    query.awaitTermination()


def plot_live(path: Path, documents: Sequence[dict[str, Any]]) -> None:
    """Per run: batch durations, result latencies and state rows against time."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    figure = Figure(figsize=(7.0, 6.4))
    duration, latency, state = figure.subplots(3, 1, sharex=True)
    for document in documents:
        label = f"{document['workload']} {document['system']} {document['rate']:g}/s"
        batches = document["batches"]
        duration.plot([b["started_s"] for b in batches], [b["duration_s"] for b in batches],
                      ".-", markersize=3, linewidth=0.8, label=label)
        if document["latencies"]:
            at, late = zip(*document["latencies"], strict=True)
            latency.plot(at, late, ".", markersize=2, label=label)
        state.plot([b["started_s"] for b in batches], [b["state_rows"] for b in batches],
                   "-", linewidth=1, label=label)
    duration.set_ylabel("batch duration (s)")
    latency.set_ylabel("result latency (s)")
    state.set_ylabel("state rows")
    state.set_xlabel("seconds since the source began releasing elements")
    for axes in (duration, latency):
        axes.set_yscale("log")
        axes.yaxis.set_major_formatter(ScalarFormatter())
        axes.yaxis.set_minor_formatter(NullFormatter())
    duration.legend(fontsize=7)
    duration.set_title("Sepia on Spark, a paced generator (local[2])")
    figure.tight_layout()
    figure.savefig(path, dpi=80)


def bench_live(spark: SparkSession, runs: Sequence[LiveOptions], out: Path) -> list[Path]:
    """Every run in order, then the JSON and the plot under ``out``."""
    documents = []
    for options in runs:
        with tempfile.TemporaryDirectory(prefix="sepia-live-") as scratch:
            documents.append(run_live(spark, options, Path(scratch)))
        print(summary_line(documents[-1]), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"{datetime.now(UTC):%Y-%m-%d-%H%M}-{ID}"
    written = [stem.with_suffix(".json"), stem.with_suffix(".png")]
    written[0].write_text(json.dumps(documents, indent=1) + "\n")
    plot_live(written[1], documents)
    return written


def event_log_settings(log_dir: Path) -> dict[str, str]:
    """The session's settings that keep its event log in ``log_dir``, uncompressed."""
    log_dir.mkdir(parents=True, exist_ok=True)
    return {"spark.eventLog.enabled": "true", "spark.eventLog.compress": "false",
            "spark.eventLog.dir": log_dir.resolve().as_uri()}


def summary_line(document: dict[str, Any]) -> str:
    batch, late = document["batch_s"], document["latency_s"]
    pace = " by event time" if document.get("pace") == "time" else ""
    return (f"{document['workload']} {document['system']} at {document['rate']:g}/s{pace} for "
            f"{document['duration_s']:g} s: start-up {document['start_up_s']} s, "
            f"{len(document['batches'])} batches, p50/p99 "
            f"{batch['p50']}/{batch['p99']} s; {document['results']} results, latency p50/p99 "
            f"{late['p50']}/{late['p99']} s; state rows {document['state']['first_rows']} -> "
            f"{document['state']['last_rows']}; keeps up: {document['keeps_up']}; load "
            f"{document['load_before'][0]} -> {document['load_after'][0]}")


def main(argv: Sequence[str] | None = None) -> None:
    """python -m sepia.bench.live W1 W4 --rate 200 --duration 300 [--pace time]
    [--passthrough]"""
    parser = argparse.ArgumentParser(prog="python -m sepia.bench.live", description=__doc__)
    parser.add_argument("workloads", nargs="+", choices=sorted(RUNS))
    parser.add_argument("--rate", type=float, required=True,
                        help="elements/s, all streams (with --pace time: on average)")
    parser.add_argument("--pace", choices=PACES, default="position",
                        help="release each stream by element position at its share of the "
                             "rate (default), or all by event time at the speed that gives "
                             "the rate on average")
    parser.add_argument("--duration", type=float, default=DURATION_S, help="seconds")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--passthrough", action="store_true",
                        help="the paced source into Spark's no-op sink, no query")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=Path, default=Path("bench-results"))
    parser.add_argument("--event-log", type=Path, default=None,
                        help="keep Spark's event log in this folder, each batch's stages "
                             "in the report")
    arguments = parser.parse_args(argv)
    from sepia.runtime.spark.session import SparkConfig, spark_session

    log = arguments.event_log
    spark = spark_session(SparkConfig(master=arguments.master, live=True,
                                      extra=event_log_settings(log) if log else {}))
    runs = [LiveOptions(w, arguments.rate, arguments.duration, arguments.seed,
                        passthrough=arguments.passthrough, event_log=log, pace=arguments.pace)
            for w in arguments.workloads]
    for path in bench_live(spark, runs, arguments.out):
        print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
