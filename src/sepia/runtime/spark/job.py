"""The shape of a Sepia Spark job: ingest rows -> element rows by key -> engine state -> results.

```
sources (ingest rows, watermark per stream)
  -> union -> mapInArrow(route): fold triples into elements, give each its keys
  -> groupBy(unit, partition) -> transformWithStateInPandas(EngineHost), event-time timers
  -> result rows (t, query_index, partition, seq, query, line)   -> sinks (sinks.py)
```

End of input. Spark's watermark only moves with data, so a finite input would leave its last
results waiting forever. Each file-bound stream therefore reads a second, Sepia-owned folder
next to its data; when the input is known to be complete, a marker element stamped
`END_TIME` is dropped there. It moves that stream's watermark (Spark takes the minimum over
streams) past every key's flush timer; the next batch fires the timers and each key's
engine emits everything still due. The route stage drops the marker itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import partial, reduce
from itertools import islice
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame

from sepia.runtime.spark.elements import ELEMENT_DDL, ELEMENT_FIELDS, element_rows, to_element
from sepia.runtime.spark.host import RESULT_DDL, EngineHost, JobSpec

END_GRAPH = "urn:sepia:end-of-input"
END_TIME = 7_258_118_400_000
"""2200-01-01 in epoch ms: past the flush timer, before pandas' nanosecond timestamps end."""
END_MARKER = (
    f"<{END_GRAPH}> {{ <{END_GRAPH}> a <urn:sepia:EndOfInput> . }}\n"
    f"<{END_GRAPH}> <http://www.w3.org/ns/prov#generatedAtTime> {END_TIME} .\n"
)
ROUTED_DDL = "unit int, partition string, " + ELEMENT_DDL
ROUTED_SCHEMA = pa.schema(
    [("unit", pa.int32()), ("partition", pa.string())]
    + [(name, pa.int64() if name in ("seq", "start", "end") else pa.string())
       for name in ELEMENT_FIELDS]
)  # fmt: skip
CHUNK = 1024
"""Elements routed together: partition keys are found for a chunk in one evaluation."""


def results_frame(frames: Sequence[DataFrame], spec: JobSpec) -> DataFrame:
    """The streaming DataFrame of result rows of every unit over the ingest rows `frames`."""
    rows = reduce(DataFrame.unionByName, frames)
    routed = rows.mapInArrow(partial(route, spec=spec), ROUTED_DDL)
    return routed.groupBy("unit", "partition").transformWithStateInPandas(
        EngineHost(spec), RESULT_DDL, "Append", "EventTime"
    )


def route(batches: Iterable[pa.RecordBatch], spec: JobSpec) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: ingest rows in, one row per element and key out."""
    rows = (r for r in element_rows(batches, spec.on_error) if r[3] != END_GRAPH)
    while chunk := list(islice(rows, CHUNK)):
        routed = [
            (unit, key, *row)
            for unit, keys in enumerate(keys_of(spec, chunk))
            for row, row_keys in zip(chunk, keys, strict=True)
            for key in row_keys
        ]
        if routed:
            columns = list(zip(*routed, strict=True))
            yield pa.RecordBatch.from_arrays(
                [pa.array(c, f.type) for c, f in zip(columns, ROUTED_SCHEMA, strict=True)],
                schema=ROUTED_SCHEMA,
            )


def keys_of(spec: JobSpec, chunk: list) -> Iterator[list[list[str | None]]]:
    """Per unit, the keys of each element of the chunk (none: not read by the unit).

    Only the reference adapter is keyed by PARTITION BY value: the incremental engine
    indexes a unit's partitions itself (`sepia.engine.partition`), and must, because a
    partition's time is the whole input's (a tail negation waits for the streamset's
    instants, semantics.md), which a group holding one value's elements cannot know."""
    elements = None
    for unit, engine in zip(spec.units, spec.unit_engines, strict=True):
        if unit.partition_by is None or engine != "reference":
            yield [[None] if unit.reads(row[0]) else [] for row in chunk]
            continue
        elements = elements or [to_element(row) for row in chunk]
        yield unit.partition_keys(elements, spec.background_store(), spec.rdfs)


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
