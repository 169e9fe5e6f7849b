"""The stateful stage: engines hosted in Spark's keyed state (`transformWithStateInPandas`).

One group per (unit, partition key). The host reads the key's state tables from the state
store (RocksDB provider, checkpointed), hands them with the key's new elements and the
watermark to the unit's engine, writes back what the engine returns, and keeps two kinds of
event-time timers: the engine's `wake_at` (results due without new input for this key) and
one far-future timer that fires when the end-of-input marker pushes the watermark past it,
so every key with state flushes (see `job.py`).

This module is light to import on purpose: Spark unpickles the stateful processor
(`EngineHost` and its `JobSpec`) in a driver-side Python process of its own when it plans
the query, a process started cold (not forked from Sepia's warm daemon) on every run, so
what this module imports at its top is paid on the driver in every run's planning. The
engines, pandas and the element rows' helpers are imported where a step needs them: in the
workers, which have them loaded already (`daemon.py`).
"""

from __future__ import annotations

import hashlib
import json
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyoxigraph as ox
from pyspark.sql.streaming.stateful_processor import (
    ExpiredTimerInfo,
    ListState,
    MapState,
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)

from sepia.runtime.spark.map_writes import write_changes
from sepia.runtime.spark.units import Unit
from sepia.runtime.spark.warm import WarmCache

if TYPE_CHECKING:
    import pandas as pd

    from sepia.engine.hosts.prepared import PreparedBackground
    from sepia.runtime.spark.elements import ElementRow
    from sepia.runtime.spark.engine_protocol import ContinuousEngine, EngineFactory, Step

ENGINE_NAMES = ("incremental", "reference")
"""Engines the job can host (`engines()`), by the name `JobSpec.engine` and
`SparkRunOptions.engine` use: the incremental engine (the default), and the reference
adapter (every element kept, re-evaluated from scratch: for comparisons and the queries
the engine refuses)."""


def engines() -> dict[str, EngineFactory]:
    """The engine classes by name (imported on first need: see the module)."""
    from sepia.runtime.spark.incremental_engine import IncrementalEngine
    from sepia.runtime.spark.reference_engine import ReferenceEngine

    return {"incremental": IncrementalEngine, "reference": ReferenceEngine}


def __getattr__(name: str) -> Any:
    """`ENGINES`: `engines()`, made when first asked for (see the module)."""
    if name == "ENGINES":
        return engines()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


DEFAULT_ENGINE = "incremental"

STREAM_ENDS = "host_stream_ends"
"""The host's own map table: a one-key unit's latest element time per stream (`_horizon`)."""
ENGINE_MAPS = "host_engine_maps"
"""The one map state that holds every map table of a key's engine, each entry under its
table's name and its own key (`map_entry`). Each state variable a task opens costs the JVM
about 10 ms in every stateful task (it makes the variable's encoders): a live W1 task
opened five, 48 ms of its 330."""
MAP_VALUE_DDL = "value string"
"""A map table's value in `ENGINE_MAPS`: one string, as every engine's map tables declare."""

FLUSH_TIMER = 4_102_444_800_000
"""2100-01-01 in epoch ms: every key keeps a timer here; only the end-of-input marker moves
the watermark past it."""

RESULT_DDL = "t bigint, query_index int, partition string, seq int, query string, line string"
RESULT_ORDER = ("t", "query_index", "partition", "seq", "line")
"""Sorting a batch's results by these columns gives the reference evaluator's order
(`partition`: the key, or for a unit spread over buckets, each result's `Step.order`;
`seq`: the engine's order within a key, 0 where `Step.order` places the results, whose
ties the line breaks: `result_lines.ordered_lines`)."""

_BACKGROUNDS: WarmCache[str, ox.Store] = WarmCache(4)
"""Background stores loaded in this Python worker, by digest (per-worker warm state: warm.py)."""
_PREPARED: WarmCache[str, PreparedBackground] = WarmCache(4)
"""Backgrounds encoded in this Python worker, by digest: each key's session and each route
stage's router start from a copy (per-worker warm state: warm.py)."""
_ENGINES: WarmCache[tuple, ContinuousEngine] = WarmCache(64)
"""Unit engines made in this Python worker (each plans its query once), by unit, engine,
background and entailment: every task and batch of the run in this worker shares them
(per-worker warm state: warm.py)."""


