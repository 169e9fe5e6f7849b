"""The shape of a Sepia Spark job: ingest rows -> element rows by key -> engine state -> results.

```
stream files: paths -> pieces -> mapInArrow(route_files): read, parse, give keys (watermark)
other sources (ingest rows, watermark per stream) -> mapInArrow(route): fold, give keys
  (units on one key each: blocks of rows packed by columns, `ingest_columns`)
  -> union
  -> groupBy(unit, partition) -> transformWithStateInPandas(EngineHost), event-time timers
  -> result rows (t, query_index, partition, seq, query, line)   -> sinks (sinks.py)
```

Keys. A unit without PARTITION BY has one key (null). A PARTITION BY unit on the
incremental engine is spread over `JobSpec.buckets` keys `b/k` (bucket b of k): an element
goes to the bucket of every partition value it binds
(`sepia.engine.query.partition.bucket_of`), and, where its partitions run on the row
engine, every other bucket gets a *stand-in*, the element without its triples, so that its
partitions still step through each instant of the streamset (WITHIN deadlines, the end of a
tail negation); each bucket's engine owns its values only, on the columnar core where it
covers the query (`sepia explain` says), and there the route stage finds the values of a
chunk's elements on the columnar core too, shipping their triples as term text
(`column_routes`). A query with a `, !B` stays in one key: a match
waiting there holds back every partition's later results. On the reference adapter a
PARTITION BY unit has one key per value. A unit the plan proves splittable without
PARTITION BY (`sepia.engine.plan.split`: a projected GROUP BY variable every triple pattern
holds) is spread over the same bucket keys by its triples: each triple goes to the buckets
of the values it binds, every other bucket gets a stand-in for the instant, and each
bucket's engine keeps the groups of its own values.

Marks. On a live run (`JobSpec.stream_horizon`) a key steps at the horizon its batch's own
element times prove, not at Spark's watermark (which comes a batch later:
`host.EngineHost._horizon`). A unit's one key gets every element of its streams; a bucket
gets those of its values and its stand-ins, so for each chunk the route stage also sends
every bucket of each unit a *mark row* per stream the unit reads: the stream's latest
element time in the chunk, no triples. A batch's buckets are then told the times its one
key would see, and step where it would. (The reference adapter's value keys are not known
up front: they step at the watermark.)

End of input. Spark's watermark only moves with data, so a finite input would leave its last
results waiting forever. Each file-bound stream therefore reads a second, Sepia-owned folder
next to its data; when the input is known to be complete, a marker element stamped
`END_TIME` is dropped there. The route stage turns it into an end row for every key of
each unit reading its stream: a key whose batch brings the end rows of all its unit's
streams flushes in that very step (one pass over a file: no element waits in state for a
later batch). The marker also moves the stream's watermark past every key's flush timer,
which ends the keys the end rows cannot reach (the reference adapter's value keys, markers
spread over batches) in the next batch.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import replace
from functools import partial, reduce
from itertools import islice
from pathlib import Path

import numpy as np
import pyarrow as pa
from pyspark import InheritableThread
from pyspark.sql import DataFrame, SparkSession

from sepia.engine.codec import Codec
from sepia.engine.columnar import ColumnBatch
from sepia.engine.columnar.frontend import OutOfShape
from sepia.engine.hosts.engine_path import engine_path
from sepia.engine.hosts.prepared import PreparedBackground
from sepia.engine.hosts.session import Session
from sepia.engine.plan.split import Split, split_of
from sepia.engine.query.partition import PartitionedQuery, bucket_of
from sepia.io.chunks import MAX_ELEMENT_SIZE
from sepia.rdf.stream import StreamElement
from sepia.runtime.spark.collection import paused_gc
from sepia.runtime.spark.column_routes import ColumnRouter, SplitRouter, packed_elements
from sepia.runtime.spark.columns import labels_by_ids
from sepia.runtime.spark.elements import (
    CLOCK_GRAPH,
    ELEMENT_DDL,
    ELEMENT_SCHEMA,
    END,
    END_GRAPH,
    END_MARKER,
    END_TIME,
    GRAPH,
    MARK_GRAPH,
    STAND_INS,
    ElementRow,
    TermTexts,
    as_text,
    element_rows,
    end_row,
    mark_row,
    pack,
    pack_stand_ins,
    to_element,
)
from sepia.runtime.spark.host import RESULT_DDL, EngineHost, JobSpec, WarmHost, unit_engine
from sepia.runtime.spark.ingest import (
    INGEST_SCHEMA,
    IngestOptions,
    file_elements,
    file_name,
    file_pieces,
    piece_columns,
    piece_elements,
    with_event_time,
)
from sepia.runtime.spark.ingest_columns import CanonicalTexts, aligned, plain
from sepia.runtime.spark.ingest_columns import packed_rows as ingest_packed_rows
from sepia.runtime.spark.key_hash import spark_hash
from sepia.runtime.spark.partial_states import merged_batches
from sepia.runtime.spark.session import setting
from sepia.runtime.spark.sources.generator import ranged
from sepia.runtime.spark.splits import SEQ_STRIDE, Piece, local_path
from sepia.runtime.spark.units import Unit, bucket_key
from sepia.runtime.spark.warm import WarmCache

__all__ = ["END_GRAPH", "END_MARKER", "END_TIME", "results_frame", "route", "routed_rows"]

ROUTED_DDL = "unit int, partition string, " + ELEMENT_DDL
ROUTED_SCHEMA = pa.schema([("unit", pa.int32()), ("partition", pa.string()), *ELEMENT_SCHEMA])
SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
CHUNK = 1024
"""Elements routed together: partition keys are found for a chunk in one evaluation, and a
bucket's stand-ins of a chunk cross the shuffle as one row."""
ROUTER_TERMS = 1_000_000
"""A route stage's router is made afresh once its dictionary holds this many terms."""
ONE_KEY_TERMS = 100_000
"""A route stage task reading a one-key unit's files as columns empties its dictionary
once it holds this many terms."""

