"""The Spark host's calls to an engine, made in-process (no Spark): batches of elements
routed by key, a watermark that trails them, wake-up timers, the end-of-input flush, and the
state kept between steps exactly as the protocol says the host keeps it (`stored`, list
tables packed and unpacked as `host.packed` does), and the driver's merge of a split's
partial states (`partial_states.merged`, where `merges` is asked)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import pyarrow as pa
import pyoxigraph as ox

from sepia.engine.forgetting import MIN_TERMS
from sepia.rdf.results import jsonl_line
from sepia.rdf.stream import StreamElement, StreamSet
from sepia.runtime.spark import incremental_engine
from sepia.runtime.spark.element_batches import unpack
from sepia.runtime.spark.engine_protocol import State, stored
from sepia.runtime.spark.host import ENGINES, job_spec, packed, unpacked
from sepia.runtime.spark.incremental_engine import TERMS, term_rows
from sepia.runtime.spark.job import merged_splits, read_predicates, routed_rows
from sepia.runtime.spark.partial_states import Merges, merged
from sepia.runtime.spark.units import RunQuery, units_of


def element_row(e: StreamElement, seq: int, predicates: frozenset[str] | None = None) -> tuple:
    """The element's row with the triples of `predicates` only (None: all), as the route
    stage reads a file for keys that read no other (`job.read_predicates`)."""
    kept = [t for t in e.triples if predicates is None or t.predicate.value in predicates]
    text = "\n".join(f"{t} ." for t in kept)
    return (e.stream, "file", seq, e.graph, e.start, e.end, e.kind.value, text)


def drive(
    queries: Sequence[RunQuery],
    streams: Mapping[str, Sequence[StreamElement]],
    store: ox.Store | None = None,
    *,
    rdfs: bool = False,
    batch_size: int = 1,
    engine: str = "incremental",
    forget: bool = False,
    buckets: int = 1,
    forget_terms: int | None = MIN_TERMS,
    terms: list[int] | None = None,
    merges: bool = False,
) -> list[str]:
    """The jsonl lines the job writes for `queries` over `streams` fed in batches of
    `batch_size` elements, PARTITION BY queries spread over `buckets` keys. `forget`: drop
    the workers' live sessions before every step, as a restarted job would, so every step
    restores its key's state from the rows. `forget_terms`: the job's (`JobSpec`);
    `terms`, if given, gets the dictionary entries stored over all keys after each batch;
    `merges`: the run merges a split's partial states (`JobSpec.merges`), batch by batch."""
    run = units_of([(q.name, q.query) for q in queries])
    spec = job_spec(run, store, engine=engine, rdfs=rdfs, streams=tuple(streams), buckets=buckets)
    spec = replace(spec, merges=merges)
    partials = merged_splits(spec)
    units = spec.units
    engines = [
        ENGINES[name](unit, store, rdfs, forget_terms=forget_terms)
        for unit, name in zip(units, spec.unit_engines, strict=True)
    ]
    elements = list(StreamSet(dict(streams)).merged())
    read = read_predicates(spec)
    states: dict[tuple, State] = {}
    wake: dict[tuple, int | None] = {}
    lines: list[str] = []
    watermark = 0

    def step(key: tuple, rows: list, final: bool = False) -> list[tuple]:
        if forget:
            incremental_engine._LIVE.clear()
        unit, partition = key
        before = states.get(key, {})
        done = engines[unit].step(partition, before, unpack(rows)[0], watermark - 1, final)
        after = stored(before, done)  # list tables as the host keeps them: packed
        states[key] = {t: unpacked(packed(r)) if t in spec.tables else r
                       for t, r in after.items()}  # fmt: skip
        wake[key] = done.wake_at
        position = {q.name: q.position for q in units[unit].queries}
        order = done.order or [partition or ""] * len(done.results)
        return [
            (r.t, position[r.query], place, 0 if done.order else n, jsonl_line(r, done.time_kind))
            for n, (r, place) in enumerate(zip(done.results, order, strict=True))
        ]

    for start in range(0, len(elements), batch_size):
        batch = elements[start : start + batch_size]
        routed: dict[tuple, list] = {}
        rows = [element_row(e, seq, read) for seq, e in enumerate(batch, start)]
        for n, key, row in routed_rows(spec, rows):
            routed.setdefault((n, key), []).append(row)
        out = [row for key, rows in routed.items() for row in step(key, rows)]
        out += [row for key, at in list(wake.items()) if at is not None and at < watermark
                for row in step(key, [])]  # fmt: skip
        lines += [row[-1] for row in sorted(_merged(out, partials))]
        watermark = max(watermark, *(e.end for e in batch))
        if terms is not None:
            terms.append(sum(len(term_rows(state.get(TERMS, []))) for state in states.values()))
    final = [row for key in list(states) for row in step(key, [], final=True)]
    return lines + [row[-1] for row in sorted(_merged(final, partials))]


def _merged(rows: list[tuple], merges: Merges) -> list[tuple]:
    """A batch's (t, query_index, partition, seq, line) rows with the merged queries'
    partial rows made one per group, as the driver's sink makes them."""
    if not merges:
        return rows
    names = ("t", "query_index", "partition", "seq", "line")
    types = (pa.int64(), pa.int32(), pa.string(), pa.int32(), pa.string())
    columns = list(zip(*rows, strict=True)) if rows else [()] * 5
    table = pa.table([pa.array(c, t) for c, t in zip(columns, types, strict=True)], names=names)
    table = merged(table, merges)
    return list(zip(*(table.column(name).to_pylist() for name in names), strict=True))