@dataclass(frozen=True, slots=True)
class JobSpec:
    """Everything the workers need, shipped with the plan.

    The background travels as N-Quads inside the pickled plan, not as a Spark broadcast:
    the stateful processor is also unpickled in a driver-side Python process (to read its
    state schemas) where broadcast variables do not exist. It travels compressed (zlib,
    level 1): the driver hands the plan to Spark once per stage, through its gateway, and
    W6's 16 MB of N-Quads (0.9 MB compressed, in 33 ms) took most of a second to build
    the job's stages.
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
    None: one per core, at least two (`job.default_buckets`)."""
    streams: tuple[str, ...] = ()
    """The run's streams, in the order they are bound (a unit naming none reads them all)."""
    forget_terms: int | None = None
    """A key's dictionary first forgets the terms no state holds once it holds this many
    (`sepia.engine.forgetting`; None: never; `job_spec`'s default: `MIN_TERMS`)."""
    tables: tuple[str, ...] = ()
    """The list tables of the units' engines, by name (kept packed: `PACKED_DDL`) ..."""
    maps: tuple[tuple[str, str], ...] = ()
    """... and map state (by a string key), read by `EngineHost.init` without importing
    an engine (see the module)."""
    background: bytes | None = field(default=None, compare=False, repr=False)
    """The background's N-Quads, compressed unless empty (empty: no background data)."""
    background_digest: str = ""
    merges: bool = False
    """The run's results all come in one batch (a run of files, not folders, whose keys
    end at the end-of-input markers: `run_on_spark`), so a unit may be split into buckets
    that report partial states, which a stage of the job merges (`Split.merged`). Not on
    one core, where the buckets' parts only add work (W3 at 1,000,000 elements: 34,078
    elements/s split, 44,217 on one key)."""
    stream_horizon: int | None = None
    """None: every key steps at the horizon of Spark's watermark. A number (the run's
    allowed lateness): a unit on one key steps at its own streams' latest times minus it
    (`EngineHost._horizon`), one batch sooner; `run_on_spark` sets it on live runs."""

    def background_store(self) -> ox.Store | None:
        """The background as a store, parsed once per Python worker."""
        if self.background is None:
            return None
        return _BACKGROUNDS.get_or_make(self.background_digest, self._parsed_background)

    def prepared_background(self) -> PreparedBackground:
        """The background encoded once per Python worker (`sepia.engine.hosts.prepared`),
        for the incremental engine's sessions and routers (one of no data where the run has
        none)."""
        from sepia.engine.hosts.prepared import PreparedBackground

        return _PREPARED.get_or_make(
            self.background_digest, lambda: PreparedBackground.of(self.background_store())
        )

    def _parsed_background(self) -> ox.Store:
        store = ox.Store()
        if self.background:
            store.load(zlib.decompress(self.background), format=ox.RdfFormat.N_QUADS)
        return store


def job_spec(units: Sequence[Unit], background: ox.Store | None = None, **options) -> JobSpec:
    """The workers' spec, with the background store (if any) as N-Quads and its digest, and
    each unit's engine (a unit the incremental engine refuses falls back to the reference
    adapter, said on standard error). `streams`: the run's stream IRIs in the order they
    are bound, which orders elements with equal times (as the local runtime does)."""
    from sepia.engine.forgetting import MIN_TERMS

    run_streams = tuple(options.pop("streams", ()))
    options["streams"] = run_streams
    options.setdefault("forget_terms", MIN_TERMS)
    units = [unit.in_order(run_streams) for unit in units]
    engine = options.get("engine", DEFAULT_ENGINE)
    if engine not in ENGINE_NAMES:
        raise ValueError(f"unknown Spark engine {engine!r}: one of {', '.join(ENGINE_NAMES)}")
    chosen = tuple(_unit_engine(u, engine, background, options.get("rdfs", False)) for u in units)
    factories = [engines()[name] for name in dict.fromkeys(chosen)]
    options["tables"] = tuple(dict.fromkeys(t for f in factories for t in f.tables))  # type: ignore[attr-defined]
    options["maps"] = tuple(t for f in factories for t in f.maps.items())  # type: ignore[attr-defined]
    for name, ddl in options["maps"]:
        if len(ddl.split(",")) != 1 or ddl.split()[-1].lower() != "string":
            raise ValueError(f"map table {name!r} must hold one string value, not {ddl!r}")
    if background is None:
        return JobSpec(tuple(units), unit_engines=chosen, **options)
    data = background.dump(format=ox.RdfFormat.N_QUADS)
    digest = hashlib.sha1(data).hexdigest()
    shipped = zlib.compress(data, 1) if data else data
    return JobSpec(
        tuple(units), unit_engines=chosen, background=shipped, background_digest=digest,
        **options,
    )