_SPLITS: WarmCache[tuple, Split | str] = WarmCache(8)
"""Each unit's split (`sepia.engine.plan.split`), or why it has none, per Python worker."""
_HOLDS: WarmCache[Unit, bool] = WarmCache(8)
"""Whether each PARTITION BY unit stays on one key (`_spread`), per Python process."""
_READS: WarmCache[tuple, tuple[frozenset[str] | None]] = WarmCache(8)
"""The predicates a run's keys read (`read_predicates`), per Python worker."""
_ROUTERS: WarmCache[tuple, tuple[PartitionedQuery, ColumnRouter | None]] = WarmCache(8)
"""The route stage's engine for each bucketed unit (finds the values an element binds),
with its columnar router where the unit's buckets run on the columnar core
(`column_routes`), kept per Python worker (per-worker warm state: warm.py)."""

Read = tuple[ElementRow, StreamElement | None]
"""An element row, with the element itself when the stage parsed it (else parsed on need)."""


def results_frame(
    frames: Sequence[DataFrame],
    spec: JobSpec,
    files: Sequence[DataFrame] = (),
    ingest: IngestOptions | None = None,
) -> DataFrame:
    """The streaming DataFrame of result rows of every unit over the ingest rows `frames`
    and the stream files of `files` (one DataFrame of (stream, path) rows per stream, read,
    parsed and routed in one Arrow stage); `spec.buckets` None: `default_buckets`."""
    spec = with_buckets(spec, [*frames, *files][0].sparkSession)
    routed = []
    if frames:
        rows = one_task_per_core(reduce(DataFrame.unionByName, frames), len(frames))
        routed.append(rows.mapInArrow(partial(route, spec=spec), ROUTED_DDL))
    options = ingest or IngestOptions()
    for paths in files:
        read = file_pieces(paths, whole=options.dead_letters is not None).mapInArrow(
            partial(route_files, spec=spec, options=options), ROUTED_DDL
        )
        routed.append(with_event_time(read, options).drop("event_time"))
    results = (
        reduce(DataFrame.unionByName, routed)
        .groupBy("unit", "partition")
        .transformWithStateInPandas(EngineHost(spec), RESULT_DDL, "Append", "EventTime")
    )
    merges = merged_splits(spec)
    if not merges:
        return results
    merging = partial(merged_batches, merges=merges)  # the buckets' partial states
    return results.repartition("t").mapInArrow(merging, RESULT_DDL)


def one_task_per_core(rows: DataFrame, sources: int) -> DataFrame:
    """The rows of several live sources read and routed in at most a task per core.

    Each source cuts its batch over the cores by itself (`generator.spans`), so two
    sources made a task more than the cores: a paced W1 batch read its nearby sightings in
    two tasks of about 150 ms, and its two dozen coupons in a third of 80 ms (a task's own
    cost: its Python workers' round) that waited for a free core, so the stage took about
    250 ms where its work fits in 190 on two cores. Coalesced, the coupons are read in the
    same task as a share of the sightings, with one route worker's round for both: the
    stage took 206 ms at the median instead of 255. One source keeps its own cut."""
    if sources < 2:
        return rows
    return rows.coalesce(rows.sparkSession.sparkContext.defaultParallelism)


