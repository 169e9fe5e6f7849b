"""The generator source: a benchmark workload's stream replayed at a given pace.

`gen:W4?rate=500&seed=7&scale=10000` is the stream the seeded generators of
`sepia.workloads` write for W4 (same workload, scale and seed: the same elements),
released `rate` elements per second of wall-clock time (all at once without a pace), from
the query's second offset request (its first batch, the query's start-up, reads none).
`speed=S` paces by event time instead (`_timed`): an element is released once the wall
clock has passed `began + (end - origin) / S`, its end time read as milliseconds and `S`
being event-time milliseconds per wall-clock millisecond (`speed=1`: as it happened,
`speed=60`: a minute a second); `origin` is the earliest end time over all the streams of
the same workload, scale and seed (`workload_origin`), so each stream of a workload bound
with the same `speed` keeps pace with the others in event time, as a live source delivers
elements at about their time. By position, two streams each at its share of a rate drift
apart in event time by what their elements' times happen to be. `rate` and `speed` cannot
be given together. The released position is found by a binary search over the stream's
end times (`released_by`: the row groups' statistics, then one row group), not a scan. The
generators write whole files, so the stream is generated once per machine into a cache
directory, parsed by Sepia's reader (ingest's file parse) into Parquet ingest rows, and then
read back by element range: offsets are element positions, so a restarted query replays
exactly the elements of its unfinished batch, and the source is replayable like a file.
Event times are the generated ones (from 2026-01-01); the rate only paces their release.
With `trigger(availableNow=True)` the whole workload is one run, regardless of `rate`.
A batch's elements are read by as many tasks as the session has cores (the job sets
`cores`), unless it is small, at most `ELEMENTS_PER_PARTITION` each (`spans`). A read task
hands Spark one *range row* per span (`RANGE`), not the span's rows: the route stage reads
the rows it stands for from the Parquet file itself (`ranged`), so they never cross from
Python into the JVM's rows and back, as a stream file's pieces do not. With
`idleTimeout` (seconds), once the paced stream has been released to its end, time moves on
with the clock (`idle`): the last windows close without an end-of-input element. Paced by
`speed`, the clock row's time moves at that speed too, and also fills a gap in the
stream's event times: it never passes the time up to which the stream has been released.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import StructType

from sepia import workloads as generators
from sepia.runtime.spark.ingest import (
    INGEST_DDL,
    INGEST_SCHEMA,
    IngestOptions,
    parse_path_batches,
)
from sepia.runtime.spark.sources.idle import CLOCK, IdleClock, clock_batch, clock_due
from sepia.runtime.spark.sources.push import required_option
from sepia.runtime.spark.warm import WarmCache
from sepia.workloads import generate, workload
from sepia.workloads.manifest import Manifest, StreamFile

OFFSET = "element"
DEFAULT_SEED = 7  # sepia generate's default: `gen:W4` is the data `sepia generate W4` writes
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "sepia-gen"
ROW_GROUP = 8_192
ELEMENTS_PER_PARTITION = 20_000
"""The most elements one read task takes."""
RANGE = "urn:sepia:element-range"
"""The element of a range row: it stands for the elements `seq` to `line` - 1 of the
Parquet rows at `s` (`range_batch`, `ranged`)."""
LEAST_SHARE = 2_000
"""The fewest elements a batch is cut over the cores for: a read task's own cost (a Python
worker's round, the rows' conversion set up) outweighs a smaller share."""


class GeneratorSource(DataSource):
    """`spark.readStream.format("sepia-gen")`: options workload, scale, seed, rate or speed,
    stream (the stream IRI), workloadStream (which of the workload's streams), name, cache,
    cores (of the session: `spans`)."""

    @classmethod
    def name(cls) -> str:
        return "sepia-gen"

    def schema(self) -> str:
        return INGEST_DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return GeneratorReader(self.options)


class GeneratorReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are element positions in the generated stream; the clock paces the latest
    (`rate`: by position, `speed`: by event time)."""

    clock: Callable[[], float] = staticmethod(time.monotonic)

    def __init__(self, options: Mapping[str, str]) -> None:
        spec = workload(required_option(options, "workload"))
        self.stream = required_option(options, "stream")
        self.workload = spec.id
        self.scale = int(options.get("scale", str(spec.scale)))
        self.seed = int(options.get("seed", str(DEFAULT_SEED)))
        self.pick = options.get("workloadStream")
        self.cores = int(options.get("cores", "1"))
        self.cache = Path(options.get("cache", str(DEFAULT_CACHE)))
        self.name = options.get("name", f"gen:{spec.id}?scale={self.scale}&seed={self.seed}")
        self.rate, self.speed = pace_of(options)
        idle = options.get("idleTimeout")
        lateness = int(options.get("allowedLateness", "0"))
        self.idle = IdleClock(float(idle), lateness, self.speed or 1.0) if idle else None
        self._kind = "dateTime"  # of the last element released (clock rows copy it)
        self._asked = False  # whether the first batch asked for its offsets (`_paced`)
        self._pace: tuple[float, int] | None = None  # (clock, offset) when pacing began
        self._since: tuple[int, int] | None = None  # with `speed`: (offset, its start time)
        self._target: int | None = None  # the end of an availableNow run

    def rows(self) -> tuple[Path, int]:
        """The Parquet rows of the chosen stream and its element count (generated if absent)."""
        manifest, directory = generated(self.workload, self.scale, self.seed, self.cache)
        chosen = choose_stream(manifest, self.pick, self.stream)
        return directory / rows_file(chosen), chosen.elements

    def initialOffset(self) -> dict:
        return {OFFSET: 0}

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self.rows()[1]

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        first = start[OFFSET]
        total = self.rows()[1]
        unpaced = self.rate is None and self.speed is None
        latest = total if unpaced or self._target is not None else self._paced(first)
        if isinstance(limit, ReadMaxRows):
            latest = min(latest, first + limit.max_rows)
        offset = {OFFSET: max(first, min(latest, total))}
        if self.idle is None or self._target is not None:
            return offset
        if offset[OFFSET] == first:
            return self.idle.tick(offset, start)
        self.idle.saw(self._time_of(offset[OFFSET] - 1))
        return offset

    def _time_of(self, position: int) -> int:
        """The time of the element at `position` (and remember its kind)."""
        row = seq_range(self.rows()[0], position, position + 1, columns=["seq", "end", "kind"])
        self._kind = row.column("kind")[0].as_py()
        return row.column("end")[0].as_py()

    def _paced(self, first: int) -> int:
        """`rate` elements per second since the second call (from where that call started),
        or with `speed` the elements due by event time (`_timed`).

        The first call is the query's first batch, which plans the query and starts its
        Python workers (seconds): nothing is released until it is done, so the stream
        begins when the query is ready to read it and start-up stays apart from the pace."""
        if not self._asked:
            self._asked = True
            if self.speed is not None:  # set up now: the second call fixes `began` and
                released_by(self.rows()[0], self._start(first))  # answers at once
            return first
        if self._pace is None:
            self._pace = (self.clock(), first)
        began, base = self._pace
        elapsed = self.clock() - began
        if self.speed is None:
            return base + int(self.rate * elapsed)  # type: ignore[operator]
        return self._timed(base, elapsed)

    def _timed(self, base: int, elapsed: float) -> int:
        """The end of the elements whose end time is at most `math.floor(elapsed * 1000 *
        speed)` event-time milliseconds past the pace's start: the workload's origin, or,
        for a query restarted at `base` > 0, the time of the last element it had read
        (the streams of the workload restart about where their batch left them all, within
        one element of each other)."""
        assert self.speed is not None
        bound = self._start(base) + math.floor(elapsed * 1000 * self.speed)
        return released_by(self.rows()[0], bound)

    def _start(self, base: int) -> int:
        """The event time the pace starts from at offset `base` (`_timed`). Found, and the
        stream's first search made, in the query's start-up call: the first row group read
        sets up Arrow's reading (a quarter of a second), and each of a workload's sources
        fixes its `began` at its own second call, which Spark makes one source after the
        other: done there, it delayed the next source's start, and so its event times."""
        if self._since is None or self._since[0] != base:
            if base == 0:
                manifest, directory = generated(self.workload, self.scale, self.seed, self.cache)
                paths = tuple(directory / rows_file(s) for s in manifest.streams)
                self._since = (base, workload_origin(paths))
            else:
                self._since = (base, self._time_of(base - 1))
        return self._since[1]

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        parts = [InputPartition(span) for span in spans(start[OFFSET], end[OFFSET], self.cores)]
        moved = clock_due(start, end)
        return parts if moved is None else [*parts, InputPartition((CLOCK, moved, self._kind))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value[0] == CLOCK:
            _, moved, kind = partition.value
            return iter([clock_batch(self.stream, self.name, moved, kind)])
        low, high = partition.value
        return iter([range_batch(self.stream, self.name, self.rows()[0], low, high)])


def range_batch(stream: str, name: str, path: Path, low: int, high: int) -> pa.RecordBatch:
    """The range row of elements `low` to `high` - 1 of `stream` (Parquet rows at `path`,
    the source named `name`), stamped with their latest end, so the watermark Spark takes
    from it is the one their own rows give. A paced W1 second moved 20,000 rows through
    Arrow into the JVM's rows and back into the route stage's Arrow; now one row."""
    times = seq_range(path, low, high, columns=["seq", "end", "kind"])
    if not times.num_rows:
        return pa.RecordBatch.from_pylist([], schema=INGEST_SCHEMA)
    latest = pc.max(times.column("end")).as_py()
    row = {
        "stream": stream, "file": name, "seq": low, "element": RANGE, "start": latest,
        "end": latest, "kind": times.column("kind")[-1].as_py(), "s": str(path), "p": None,
        "o": None, "line": high, "error": None,
    }  # fmt: skip
    return pa.RecordBatch.from_pylist([row], schema=INGEST_SCHEMA)


def ranged(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Ingest batches (any columns past the ingest ones dropped) with each range row
    replaced by the rows it stands for, in place, as the range row's stream and file."""
    for batch in batches:
        batch = batch.select(INGEST_SCHEMA.names)
        if batch.schema != INGEST_SCHEMA:
            batch = batch.cast(INGEST_SCHEMA)
        is_range = pc.fill_null(pc.equal(batch.column("element"), RANGE), False)
        marked = is_range.to_numpy(zero_copy_only=False)
        if not marked.any():
            yield batch
            continue
        cuts = [0, *(np.flatnonzero(np.diff(marked.astype(np.int8))) + 1), len(marked)]
        for begin, end in itertools.pairwise(cuts):
            part = batch.slice(begin, end - begin)
            if not marked[begin]:
                yield part
                continue
            for row in part.to_pylist():
                yield from _range_rows(row)


def _range_rows(row: dict) -> Iterator[pa.RecordBatch]:
    """The rows a range row stands for."""
    table = seq_range(Path(row["s"]), row["seq"], row["line"])
    count = table.num_rows
    table = table.set_column(0, "stream", pa.array([row["stream"]] * count, pa.string()))
    table = table.set_column(1, "file", pa.array([row["file"]] * count, pa.string()))
    yield from table.to_batches()


_ROW_GROUPS: WarmCache[Path, tuple[pq.ParquetFile, list[tuple[int, int]]]] = WarmCache(8)
"""A stream's Parquet rows opened once per Python worker, with each row group's least and
greatest `seq` (per-worker warm state: warm.py)."""


def seq_range(path: Path, low: int, high: int, columns: list[str] | None = None) -> pa.Table:
    """The rows of elements `low` to `high` - 1: only the row groups whose `seq` range meets
    it are read. A `read_table` with a filter opened the file and its metadata again in
    every task (about 30% of a live W1's read-and-route Python at 20,000 elements/s)."""
    file, bounds = _ROW_GROUPS.get_or_make(path, lambda: _row_groups(path))
    groups = [n for n, (first, last) in enumerate(bounds) if last >= low and first < high]
    table = file.read_row_groups(groups, columns=columns)
    seq = table.column("seq")
    return table.filter(pc.and_(pc.greater_equal(seq, low), pc.less(seq, high)))


def _row_groups(path: Path) -> tuple[pq.ParquetFile, list[tuple[int, int]]]:
    file = pq.ParquetFile(path)
    return file, [b or (0, 2**63 - 1) for b in _column_bounds(file, "seq")]


def _column_bounds(file: pq.ParquetFile, name: str) -> list[tuple[int, int] | None]:
    """Each row group's (least, greatest) value of column `name`, from its statistics
    (None: the row group has none)."""
    column = file.schema_arrow.get_field_index(name)
    meta = file.metadata
    stats = [meta.row_group(n).column(column).statistics for n in range(meta.num_row_groups)]
    return [(s.min, s.max) if s is not None and s.has_min_max else None for s in stats]


def released_by(path: Path, bound: int) -> int:
    """How many elements of the Parquet rows at `path` (sorted by `seq`) come before the
    first whose end time is past `bound` (all of them if none is): a binary search over the
    row groups' greatest end times (their statistics, as a running maximum), then over the
    end times of the one row group where the first such element is. A row group without
    statistics is read to be sure."""
    file, highs = _END_BOUNDS.get_or_make(path, lambda: _end_bounds(path))
    group = bisect.bisect_right(highs, bound)
    while group < len(highs):
        table = file.read_row_group(group, columns=["seq", "end"])
        ends = np.maximum.accumulate(pc.fill_null(table.column("end"), -(2**63)).to_numpy())
        row = int(np.searchsorted(ends, bound, side="right"))
        if row < len(ends):
            return int(table.column("seq")[row].as_py())
        group += 1
    if not file.metadata.num_rows:
        return 0
    last = file.read_row_group(file.metadata.num_row_groups - 1, columns=["seq"])
    return int(pc.max(last.column("seq")).as_py()) + 1


_END_BOUNDS: WarmCache[Path, tuple[pq.ParquetFile, list[int]]] = WarmCache(8)
"""A stream's Parquet rows opened once (on the driver, which paces), with the running
maximum of its row groups' greatest end times (`released_by`)."""


def _end_bounds(path: Path) -> tuple[pq.ParquetFile, list[int]]:
    file = pq.ParquetFile(path)
    highs = [b[1] if b else 2**63 - 1 for b in _column_bounds(file, "end")]  # unknown: read it
    return file, list(itertools.accumulate(highs, max))


@cache
def workload_origin(paths: tuple[Path, ...]) -> int:
    """The earliest end time over the Parquet rows at `paths` (a workload's streams): the
    time from which `speed` paces every one of them."""
    least = None
    for path in paths:
        file = pq.ParquetFile(path)
        for n, bounds in enumerate(_column_bounds(file, "end")):
            low = bounds[0] if bounds else pc.min(
                file.read_row_group(n, columns=["end"]).column("end")).as_py()
            if low is not None:
                least = low if least is None else min(least, low)
    if least is None:
        raise ValueError("the workload's streams have no element with a time to pace by")
    return int(least)


def pace_of(options: Mapping[str, str]) -> tuple[float | None, float | None]:
    """The options' `rate` and `speed` (None: not given); ValueError naming the option for
    one that is not a positive number, or for both."""
    rate = _positive(options, "rate", "elements per second")
    speed = _positive(options, "speed", "event-time milliseconds per wall-clock millisecond")
    if rate is not None and speed is not None:
        raise ValueError(
            "rate (elements per second) and speed (event time per wall-clock time) are two "
            "paces: give one of them, not both"
        )
    return rate, speed


def _positive(options: Mapping[str, str], name: str, meaning: str) -> float | None:
    """The option `name`, a positive number (None when not given)."""
    text = options.get(name)
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} is {meaning} and must be a positive number, not {text!r}")
    return value


def spans(low: int, high: int, cores: int) -> list[tuple[int, int]]:
    """Element ranges [low, high) is read in: at most `ELEMENTS_PER_PARTITION` each, and
    at least one per core where each gets `LEAST_SHARE`, about equal. A paced batch (a
    second's elements) made one task while the other cores idled before the shuffle: W1
    at 20,000/s, a 20,000-element batch read and routed by one task in about 1 s."""
    count = high - low
    if count <= 0:
        return []
    parts = max(-(-count // ELEMENTS_PER_PARTITION), min(cores, count // LEAST_SHARE), 1)
    cuts = [low + count * n // parts for n in range(parts + 1)]
    return list(itertools.pairwise(cuts))


def choose_stream(manifest: Manifest, pick: str | None, stream_iri: str) -> StreamFile:
    """The stream named `pick` (by name or IRI), else the one with the run's IRI, else the
    workload's only stream."""
    streams = manifest.streams
    if pick:
        wanted = [s for s in streams if pick in (s.name, s.iri)]
    else:
        wanted = [s for s in streams if s.iri == stream_iri] or list(streams)
    if len(wanted) != 1:
        known = ", ".join(f"{s.name} <{s.iri}>" for s in streams)
        unknown = f"{pick!r} is none of them; " if pick else ""
        raise ValueError(
            f"{unknown}choose one of workload {manifest.workload}'s streams with "
            f"stream=NAME: {known}"
        )
    return wanted[0]


def rows_file(stream: StreamFile) -> str:
    return f"rows-{stream.name}.parquet"


@cache
def generated(workload_id: str, scale: int, seed: int, cache_dir: Path) -> tuple[Manifest, Path]:
    """The workload generated under `cache_dir` with every stream's rows, built once.

    Built in a scratch directory and renamed into place, so concurrent builders (the
    driver and executors of one machine) never see half a dataset.
    """
    directory = cache_dir / f"{workload_id}-s{scale}-seed{seed}-{_generators_version()}"
    if not directory.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".building-", dir=cache_dir))
        try:
            _build(workload_id, scale, seed, scratch)
            os.rename(scratch, directory)
        except OSError:
            if not directory.exists():
                raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return Manifest.load(directory), directory


def _build(workload_id: str, scale: int, seed: int, directory: Path) -> None:
    manifest = generate(workload_id, scale, seed, directory)
    for stream in manifest.streams:
        paths = pa.record_batch({"stream": [stream.iri], "path": [str(directory / stream.path)]})
        with pq.ParquetWriter(directory / rows_file(stream), INGEST_SCHEMA) as writer:
            for batch in parse_path_batches([paths], IngestOptions()):
                writer.write_batch(batch, row_group_size=ROW_GROUP)


@cache
def _generators_version() -> str:
    """A digest of the generators' code: a changed generator never reuses old data."""
    digest = hashlib.sha256()
    for path in sorted(Path(generators.__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]
