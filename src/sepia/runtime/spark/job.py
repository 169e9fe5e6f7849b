"""The shape of a Sepia Spark job: ingest rows -> element rows by key -> engine state -> results.

```
sources (ingest rows, watermark per stream)
  -> union -> mapInArrow(route): fold triples into elements, give each its keys
  -> groupBy(unit, partition) -> transformWithStateInPandas(EngineHost), event-time timers
  -> result rows (t, query_index, partition, seq, query, line)   -> sinks (sinks.py)
```

Keys. A unit without PARTITION BY has one key (null). A PARTITION BY unit on the
incremental engine is spread over `JobSpec.buckets` keys `b/k` (bucket b of k): an element
goes to the bucket of every partition value it binds (`sepia.engine.query.partition.bucket_of`),
and every other bucket gets a *stand-in*, the element without its triples, so that its
partitions still step through each instant of the streamset (WITHIN deadlines, the end of
a tail negation); each bucket's engine owns its values only. A query with a `, !B` stays in
one key: a match waiting there holds back every partition's later results. On the
reference adapter a PARTITION BY unit has one key per value.

End of input. Spark's watermark only moves with data, so a finite input would leave its last
results waiting forever. Each file-bound stream therefore reads a second, Sepia-owned folder
next to its data; when the input is known to be complete, a marker element stamped
`END_TIME` is dropped there. It moves that stream's watermark (Spark takes the minimum over
streams) past every key's flush timer; the next batch fires the timers and each key's
engine emits everything still due. The route stage drops the marker itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from functools import partial, reduce
from itertools import islice
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame

from sepia.engine.background import Background
from sepia.engine.codec import Codec
from sepia.engine.query.partition import PartitionedQuery, bucket_of
from sepia.rdf.vocabulary import PROV
from sepia.runtime.spark.elements import (
    CLOCK_GRAPH,
    ELEMENT_DDL,
    ELEMENT_FIELDS,
    END,
    ElementRow,
    element_rows,
    to_element,
)
from sepia.runtime.spark.host import RESULT_DDL, EngineHost, JobSpec
from sepia.runtime.spark.units import Unit, bucket_key

END_GRAPH = "urn:sepia:end-of-input"
END_TIME = 7_258_118_400_000
"""2200-01-01 in epoch ms: past the flush timer, before pandas' nanosecond timestamps end."""
END_MARKER = (
    f"<{END_GRAPH}> {{ <{END_GRAPH}> a <urn:sepia:EndOfInput> . }}\n"
    f"<{END_GRAPH}> <{PROV}generatedAtTime> {END_TIME} .\n"
)
MARKERS = (END_GRAPH, CLOCK_GRAPH)
"""Elements that only move the watermark: the route stage drops them."""
ROUTED_DDL = "unit int, partition string, " + ELEMENT_DDL
ROUTED_SCHEMA = pa.schema(
    [("unit", pa.int32()), ("partition", pa.string())]
    + [(name, pa.int64() if name in ("seq", "start", "end") else pa.string())
       for name in ELEMENT_FIELDS]
)  # fmt: skip
CHUNK = 1024
"""Elements routed together: partition keys are found for a chunk in one evaluation."""
ROUTER_TERMS = 1_000_000
"""A route stage's router is made afresh once its dictionary holds this many terms."""

_ROUTERS: dict[tuple, PartitionedQuery] = {}
"""The route stage's engine for each bucketed unit (finds the values an element binds),
kept per Python worker."""


def results_frame(frames: Sequence[DataFrame], spec: JobSpec) -> DataFrame:
    """The streaming DataFrame of result rows of every unit over the ingest rows `frames`;
    `spec.buckets` None: twice the session's default parallelism."""
    rows = reduce(DataFrame.unionByName, frames)
    if spec.buckets is None:
        spec = replace(spec, buckets=2 * rows.sparkSession.sparkContext.defaultParallelism)
    routed = rows.mapInArrow(partial(route, spec=spec), ROUTED_DDL)
    return routed.groupBy("unit", "partition").transformWithStateInPandas(
        EngineHost(spec), RESULT_DDL, "Append", "EventTime"
    )


def route(batches: Iterable[pa.RecordBatch], spec: JobSpec) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: ingest rows in, one row per element and key out."""
    rows = (r for r in element_rows(batches, spec.on_error) if r[3] not in MARKERS)
    while chunk := list(islice(rows, CHUNK)):
        routed = [(unit, key, *row) for unit, key, row in routed_rows(spec, chunk)]
        if routed:
            columns = list(zip(*routed, strict=True))
            yield pa.RecordBatch.from_arrays(
                [pa.array(c, f.type) for c, f in zip(columns, ROUTED_SCHEMA, strict=True)],
                schema=ROUTED_SCHEMA,
            )


def routed_rows(spec: JobSpec, chunk: list[ElementRow]) -> Iterator[tuple]:
    """(unit, key, element row) for every key of every unit each element of the chunk goes
    to (see Keys above); the rows of stand-ins have no triples."""
    elements = None
    for n, (unit, engine) in enumerate(zip(spec.units, spec.unit_engines, strict=True)):
        read = [row for row in chunk if unit.reads(row[0])]
        router = _router(spec, unit) if engine == "incremental" else None
        if unit.partition_by is None or (engine != "reference" and router is None):
            yield from ((n, None, row) for row in read)
        elif router is not None:
            yield from ((n, key, row) for key, row in _bucketed(router, spec.buckets, read))
        else:
            elements = elements or [to_element(row) for row in chunk]
            keys = unit.partition_keys(elements, spec.background_store(), spec.rdfs)
            yield from ((n, key, row) for row, ks in zip(chunk, keys, strict=True) for key in ks)


def _router(spec: JobSpec, unit: Unit) -> PartitionedQuery | None:
    """The engine that finds the partition values of a unit's elements, when the unit is
    spread over buckets (PARTITION BY, no `, !B`, more than one bucket)."""
    if unit.partition_by is None or spec.buckets is None or spec.buckets < 2:
        return None
    key = (unit, spec.background_digest, spec.rdfs)
    router = _ROUTERS.get(key)
    if router is None or len(router.router.dictionary) > ROUTER_TERMS:
        codec = Codec()
        background = Background.encode(spec.background_store(), codec)
        query = unit.queries[0]
        router = PartitionedQuery(query.query, query.name, codec, background, rdfs=spec.rdfs)
        _ROUTERS[key] = router
    return None if router.holds else router


def _bucketed(
    router: PartitionedQuery, buckets: int, rows: list[ElementRow]
) -> Iterator[tuple[str, ElementRow]]:
    """Each row to the buckets of the values it binds; then one stand-in for each instant
    of the rows and each bucket that got no element at that instant."""
    told: dict[int, set[int]] = {}
    for row in rows:
        values = router.values_of(to_element(row))
        mine = {bucket_of(value, buckets) for value in values}
        told.setdefault(row[END], set()).update(mine)
        yield from ((bucket_key(b, buckets), row) for b in sorted(mine))
    for row in rows:
        missing = set(range(buckets)) - told.get(row[END], set())
        told[row[END]] = set(range(buckets))
        stand_in = (*row[:3], row[3], row[END], row[END], row[6], "")
        yield from ((bucket_key(b, buckets), stand_in) for b in sorted(missing))


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