def with_buckets(spec: JobSpec, spark: SparkSession) -> JobSpec:
    """`spec` with its bucket count: `default_buckets` if unset."""
    if spec.buckets is not None:
        return spec
    return replace(spec, buckets=default_buckets(spark))


def default_buckets(spark: SparkSession) -> int:
    """Buckets a PARTITION BY unit is spread over by default: one per core, at least two.

    Each bucket pays its own costs in the stateful stage (its batch's unpacking, its
    partitions' routing, its results' rendering), and a Python worker's first bucket its
    cold start. On two cores, two buckets ran W6 at 1,000,000 elements in 20.9 s where
    four (two a core, the earlier default) took 23.6 s, W4 v-shape `;` in 30.6 s against
    32.5 and W4 head-and-shoulders `,` in 13.9 s against 15.1. One core keeps two: a
    single bucket is a unit on one key, which reads its files by rows (W6: 44.8 s
    against 30.0)."""
    return max(2, spark.sparkContext.defaultParallelism)


def warm_workers(spark: SparkSession, spec: JobSpec) -> None:
    """Before a live query starts: one task on each core makes, in two Python workers,
    what the query's first tasks would make (each unit's engine planned, its routers and
    split found). Spark keeps a finished task's Python workers for the next tasks, so the
    first elements a live source releases meet warm workers. Two, because a route task
    runs a Python source's read and the route stage in a worker each. Then a batch
    transformWithState on one key in one task (`host.WarmHost`) starts the daemon the
    stateful stage's workers come from, and makes each unit's engine in one worker there.
    One: Spark hands its idle workers out in turn, and a key's session lives in the worker
    that last stepped it; warmed on two (a task per core), a one-key unit's task ran in
    each in turn and restored its session from the state rows every batch. The warm-ups
    also run the data's paths: the route stage routes a made-up block (`warm_block`), and
    the stateful one gives result rows that are collected as Arrow, as the sink collects
    a batch's (`host.WarmHost`)."""
    spec = with_buckets(spec, spark)
    cores = spark.sparkContext.defaultParallelism
    warm = partial(warmed, spec=spec)
    spark.range(0, cores, 1, cores).mapInArrow(warm, "id long").mapInArrow(warm, "id long") \
        .collect()
    with setting(spark, SHUFFLE_PARTITIONS, "1"):
        spark.range(0, 1, 1, 1).groupBy("id") \
            .transformWithStateInPandas(WarmHost(spec), RESULT_DDL, "Append", "None").toArrow()