def _unit_engine(unit: Unit, engine: str, background: ox.Store | None, rdfs: bool) -> str:
    from sepia.runtime.spark.incremental_engine import refusal

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


PACKED_DDL = "rows string"
"""The schema of a list table in the state store: its rows packed `PACKED_ROWS` to a JSON
array (an element row's `elements.TermRefs` as its term text). PySpark hands a list
state's rows to the worker one pickled Row at a time, each
carrying its schema as JSON parsed again (about 0.2 ms a row): a key's `held` elements,
a batch of them, cost more to read than to evaluate."""
PACKED_ROWS = 1024
"""Rows per packed row: the state store's values stay a few hundred kilobytes."""


def unit_engine(spec: JobSpec, unit: int) -> ContinuousEngine:
    """Unit `unit`'s engine in this Python worker: its query planned once (`_ENGINES`)."""
    name = spec.unit_engines[unit]
    found = (spec.units[unit], name, spec.background_digest, spec.rdfs, spec.forget_terms)
    return _ENGINES.get_or_make(
        found,
        lambda: engines()[name](
            spec.units[unit],
            spec.prepared_background() if name == "incremental" else spec.background_store(),
            spec.rdfs,
            forget_terms=spec.forget_terms,
            checked=True,
        ),
    )


def packed(rows: Sequence[tuple]) -> list[tuple[str]]:
    """A list table's rows as the state store keeps them (`PACKED_DDL`)."""
    return [
        (json.dumps(rows[i : i + PACKED_ROWS], default=str),)
        for i in range(0, len(rows), PACKED_ROWS)
    ]


def unpacked(stored: Iterable[tuple]) -> list[tuple]:
    """A list table's rows from its packed rows in the state store."""
    return [tuple(row) for (text,) in stored for row in json.loads(text)]


def batch_ends(elements: Iterable[ElementRow], marks: Mapping[str, int]) -> dict[str, int]:
    """Each stream's latest element time a key's batch tells: its elements' (stand-ins
    too) and its mark rows' (`element_batches.unpack`)."""
    from sepia.runtime.spark.element_batches import ElementBatch

    batch = elements if isinstance(elements, ElementBatch) else ElementBatch.of(elements)
    latest = dict(marks)
    for stream, end in batch.latest().items():
        latest[stream] = max(latest.get(stream, end), end)
    return latest


def map_entry(table: str, key: str) -> str:
    """The key of a map table's entry in `ENGINE_MAPS`: the table's name, NUL, its key."""
    return f"{table}\0{key}"


class StoredTables(Mapping[str, list[tuple]]):
    """A key's state tables in Spark's state store, each read when first looked up: a list
    table unpacked, the map tables as (key, value) rows, all of them read from
    `ENGINE_MAPS` at once."""

    def __init__(
        self, lists: Mapping[str, ListState], maps: MapState | None, map_names: Iterable[str]
    ) -> None:
        self.lists = lists
        self.maps = maps
        self.map_names = tuple(map_names)
        self.read: dict[str, list[tuple]] = {}

    def __getitem__(self, name: str) -> list[tuple]:
        if name not in self.read:
            if name in self.lists:
                self.read[name] = unpacked(self.lists[name].get())
            elif name in self.map_names:
                self.read |= self.map_tables()
            else:
                raise KeyError(name)
        return self.read[name]

    def map_tables(self) -> dict[str, list[tuple]]:
        """Every map table's (key, value) rows."""
        found: dict[str, list[tuple]] = {name: [] for name in self.map_names}
        if self.maps is not None:
            for (entry,), (value,) in self.maps.iterator():
                table, _, key = entry.partition("\0")
                if table in found:
                    found[table].append((key, value))
        return found

    def __iter__(self) -> Iterator[str]:
        return iter([*self.lists, *self.map_names])

    def __len__(self) -> int:
        return len(self.lists) + len(self.map_names)


