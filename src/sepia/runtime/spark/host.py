"""The stateful stage: engines hosted in Spark's keyed state (`transformWithStateInPandas`).

One group per (unit, partition key). The host reads the key's state tables from the state
store (RocksDB provider, checkpointed), hands them with the key's new elements and the
watermark to the unit's engine, writes back what the engine returns, and keeps two kinds of
event-time timers: the engine's `wake_at` (results due without new input for this key) and
one far-future timer that fires when the end-of-input marker pushes the watermark past it,
so every key with state flushes (see `job.py`).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd
import pyoxigraph as ox
from pyspark.sql.streaming.stateful_processor import (
    ExpiredTimerInfo,
    ListState,
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)

from sepia.rdf.results import jsonl_line
from sepia.runtime.spark.elements import ELEMENT_FIELDS, ElementRow
from sepia.runtime.spark.engine_protocol import ContinuousEngine, EngineFactory, Step
from sepia.runtime.spark.incremental_engine import IncrementalEngine, refusal
from sepia.runtime.spark.reference_engine import ReferenceEngine
from sepia.runtime.spark.units import Unit

ENGINES: dict[str, EngineFactory] = {"incremental": IncrementalEngine, "reference": ReferenceEngine}
"""Engines the job can host, by the name `JobSpec.engine` and `SparkRunOptions.engine` use:
the incremental engine (the default), and the reference adapter (every element kept,
re-evaluated from scratch: for comparisons and the queries the engine refuses)."""

DEFAULT_ENGINE = "incremental"

FLUSH_TIMER = 4_102_444_800_000
"""2100-01-01 in epoch ms: every key keeps a timer here; only the end-of-input marker moves
the watermark past it."""

RESULT_DDL = "t bigint, query_index int, partition string, seq int, query string, line string"
RESULT_ORDER = ("t", "query_index", "partition", "seq")
"""Sorting a batch's results by these columns gives the reference evaluator's order
(`partition`: the key, or for a unit spread over buckets, each result's `Step.order`)."""

_BACKGROUNDS: dict[str, ox.Store] = {}
"""Background stores loaded in this Python worker, by digest (loaded once per worker)."""


@dataclass(frozen=True, slots=True)
class JobSpec:
    """Everything the workers need, shipped with the plan.

    The background travels as N-Quads inside the pickled plan, not as a Spark broadcast:
    the stateful processor is also unpickled in a driver-side Python process (to read its
    state schemas) where broadcast variables do not exist.
    """

    units: tuple[Unit, ...]
    engine: str = DEFAULT_ENGINE
    unit_engines: tuple[str, ...] = ()
    """The engine of each unit: `engine`, or the reference where the incremental engine
    refuses the unit (`job_spec` decides, on the driver)."""
    rdfs: bool = False
    on_error: str = "stop"
    buckets: int | None = None
    """Keys a PARTITION BY unit on the incremental engine is spread over (job.py, Keys);
    None: twice the session's default parallelism (`job.results_frame` decides)."""
    background: bytes | None = field(default=None, compare=False, repr=False)
    background_digest: str = ""

    def background_store(self) -> ox.Store | None:
        """The background as a store, parsed once per Python worker."""
        if self.background is None:
            return None
        if self.background_digest not in _BACKGROUNDS:
            store = ox.Store()
            store.load(self.background, format=ox.RdfFormat.N_QUADS)
            _BACKGROUNDS[self.background_digest] = store
        return _BACKGROUNDS[self.background_digest]


def job_spec(units: Sequence[Unit], background: ox.Store | None = None, **options) -> JobSpec:
    """The workers' spec, with the background store (if any) as N-Quads and its digest, and
    each unit's engine (a unit the incremental engine refuses falls back to the reference
    adapter, said on standard error). `streams`: the run's stream IRIs in the order they
    are bound, which orders elements with equal times (as the local runtime does)."""
    run_streams = options.pop("streams", ())
    units = [unit.in_order(run_streams) for unit in units]
    engine = options.get("engine", DEFAULT_ENGINE)
    if engine not in ENGINES:
        raise ValueError(f"unknown Spark engine {engine!r}: one of {', '.join(ENGINES)}")
    chosen = tuple(_unit_engine(u, engine, background, options.get("rdfs", False)) for u in units)
    if background is None:
        return JobSpec(tuple(units), unit_engines=chosen, **options)
    data = background.dump(format=ox.RdfFormat.N_QUADS)
    digest = hashlib.sha1(data).hexdigest()
    return JobSpec(
        tuple(units), unit_engines=chosen, background=data, background_digest=digest, **options
    )


def _unit_engine(unit: Unit, engine: str, background: ox.Store | None, rdfs: bool) -> str:
    if engine != "incremental":
        return engine
    reason = refusal(unit, background, rdfs)
    if reason is None:
        return engine
    names = ", ".join(q.name for q in unit.queries)
    print(
        f"sepia: {names}: the incremental engine cannot run it ({reason}); it runs on the "
        "reference adapter, which keeps every element of its keys",
        file=sys.stderr,
    )
    return "reference"


class StoredTables(Mapping[str, list[tuple]]):
    """A key's state tables in Spark's state store, each read when first looked up."""

    def __init__(self, tables: Mapping[str, ListState]) -> None:
        self.tables = tables
        self.read: dict[str, list[tuple]] = {}

    def __getitem__(self, name: str) -> list[tuple]:
        if name not in self.read:
            self.read[name] = list(self.tables[name].get())
        return self.read[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.tables)

    def __len__(self) -> int:
        return len(self.tables)


class EngineHost(StatefulProcessor):
    """Runs each key's engine step over its state; output rows are rendered jsonl lines."""

    def __init__(self, spec: JobSpec) -> None:
        self.spec = spec

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        tables = {
            name: ddl
            for engine in dict.fromkeys(self.spec.unit_engines)
            for name, ddl in ENGINES[engine].tables.items()  # type: ignore[attr-defined]
        }
        self.tables = {name: handle.getListState(name, ddl) for name, ddl in tables.items()}
        self.engines: dict[int, ContinuousEngine] = {}

    def handleInputRows(
        self, key: tuple, rows: Iterator[pd.DataFrame], timerValues: TimerValues
    ) -> Iterator[pd.DataFrame]:
        elements: list[ElementRow] = [
            row
            for frame in rows
            for row in frame[list(ELEMENT_FIELDS)].itertuples(index=False, name=None)
        ]
        yield from self._step(key, elements, timerValues)

    def handleExpiredTimer(
        self, key: tuple, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[pd.DataFrame]:
        yield from self._step(key, [], timerValues)

    def _step(
        self, key: tuple, elements: list[ElementRow], timer_values: TimerValues
    ) -> Iterator[pd.DataFrame]:
        unit, partition = int(key[0]), key[1]
        watermark = timer_values.getCurrentWatermarkInMs()
        final = watermark > FLUSH_TIMER
        engine = self._engine(unit)
        tables = {name: self.tables[name] for name in engine.tables}
        step = engine.step(partition, StoredTables(tables), elements, watermark - 1, final)
        self._save(tables, step)
        self._schedule(step.wake_at, final)
        if step.results:
            yield self._frame(unit, partition, step)

    def _engine(self, unit: int) -> ContinuousEngine:
        if unit not in self.engines:
            factory = ENGINES[self.spec.unit_engines[unit]]
            store = self.spec.background_store()
            self.engines[unit] = factory(self.spec.units[unit], store, self.spec.rdfs)
        return self.engines[unit]

    @staticmethod
    def _save(tables: Mapping[str, ListState], step: Step) -> None:
        """Write back as the protocol says: replace, append, leave the rest alone."""
        for name, rows in step.state.items():
            if rows:
                tables[name].put(rows)
            else:
                tables[name].clear()
        for name, rows in step.appended.items():
            if rows:
                tables[name].appendList(rows)

    def _schedule(self, wake_at: int | None, final: bool) -> None:
        """Keep exactly the timers wanted: the flush timer and the engine's wake-up.

        Spark fires a timer once the watermark reaches it; the horizon reaches `wake_at`
        when the watermark reaches `wake_at + 1`. (A timer at the watermark itself would fire
        now and be removed after its handler, taking a re-registration with it.)
        """
        wake = {wake_at + 1} if wake_at is not None else set()
        wanted = set() if final else {FLUSH_TIMER} | wake
        present = set(self.handle.listTimers())
        for stale in present - wanted:
            self.handle.deleteTimer(stale)
        for new in wanted - present:
            self.handle.registerTimer(new)

    def _frame(self, unit: int, partition: str | None, step: Step) -> pd.DataFrame:
        positions = {q.name: q.position for q in reversed(self.spec.units[unit].queries)}
        results = step.results
        return pd.DataFrame(
            {
                "t": [r.t for r in results],
                "query_index": [positions[r.query] for r in results],
                "partition": step.order or [partition] * len(results),
                "seq": list(range(len(results))),
                "query": [r.query for r in results],
                "line": [jsonl_line(r, step.time_kind) for r in results],
            }
        )