class RouteWarming:
    """A finite run's route workers warmed while the driver starts the query.

    Between making its plan and the first task of its query, the driver of a file run
    works alone for about two seconds (building the stages, starting the streaming query,
    listing the files, planning the batch), and the first Python task then started the
    workers' daemon (W6 at 1,000,000 elements: its first stage took 1.9 s for 0.1 s of
    work) and each route worker encoded the background and planned its router. Started
    first, a job of its own in a thread of its own runs `warmed` on every core: the
    query's tasks, queued behind it, find Python workers whose caches are made. A warm-up
    that fails or is cancelled costs time, never an answer: the query makes what it lacks.
    Live runs warm before their query starts instead (`warm_workers`)."""

    def __init__(self, spark: SparkSession, spec: JobSpec) -> None:
        self.spark = spark
        self.group = f"sepia-warm-{uuid.uuid4().hex}"
        cores = spark.sparkContext.defaultParallelism
        self.rows = spark.range(0, cores, 1, cores).mapInArrow(
            partial(warmed, spec=with_buckets(spec, spark)), "id long"
        )
        self.thread = InheritableThread(target=self._run, name="sepia-warm", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.spark.sparkContext.setJobGroup(self.group, "Sepia: warming the route workers")
        with suppress(Exception):  # cancelled, or failed: only time is lost
            self.rows.collect()

    def stop(self) -> None:
        """Cancel the warm-up if it still runs (a run that ended early) and wait for it."""
        self.spark.sparkContext.cancelJobGroup(self.group)
        self.thread.join()


def warmed(batches: Iterable[pa.RecordBatch], spec: JobSpec) -> Iterator[pa.RecordBatch]:
    """mapInArrow body of `warm_workers`: the warm caches made, the rows given back."""
    for n, unit in enumerate(spec.units):
        unit_engine(spec, n)
        _routers(spec, unit)
        unit_split(spec, n)
    read_predicates(spec)
    for _ in route([warm_block(spec)], spec):
        pass
    yield from batches


WARM_ELEMENTS = 64
"""Elements of a stream in the block `warmed` routes."""


def warm_block(spec: JobSpec) -> pa.RecordBatch:
    """Ingest rows of made-up elements on each of the run's streams, one triple each, for
    `warmed` to route: a worker's first block goes slower than the next (Arrow's kernels
    and the packing path meet their first rows in the process). Routed before the query,
    a paced W1's first full batch took 0.85-0.91 s in three runs, 0.93-1.10 s without."""
    rows = [
        {"stream": stream, "file": "urn:sepia:warm", "seq": n, "element": f"urn:sepia:warm:{n}",
         "start": n, "end": n, "kind": "abstract", "s": "<urn:sepia:warm:s>",
         "p": "<urn:sepia:warm:p>", "o": f'"{n}"', "line": None, "error": None}
        for stream in spec.streams for n in range(WARM_ELEMENTS)
    ]  # fmt: skip
    return pa.RecordBatch.from_pylist(rows, schema=INGEST_SCHEMA)


def route(batches: Iterable[pa.RecordBatch], spec: JobSpec) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: ingest rows in, one row per element and key out (packed: one row
    per block, stream and unit, where every unit is on one key: `ingest_columns`); a
    generator's range rows read here (`generator.ranged`)."""
    batches = ranged(batches)
    if not all(_keys(spec, n) == [None] for n in range(len(spec.units))):
        return _routed_batches(spec, ((row, None) for row in element_rows(batches, spec.on_error)))
    return _one_key_batches(batches, spec)


def _one_key_batches(batches: Iterable[pa.RecordBatch], spec: JobSpec) -> Iterator[pa.RecordBatch]:
    """The route stage of units on one key each: a block of plain elements becomes one
    packed row per stream, by columns (`ingest_columns`), sent to each unit reading it; any
    other block (errors, end-of-input markers, clock rows) is folded row by row."""
    texts = CanonicalTexts()
    with paused_gc():
        for block in aligned(batches):
            if not plain(block):
                read = element_rows(block.to_batches(), spec.on_error)
                yield from _routed_batches(spec, ((row, None) for row in read))
                continue
            routed = [(n, None, row) for row in ingest_packed_rows(block, texts)
                      for n, unit in enumerate(spec.units) if unit.reads(row[0])]  # fmt: skip
            if routed:
                yield _arrow(routed)


def route_files(
    batches: Iterable[pa.RecordBatch], spec: JobSpec, options: IngestOptions
) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: pieces of stream files in (`ingest.file_pieces`), each read and
    parsed once, one row per element and key out, its triples as canonical term text
    (`elements.TermTexts`: each distinct term's text made once a task), the
    triples no key reads left out (`read_predicates`)."""
    texts = TermTexts(read_predicates(spec))
    if not _reads_columns(spec, options):
        return _routed_batches(spec, piece_elements(batches, options, spec.on_error, texts))
    return _column_batches(batches, spec, options, texts)


def _reads_columns(spec: JobSpec, options: IngestOptions) -> bool:
    """Whether the route stage reads its files as columns (`_column_batches`): one unit,
    on one key, split or spread over buckets, on the columnar core (one key or split: its
    session names the predicates it scans, `read_predicates`; PARTITION BY buckets:
    `column_routes`), its keys
    stepping columns (no blank nodes labelled by ids), no entailment; no dead letters
    kept and the reader's own element size (the columnar reader rejects nothing: it hands
    the rest of a file it does not take to the row reader)."""
    if len(spec.units) != 1 or spec.unit_engines[0] != "incremental" or spec.rdfs:
        return False
    unit = spec.units[0]
    if options.dead_letters is not None or options.max_element_size != MAX_ELEMENT_SIZE:
        return False
    if labels_by_ids(unit.queries[0].query):
        return False
    if unit.partition_by is None:  # one key, or split over buckets (`SplitRouter`)
        return read_predicates(spec) is not None
    return _column_router(spec, unit) is not None


def _column_batches(
    batches: Iterable[pa.RecordBatch], spec: JobSpec, options: IngestOptions, texts: TermTexts
) -> Iterator[pa.RecordBatch]:
    """The route stage of a unit on the columnar core (`_reads_columns`): each piece read
    by the columnar reader, as a local run reads (W6 at 100,000 elements: the row reader's
    parse, each term's text and the router encoding the text again were most of the
    stage; W7: the reader takes a third of the time of the row reader and `TermTexts`),
    each block one packed row per key from the columns (`column_routes`): a bucketed
    unit's blocks routed by its router into its dictionary, a split unit's by its
    `SplitRouter` (W3's query over company-centred trades at 1,000,000 elements: 31 s on
    two cores routed element by element, `_split_rows`), a one-key unit's read into a
    dictionary of the task's; a task's own dictionary is emptied once it holds
    `ONE_KEY_TERMS` terms. A file, or the rest of one, that reader does not take goes the
    row reader's way (`route_files`)."""
    unit = spec.units[0]
    assert spec.buckets is not None
    codec = Codec()
    split = unit_split(spec, 0)
    splitter = None if split is None else SplitRouter(split, ONE_KEY_TERMS)
    with paused_gc():
        for batch in batches:
            for found in batch.to_pylist():
                piece = Piece(found["piece"], found["begin"], found["end"], found["header"])
                stream, uri = found["stream"], found["path"]
                router = _column_router(spec, unit) or splitter
                first, done = piece.index * SEQ_STRIDE, 0
                predicates = read_predicates(spec)
                name = file_name(local_path(uri))
                dictionary = codec if router is None else router.dictionary
                try:
                    for columns, graphs in piece_columns(
                        uri, stream, piece, dictionary, predicates
                    ):
                        if router is not None:
                            rows = [(0, key, row) for key, row in router.packed(
                                columns, graphs, first + done, name, spec.buckets)]  # fmt: skip
                        else:
                            rows = _one_key_rows(spec, columns, graphs, first + done, name, codec)
                        if spec.stream_horizon is not None:
                            latest = int(columns.times[-1])
                            shown = (stream, name, 0, "", latest, latest, columns.kind.value, "")
                            rows += mark_rows(spec, [shown])
                        done += len(columns)
                        if rows:
                            yield _arrow(rows)
                except OutOfShape as error:
                    read = file_elements(stream, uri, options, spec.on_error, piece, texts)
                    yield from _routed_batches(spec, islice(read, error.done, None))


def _one_key_rows(
    spec: JobSpec, columns: ColumnBatch, graphs: list[str], first: int, file: str, codec: Codec
) -> list[tuple]:
    """A block read as columns for a one-key unit: all its elements as one packed row, if
    the unit reads the stream; the task's dictionary then emptied if it has grown past
    `ONE_KEY_TERMS` (the row is text: no id of it is needed again)."""
    rows = []
    if len(columns) and spec.units[0].reads(columns.streams[0]):
        every = np.arange(len(columns))
        row = packed_elements(columns, every, graphs, first, file, codec.decode_text)
        rows.append((0, None, row))
    if len(codec) > ONE_KEY_TERMS:
        codec.forget(set(codec.ids()))
    return rows


def read_predicates(spec: JobSpec) -> frozenset[str] | None:
    """The predicates of the only triples the run's keys read, where every unit is one
    query stepped as columns (`IncrementalEngine.columns`) on one key or split over
    buckets (its session on the columnar core) or on PARTITION BY buckets on the columnar
    core (`column_routes`), whose plan names
    every predicate it scans (`Session.predicates`, `PartitionedSequence.predicates`);
    None: every triple is read. The route stage drops the other triples of the elements it reads
    from files, as a local run's columnar reader does: W7 reads 6 of an element's 12
    triples. Made once per Python worker (`_READS`: the engine path is the worker's)."""
    key = (spec.units, spec.unit_engines, spec.background_digest, spec.rdfs, spec.buckets,
           engine_path())  # fmt: skip
    return _READS.get_or_make(key, lambda: (_read_predicates(spec),))[0]


def _read_predicates(spec: JobSpec) -> frozenset[str] | None:
    found: set[str] = set()
    for unit, engine in zip(spec.units, spec.unit_engines, strict=True):
        if engine != "incremental" or len(unit.queries) != 1 or spec.rdfs:
            return None
        query = unit.queries[0]
        if labels_by_ids(query.query):
            return None
        columns = _column_router(spec, unit)
        if columns is not None:  # buckets on the columnar core
            read = columns.sequence.predicates()
        elif unit.partition_by is None:  # one key, or a split's buckets: the same session
            session = Session(spec.prepared_background(), rdfs=spec.rdfs)
            session.register(query.query, query.name)
            read = session.predicates() if session.columnar else None
        else:
            return None
        if read is None:
            return None
        found |= read
    return frozenset(found)


def _routed_batches(spec: JobSpec, read: Iterator[Read]) -> Iterator[pa.RecordBatch]:
    while chunk := list(islice(read, CHUNK)):
        routed = list(packed_rows(_chunk_rows(spec, chunk)))
        if routed:
            yield _arrow(routed)


def _arrow(routed: list[tuple]) -> pa.RecordBatch:
    """(unit, key, element row) rows as a batch of `ROUTED_SCHEMA`."""
    columns = list(zip(*[(unit, key, *row) for unit, key, row in routed], strict=True))
    return pa.RecordBatch.from_arrays(
        [pa.array(c, f.type) for c, f in zip(columns, ROUTED_SCHEMA, strict=True)],
        schema=ROUTED_SCHEMA,
    )


def _chunk_rows(spec: JobSpec, chunk: list[Read]) -> Iterator[tuple]:
    """A chunk's routed rows; an end-of-input marker becomes a row for every key of each
    unit that reads its stream (a unit keyed by value on the reference adapter has no
    known keys: its keys end by the watermark, see End of input); a clock row (a quiet live
    source's, `sources.idle`) only moved the watermark and is dropped."""
    ends = [row for row, _ in chunk if row[3] == END_GRAPH]
    data = [(row, element) for row, element in chunk if row[3] not in (END_GRAPH, CLOCK_GRAPH)]
    if data:
        yield from routed_rows(spec, [row for row, _ in data], [e for _, e in data])
        if spec.stream_horizon is not None:
            yield from mark_rows(spec, [row for row, _ in data])
    for row in ends:
        for n, unit in enumerate(spec.units):
            if unit.reads(row[0]):
                yield from ((n, key, end_row(row[0], row[6])) for key in _keys(spec, n))


def packed_rows(routed: Iterable[tuple]) -> Iterator[tuple]:
    """A chunk's routed rows with the element rows of each key and stream packed into one
    row (`elements.pack`); end, mark and stand-in rows as they are."""
    groups: dict[tuple, list[ElementRow]] = {}
    for unit, key, row in routed:
        if row[GRAPH] in (END_GRAPH, MARK_GRAPH, STAND_INS):
            yield unit, key, row
        else:
            groups.setdefault((unit, key, row[0]), []).append(row)
    for (unit, key, _), rows in groups.items():
        yield unit, key, as_text(rows[0]) if len(rows) == 1 else pack(rows)


def mark_rows(spec: JobSpec, chunk: Sequence[ElementRow]) -> Iterator[tuple]:
    """(unit, key, mark row) for each stream of the chunk and every bucket of each unit
    spread over buckets that reads it: the stream's latest element time in the chunk (see
    Marks above)."""
    latest: dict[str, ElementRow] = {}
    for row in chunk:
        if row[0] not in latest or row[END] > latest[row[0]][END]:
            latest[row[0]] = row
    for n, unit in enumerate(spec.units):
        keys = [key for key in _keys(spec, n) if key is not None]
        for stream, row in latest.items():
            if unit.reads(stream):
                yield from ((n, key, mark_row(stream, row[END], row[6])) for key in keys)


def ends_by_marker(spec: JobSpec) -> bool:
    """Whether every key of every unit learns of the end of input from marker rows (so the
    batch reading the markers ends the run): all but the reference adapter's value keys."""
    return not any(
        engine == "reference" and unit.partition_by is not None
        for unit, engine in zip(spec.units, spec.unit_engines, strict=True)
    )


def _keys(spec: JobSpec, n: int) -> list[str | None]:
    """Every key of unit n, where they are known up front."""
    unit, engine = spec.units[n], spec.unit_engines[n]
    split = unit_split(spec, n) is not None
    if engine == "incremental" and (split or _spread(spec, unit)):
        assert spec.buckets is not None
        return [bucket_key(b, spec.buckets) for b in range(spec.buckets)]
    return [] if engine == "reference" and unit.partition_by is not None else [None]


def all_keys(spec: JobSpec) -> list[tuple[int, str | None]] | None:
    """Every (unit, key) of the run, where every one is known up front (None: a unit keyed
    by value on the reference adapter)."""
    keys = [[(n, key) for key in _keys(spec, n)] for n in range(len(spec.units))]
    return None if not all(keys) else [key for unit in keys for key in unit]


def stateful_partitions(spec: JobSpec, asked: int) -> int | None:
    """The stateful stage's shuffle partitions, where every key is known up front (None:
    not; `asked`: the session's count, two per core by default).

    Never more keys to a partition than their share: Spark puts key (unit, partition) on
    partition pmod(hash(unit, partition), n) (its `hash` function: the stage's hash
    partitioning, computed here by `key_hash.spark_hash`), and four buckets over four
    partitions share one in 91% of hash draws (W4 at 300,000 elements: two buckets in
    one task after the other two's, 10 s where a task each took 6 s) while another
    partition's task idles. So: the fewest partitions, at least min(keys, asked), over
    which no partition holds more than ceil(keys / min(keys, asked)) keys; min(keys,
    asked) if none of the next `SPREAD_SEARCH` counts does. Never a task for nothing on a
    query of one key."""
    keys = all_keys(spec)
    if keys is None:
        return None
    least = min(len(keys), asked)
    share = -(-len(keys) // least)
    hashes = [spark_hash(*key) for key in keys] if share < len(keys) else []
    for count in range(least, least + SPREAD_SEARCH):
        if max(Counter(h % count for h in hashes).values(), default=0) <= share:
            return count
    return least


SPREAD_SEARCH = 64
"""Partition counts `stateful_partitions` tries, from the least."""


def routed_rows(
    spec: JobSpec, chunk: Sequence[ElementRow], parsed: Sequence[StreamElement | None] = ()
) -> Iterator[tuple]:
    """(unit, key, element row) for every key of every unit each element of the chunk goes
    to (see Keys above); `parsed`: the chunk's elements where already parsed. A bucket's
    stand-ins for the chunk are packed into one row per stream (`pack_stand_ins`)."""
    parsed = list(parsed) or [None] * len(chunk)
    elements = [e if e is not None else _Lazy(row) for row, e in zip(chunk, parsed, strict=True)]
    for n, (unit, engine) in enumerate(zip(spec.units, spec.unit_engines, strict=True)):
        read = [(row, e) for row, e in zip(chunk, elements, strict=True) if unit.reads(row[0])]
        router = _router(spec, unit) if engine == "incremental" else None
        split = unit_split(spec, n)
        if split is not None:
            assert spec.buckets is not None
            yield from ((n, key, row) for key, row in _split_rows(split, spec.buckets, read))
        elif unit.partition_by is None or (engine != "reference" and router is None):
            yield from ((n, None, row) for row, _ in read)
        elif router is not None:
            assert spec.buckets is not None
            columns = _column_router(spec, unit)
            if columns is not None:
                routed = columns.routed([row for row, _ in read], spec.buckets)
            else:
                routed = _bucketed(router, spec.buckets, read)
            yield from ((n, key, row) for key, row in routed)
        else:
            whole = [_parsed(e) for e in elements]
            keys = unit.partition_keys(whole, spec.background_store(), spec.rdfs)
            yield from ((n, key, row) for row, ks in zip(chunk, keys, strict=True) for key in ks)


class _Lazy:
    """An element row not parsed yet: parsed when a router first needs the element."""

    __slots__ = ("element", "row")

    def __init__(self, row: ElementRow) -> None:
        self.row = row
        self.element: StreamElement | None = None


def _parsed(element: StreamElement | _Lazy) -> StreamElement:
    if isinstance(element, _Lazy):
        if element.element is None:
            element.element = to_element(element.row)
        return element.element
    return element


def _spread(spec: JobSpec, unit: Unit) -> bool:
    """Whether a unit is spread over buckets (PARTITION BY, no `, !B`, more than one
    bucket), asked of its plan alone: a `, !B` does not depend on the background, which
    the driver, asking this of every unit before the query starts, would otherwise encode
    only to build a router it never uses (0.75 s of W6's run at 1,000,000 elements)."""
    if unit.partition_by is None or spec.buckets is None or spec.buckets < 2:
        return False
    return not _HOLDS.get_or_make(unit, lambda: _plan_alone(unit).holds)


def _plan_alone(unit: Unit) -> PartitionedQuery:
    """A unit's router over no background data: its plan, for what the plan alone says."""
    codec, background = PreparedBackground.of(None).for_session()
    query = unit.queries[0]
    return PartitionedQuery(query.query, query.name, codec, background)


def _router(spec: JobSpec, unit: Unit) -> PartitionedQuery | None:
    """The engine that finds the partition values of a unit's elements, when the unit is
    spread over buckets (PARTITION BY, no `, !B`, more than one bucket)."""
    found = _routers(spec, unit)
    return None if found is None else found[0]


def _column_router(spec: JobSpec, unit: Unit) -> ColumnRouter | None:
    """The columnar router of a bucketed unit whose buckets run on the columnar core."""
    found = _routers(spec, unit)
    return None if found is None else found[1]


def _routers(spec: JobSpec, unit: Unit) -> tuple[PartitionedQuery, ColumnRouter | None] | None:
    """A bucketed unit's routers (`_spread`): the row engine's, and the columnar one where
    its buckets run on the columnar core (sharing the row router's plan and dictionary)."""
    if not _spread(spec, unit):
        return None
    key = (unit, spec.background_digest, spec.rdfs, engine_path())
    found = _ROUTERS.get(key)
    if found is None or len(found[0].router.dictionary) > ROUTER_TERMS:
        codec, background = spec.prepared_background().for_session()
        query = unit.queries[0]
        router = PartitionedQuery(query.query, query.name, codec, background, rdfs=spec.rdfs)
        found = _ROUTERS.put(key, (router, ColumnRouter.of(router)))
    return found


def unit_split(spec: JobSpec, n: int) -> Split | None:
    """The split of unit n over the run's buckets, where the plan proves one safe (one
    query without PARTITION BY on the incremental engine, more than one bucket; one whose
    buckets' partial states are merged only where the run merges, `JobSpec.merges`)."""
    unit = spec.units[n]
    if spec.unit_engines[n] != "incremental" or len(unit.queries) != 1:
        return None
    if spec.buckets is None or spec.buckets < 2:
        return None
    background = bool(spec.background)
    found = _SPLITS.get_or_make(
        (unit, background, spec.rdfs, spec.merges),
        lambda: split_of(
            unit.queries[0].query, background=background, rdfs=spec.rdfs, merge=spec.merges
        ),
    )
    return found if isinstance(found, Split) else None


def merged_splits(spec: JobSpec) -> dict[int, tuple[tuple[str, str], ...]]:
    """The run's queries whose buckets report partial states (by position, as their
    results' `query_index`), with each one's merged variables and functions."""
    splits = (unit_split(spec, n) for n in range(len(spec.units)))
    return {
        unit.queries[0].position: split.merged
        for unit, split in zip(spec.units, splits, strict=True)
        if split is not None and split.merged
    }


def _split_rows(
    split: Split, buckets: int, read: list[tuple[ElementRow, StreamElement | _Lazy]]
) -> Iterator[tuple[str, ElementRow]]:
    """Each row's triples to the buckets of the values they bind (a triple that binds none
    joins no result: it goes nowhere), then a stand-in for each instant to every bucket
    that got nothing then, so that every bucket's windows step together."""
    told: dict[int, set[int]] = {}
    for row, element in read:
        shares: dict[int, list[str]] = {}
        for triple in _parsed(element).triples:
            for b in {bucket_of(value, buckets) for value in split.values_of(triple)}:
                shares.setdefault(b, []).append(f"{triple} .")
        told.setdefault(row[END], set()).update(shares)
        for b, lines in sorted(shares.items()):
            yield bucket_key(b, buckets), (*row[:7], "\n".join(lines))
    yield from _stand_ins(read, told, buckets)


def _bucketed(
    router: PartitionedQuery, buckets: int, read: list[tuple[ElementRow, StreamElement | _Lazy]]
) -> Iterator[tuple[str, ElementRow]]:
    """Each row to the buckets of the values it binds, found on the row engine (buckets on
    the columnar core are routed by `column_routes`). Where the query needs its partitions
    to see time pass (WITHIN deadlines, a tail negation), each bucket then gets a stand-in
    for each instant of the rows at which it got no element: the element's row without its
    triples, all of a bucket's packed into one row per stream. The columnar core's
    sequences need none: a run expires by comparing its start with the next event of its
    own partition, and no sequence it runs waits on a negation."""
    told: dict[int, set[int]] = {}
    for row, element in read:
        mine = {bucket_of(value, buckets) for value in router.values_of(_parsed(element))}
        told.setdefault(row[END], set()).update(mine)
        yield from ((bucket_key(b, buckets), row) for b in sorted(mine))
    if router.ticks or router.waits:
        yield from _stand_ins(read, told, buckets)


def _stand_ins(
    read: list[tuple[ElementRow, StreamElement | _Lazy]], told: dict[int, set[int]], buckets: int
) -> Iterator[tuple[str, ElementRow]]:
    """For each instant of the rows, a stand-in to every bucket `told` says got no element
    then: the row without its triples, all of a bucket's packed into one row per stream."""
    stand_ins: dict[tuple[int, str], list[ElementRow]] = {}
    for row, _ in read:
        missing = set(range(buckets)) - told.get(row[END], set())
        told[row[END]] = set(range(buckets))
        for b in missing:
            stand_ins.setdefault((b, row[0]), []).append(
                (*row[:3], row[3], row[END], row[END], row[6], "")
            )
    for (b, _), rows in sorted(stand_ins.items()):
        yield bucket_key(b, buckets), pack_stand_ins(rows)


def end_folder(checkpoint: Path, position: int) -> Path:
    """The folder of a stream's end-of-input marker, inside the run's checkpoint."""
    folder = checkpoint / "end-of-input" / f"stream-{position}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def mark_end(folder: Path) -> None:
    """Drop the end-of-input marker (once: a restarted run finds it already there)."""
    marker = folder / "end.trig"
    if not marker.exists():
        partial_file = folder / ".end.trig.tmp"
        partial_file.write_text(END_MARKER, encoding="utf-8")
        partial_file.rename(marker)