class EngineHost(StatefulProcessor):
    """Runs each key's engine step over its state; output rows are rendered jsonl lines."""

    def __init__(self, spec: JobSpec) -> None:
        self.spec = spec

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.tables: dict[str, ListState] = {
            name: handle.getListState(name, PACKED_DDL) for name in self.spec.tables
        }
        self.maps: MapState | None = None
        if self.spec.maps:
            self.maps = handle.getMapState(ENGINE_MAPS, "key string", MAP_VALUE_DDL)
        self.stream_ends = handle.getMapState(STREAM_ENDS, "key string", "end bigint")

    def handleInputRows(
        self, key: tuple, rows: Iterator[pd.DataFrame], timerValues: TimerValues
    ) -> Iterator[pd.DataFrame]:
        from sepia.runtime.spark.collection import paused_gc
        from sepia.runtime.spark.element_batches import unpack
        from sepia.runtime.spark.elements import ELEMENT_FIELDS

        with paused_gc():
            elements, ended, marks = unpack(
                row
                for frame in rows
                for row in zip(*(frame[name].tolist() for name in ELEMENT_FIELDS), strict=True)
            )
            ends = self._ends(int(key[0]), ended)
            yield from self._step(key, elements, timerValues, ends, batch_ends(elements, marks))

    def handleExpiredTimer(
        self, key: tuple, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[pd.DataFrame]:
        from sepia.runtime.spark.collection import paused_gc

        with paused_gc():
            yield from self._step(key, [], timerValues)

    def _ends(self, unit: int, ended: set[str]) -> bool:
        """Whether the end-of-input markers of every stream the unit reads came in this
        batch: its input is then complete with this batch's elements (one pass over a
        finite input; markers spread over batches end it by the watermark instead)."""
        reads = self.spec.units[unit].streams or self.spec.streams
        return bool(ended) and bool(reads) and ended.issuperset(reads)

    def _step(
        self,
        key: tuple,
        elements: list[ElementRow],
        timer_values: TimerValues,
        ends: bool = False,
        latest: Mapping[str, int] | None = None,
    ) -> Iterator[pd.DataFrame]:
        """One step of a key's engine. `latest`: each stream's latest element time the
        batch tells the key (its elements' and its mark rows'), none on a timer."""
        unit, partition = int(key[0]), key[1]
        watermark = timer_values.getCurrentWatermarkInMs()
        final = ends or watermark > FLUSH_TIMER
        horizon = watermark - 1
        if self.spec.stream_horizon is not None and self._told_every_time(unit, partition):
            horizon = self._horizon(unit, latest or {}, horizon, final)
        engine = self._engine(unit)
        tables = StoredTables({name: self.tables[name] for name in engine.tables}, self.maps,
                              engine.maps)  # fmt: skip
        step = engine.step(partition, tables, elements, horizon, final)
        self._save(tables, step)
        self._schedule(step.wake_at, final)
        if step.results:
            yield self._frame(unit, partition, step)

    def _engine(self, unit: int) -> ContinuousEngine:
        return unit_engine(self.spec, unit)

    def _told_every_time(self, unit: int, partition: str | None) -> bool:
        """Whether the key learns every element time of its unit's streams: the one key of
        a unit (it gets every element), or a bucket of one on the incremental engine (the
        route stage's mark rows tell it what its own elements do not: job.py, Marks); not
        the reference adapter's value keys, which no mark reaches."""
        return partition is None or self.spec.unit_engines[unit] == "incremental"

    def _horizon(self, unit: int, batch: Mapping[str, int], horizon: int, final: bool) -> int:
        """The horizon of a key told every element time of its unit's streams
        (`_told_every_time`): each stream's latest element time (`batch`: this batch's,
        kept in `STREAM_ENDS`) minus the allowed lateness, the least of them, less one; at
        least the watermark's `horizon`.

        Spark's watermark is the least such bound over the run's streams, computed at the
        end of a batch and given to the next one, so a key stepping at it emits a result
        one batch after the element that decided it. Here the batch's own element times
        move the horizon: a unit reading every stream steps where the next batch would
        (and drops late elements as it would), a batch sooner; a unit reading fewer is not
        held back by the others' (an element later than the allowed lateness on its own
        stream may then be dropped, which the lateness contract allows). Every key of a
        unit is told the same times, so its buckets step to one horizon, the one its single
        key would. A quiet source's clock rows reach no key: they move Spark's watermark
        only.
        """
        if final:
            self.stream_ends.clear()
            return horizon
        stored = {key[0]: value[0] for key, value in self.stream_ends.iterator()}
        latest = dict(stored)
        for stream, end in batch.items():
            latest[stream] = max(latest.get(stream, end), end)
        write_changes(self.stream_ends, {stream: (end,) for stream, end in latest.items()
                                         if stored.get(stream) != end})  # fmt: skip
        reads = self.spec.units[unit].streams or self.spec.streams
        if not reads or any(s not in latest for s in reads):
            return horizon
        lateness = self.spec.stream_horizon or 0
        return max(horizon, min(latest[s] for s in reads) - lateness - 1)

    @staticmethod
    def _save(tables: StoredTables, step: Step) -> None:
        """Write back as the protocol says: replace list tables, replace a map table named
        in `state` (its entries removed, its rows set), set or remove the entries in
        `changed`, leave the rest alone; the map writes in one exchange."""
        writes: dict[str, tuple | None] = {}
        replaced = {name for name in step.state if name in tables.map_names}
        if replaced and tables.maps is not None:
            if replaced == set(tables.map_names):
                tables.maps.clear()  # the end of input: every map table emptied at once
            else:
                for (entry,) in tables.maps.keys():  # noqa: SIM118 (a MapState: keys only)
                    if entry.partition("\0")[0] in replaced:
                        writes[entry] = None
            for name in replaced:
                writes |= {map_entry(name, key): tuple(value) for key, *value in step.state[name]}
        for name, rows in step.state.items():
            if name in tables.lists:
                table = tables.lists[name]
                if rows:
                    table.put(packed(rows))
                else:
                    table.clear()
        for name, entries in step.changed.items():
            writes |= {map_entry(name, key): value for key, value in entries.items()}
        if writes and tables.maps is not None:
            write_changes(tables.maps, writes)  # one exchange with the state server

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
        """The step's result rows. Columns go to pandas as numpy arrays (integers typed,
        texts as object arrays): from lists, pandas scans every value to find a column's
        type (W4 v-shape `;`: a tenth of a bucket's step)."""
        import numpy as np
        import pandas as pd

        from sepia.runtime.spark.result_lines import jsonl_lines

        positions = {q.name: q.position for q in reversed(self.spec.units[unit].queries)}
        results = step.results
        count = len(results)
        lines = step.lines if step.lines is not None else jsonl_lines(results, step.time_kind)
        seq = np.zeros(count, np.int32) if step.order else np.arange(count, dtype=np.int32)
        return pd.DataFrame(
            {
                "t": np.fromiter((r.t for r in results), dtype=np.int64, count=count),
                "query_index": np.fromiter(
                    (positions[r.query] for r in results), dtype=np.int32, count=count
                ),
                "partition": _objects(step.order or [partition] * count),
                "seq": seq,
                "query": _objects([r.query for r in results]),
                "line": _objects(lines),
            }
        )


WARM_RESULTS = 30_000
"""Result rows the stateful warm-up gives (`WarmHost`)."""


class WarmHost(StatefulProcessor):
    """The body of a batch transformWithState run before a live query (`job.warm_workers`):
    Spark starts the stateful stage's Python workers from a daemon of its own, which the
    route stage's warm-up does not reach; there the run's one key makes every unit's
    engine, in one worker. It gives `WARM_RESULTS` result rows of one made-up line, which
    the warm-up collects as Arrow, as the sink does a batch's results: the JVM's code that
    reads a step's result rows from Python and hands them to the driver runs compiled by
    the query's first data batches instead of interpreted (live W1's first full batch
    spent 650 ms in its stateful stage, against 330 once warm)."""

    def __init__(self, spec: JobSpec) -> None:
        self.spec = spec

    def init(self, handle: StatefulProcessorHandle) -> None:
        pass

    def handleInputRows(
        self, key: tuple, rows: Iterator[pd.DataFrame], timerValues: TimerValues
    ) -> Iterator[pd.DataFrame]:
        for unit in range(len(self.spec.units)):
            unit_engine(self.spec, unit)
        yield warm_results(WARM_RESULTS)

    def close(self) -> None:
        pass


def warm_results(count: int) -> pd.DataFrame:
    """`count` result rows (`RESULT_DDL`) of one made-up jsonl line."""
    import numpy as np
    import pandas as pd

    line = '{"query": "warm", "t": 1, "binding": {"x": "<urn:sepia:warm>"}}'
    return pd.DataFrame({
        "t": np.arange(count, dtype=np.int64), "query_index": np.zeros(count, np.int32),
        "partition": _objects([None] * count), "seq": np.arange(count, dtype=np.int32),
        "query": _objects(["warm"] * count), "line": _objects([line] * count),
    })  # fmt: skip


def _objects(values: Sequence[object]) -> Any:
    """`values` as a numpy array of objects (strings, None), made without a type scan."""
    import numpy as np

    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array
