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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import pandas as pd
import pyoxigraph as ox
from pyspark.sql.streaming.stateful_processor import (
    ExpiredTimerInfo,
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)

from sepia.io.results import jsonl_line
from sepia.runtime.spark.elements import ELEMENT_FIELDS, ElementRow
from sepia.runtime.spark.engine_protocol import ContinuousEngine, EngineFactory, Step
from sepia.runtime.spark.reference_engine import ReferenceEngine
from sepia.runtime.spark.units import Unit

ENGINES: dict[str, EngineFactory] = {"reference": ReferenceEngine}
"""Engines the job can host, by the name `--engine` options and `JobSpec.engine` use."""

FLUSH_TIMER = 4_102_444_800_000
"""2100-01-01 in epoch ms: every key keeps a timer here; only the end-of-input marker moves
the watermark past it."""

RESULT_DDL = "t bigint, query_index int, partition string, seq int, query string, line string"
RESULT_ORDER = ("t", "query_index", "partition", "seq")
"""Sorting a batch's results by these columns gives the reference evaluator's order."""

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
    engine: str = "reference"
    rdfs: bool = False
    on_error: str = "stop"
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
    """The workers' spec, with the background store (if any) as N-Quads and its digest."""
    if background is None:
        return JobSpec(tuple(units), **options)
    data = background.dump(format=ox.RdfFormat.N_QUADS)
    digest = hashlib.sha1(data).hexdigest()
    return JobSpec(tuple(units), background=data, background_digest=digest, **options)


class EngineHost(StatefulProcessor):
    """Runs each key's engine step over its state; output rows are rendered jsonl lines."""

    def __init__(self, spec: JobSpec) -> None:
        self.spec = spec

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        tables = ENGINES[self.spec.engine].tables  # type: ignore[attr-defined]
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
        state = {name: list(table.get()) for name, table in self.tables.items()}
        step = self._engine(unit).step(partition, state, elements, watermark - 1, final)
        self._save(step)
        self._schedule(step.wake_at, final)
        if step.results:
            yield self._frame(unit, partition, step)

    def _engine(self, unit: int) -> ContinuousEngine:
        if unit not in self.engines:
            factory = ENGINES[self.spec.engine]
            store = self.spec.background_store()
            self.engines[unit] = factory(self.spec.units[unit], store, self.spec.rdfs)
        return self.engines[unit]

    def _save(self, step: Step) -> None:
        for name, table in self.tables.items():
            rows = step.state.get(name, [])
            if rows:
                table.put(rows)
            else:
                table.clear()

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
                "partition": [partition] * len(results),
                "seq": list(range(len(results))),
                "query": [r.query for r in results],
                "line": [jsonl_line(r, step.time_kind) for r in results],
            }
        )
