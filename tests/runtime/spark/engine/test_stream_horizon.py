"""A key's own horizon on a live run (`EngineHost._horizon`): each stream's latest element
time, kept in the host's map table, less the allowed lateness, the least of them, less one;
never below the watermark's. Hand-worked on a unit reading two streams: its one key, and
the buckets of a PARTITION BY unit, told the times their own elements do not show by the
route stage's mark rows (job.py, Marks), driven through the host in-process."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace

import pandas as pd
import pyoxigraph as ox
import pytest
from pyspark.sql.streaming.stateful_processor import ListState, MapState

from sepia.engine.query.partition import bucket_of
from sepia.lang import parse_query
from sepia.rdf.results import jsonl_line
from sepia.rdf.time import TimeKind
from sepia.runtime.spark import incremental_engine
from sepia.runtime.spark.element_batches import unpack
from sepia.runtime.spark.elements import (
    ELEMENT_FIELDS,
    END,
    MARK_GRAPH,
    end_row,
    streams_of,
)
from sepia.runtime.spark.host import (
    RESULT_ORDER,
    EngineHost,
    JobSpec,
    batch_ends,
    job_spec,
)
from sepia.runtime.spark.job import _chunk_rows, mark_rows
from sepia.runtime.spark.units import units_of
from sepia.semantics import evaluate

from ..evaluations import evaluations

QUERY = """
PREFIX : <http://example.org/>
REGISTER RSTREAM :out AS
SELECT ?x
FROM NAMED WINDOW :wa ON :a [RANGE 10 STEP 10]
FROM NAMED WINDOW :wb ON :b [RANGE 10 STEP 10]
WHERE { WINDOW :wa { ?x :p ?y } WINDOW :wb { ?x :q ?z } }
"""
EX = "http://example.org/"
A, B = EX + "a", EX + "b"


class Ends:
    """The host's map state, in memory (the calls `_horizon` makes)."""

    def __init__(self) -> None:
        self.entries: dict[str, int] = {}

    def iterator(self) -> Iterator[tuple[tuple, tuple]]:
        return iter([((k,), (v,)) for k, v in self.entries.items()])

    def updateValue(self, key: tuple, value: tuple) -> None:
        self.entries[key[0]] = value[0]

    def clear(self) -> None:
        self.entries.clear()


def host(lateness: int) -> EngineHost:
    units = units_of([("out", parse_query(QUERY))])
    made = EngineHost(job_spec(units, streams=(A, B), stream_horizon=lateness))
    made.stream_ends = Ends()  # type: ignore[assignment]
    return made


def told(*rows: tuple) -> dict[str, int]:
    """Each stream's latest time a batch of these element rows tells its key."""
    return batch_ends(list(rows), {})


def row(stream: str, end: int) -> tuple:
    return (stream, "f", end, "g", end, end, "abstract", "")


def test_the_horizon_follows_the_slowest_stream_seen_and_never_falls_behind_spark():
    key = host(lateness=0)
    assert key._horizon(0, told(row(A, 10), row(A, 20)), -1, False) == -1  # b not seen yet
    assert key._horizon(0, told(row(B, 15)), -1, False) == 14  # min(20, 15) - 1
    assert key._horizon(0, told(row(A, 30)), -1, False) == 14  # b's 15 kept from before
    assert key._horizon(0, told(row(B, 40), row(B, 25)), 9, False) == 29  # min(30, 40) - 1
    assert key._horizon(0, told(), 35, False) == 35  # the watermark's horizon is ahead
    assert key.stream_ends.entries == {A: 30, B: 40}  # type: ignore[attr-defined]
    assert key._horizon(0, told(), 99, True) == 99  # the end of input forgets the streams
    assert key.stream_ends.entries == {}  # type: ignore[attr-defined]


def test_the_allowed_lateness_holds_the_horizon_back():
    key = host(lateness=5)
    assert key._horizon(0, told(row(A, 20), row(B, 30)), -1, False) == 14  # min(20, 30) - 5 - 1


BUCKETED = """
PREFIX : <http://example.org/>
SELECT ?c ?p1 ?p2
FROM STREAM S1 <http://example.org/a> FROM STREAM S2 <http://example.org/b>
PARTITION BY ?c
WHERE { SEQ(X, Y)
  DEFINE GPM X ON S1 { ?c :price ?p1 }
  DEFINE GPM Y ON S2 { ?c :price ?p2 } }
"""


class Keyed:
    """A state table of the in-memory store: the current key's entries (Spark scopes a
    stateful processor's state to the key it is called for)."""

    def __init__(self, store: Store, name: str) -> None:
        self.store, self.name = store, name

    @property
    def entries(self) -> dict:
        return self.store.tables.setdefault((self.store.key, self.name), {})


class KeyedMap(Keyed, MapState):
    def iterator(self) -> Iterator[tuple[tuple, tuple]]:
        return iter([((k,), v) for k, v in self.entries.items()])

    def keys(self) -> Iterator[tuple]:
        return iter([(k,) for k in self.entries])

    def updateValue(self, key: tuple, value: tuple) -> None:
        self.entries[key[0]] = tuple(value)

    def removeKey(self, key: tuple) -> None:
        del self.entries[key[0]]

    def clear(self) -> None:
        self.entries.clear()


class KeyedList(Keyed, ListState):
    def get(self) -> Iterator[tuple]:
        return iter(self.entries.get("rows", []))

    def put(self, rows: list) -> None:
        self.entries["rows"] = list(rows)

    def clear(self) -> None:
        self.entries.clear()


class Store:
    """Spark's state store and timers as `EngineHost` calls them, in memory, by key."""

    def __init__(self) -> None:
        self.key: tuple = ()
        self.tables: dict[tuple, dict] = {}
        self.timers: dict[tuple, set[int]] = {}

    def getListState(self, name: str, schema: str) -> KeyedList:
        return KeyedList(self, name)

    def getMapState(self, name: str, key: str, value: str) -> KeyedMap:
        return KeyedMap(self, name)

    def listTimers(self) -> list[int]:
        return sorted(self.timers.get(self.key, ()))

    def registerTimer(self, at: int) -> None:
        self.timers.setdefault(self.key, set()).add(at)

    def deleteTimer(self, at: int) -> None:
        self.timers[self.key].discard(at)


class Watermark:
    def __init__(self, ms: int) -> None:
        self.ms = ms

    def getCurrentWatermarkInMs(self) -> int:
        return self.ms


def micro_batch(made: EngineHost, store: Store, rows: list[tuple], watermark: int) -> list[str]:
    """One micro-batch as Spark runs it: the route stage over the batch's element rows,
    each key's rows to `handleInputRows`, then every timer the watermark reached; the
    result lines written, in the results' order."""
    routed: dict[tuple, list[tuple]] = {}
    for n, key, row in _chunk_rows(made.spec, [(row, None) for row in rows]):
        routed.setdefault((n, key), []).append(row)
    frames = []
    for key, key_rows in routed.items():
        store.key = key
        frame = pd.DataFrame(key_rows, columns=list(ELEMENT_FIELDS))
        frames += made.handleInputRows(key, iter([frame]), Watermark(watermark))  # type: ignore[arg-type]
    for key in list(store.timers):
        store.key = key
        for at in [t for t in store.listTimers() if t <= watermark]:
            store.deleteTimer(at)
            frames += made.handleExpiredTimer(key, Watermark(watermark), None)  # type: ignore[arg-type]
    if not frames:
        return []
    return list(pd.concat(frames).sort_values(list(RESULT_ORDER))["line"])


def run_batches(
    spec: JobSpec, batches: list[list[tuple]], marks: list[int], restored: bool = False
) -> list[list[str]]:
    """The result lines of each micro-batch of a job over `batches`, each run at the
    watermark `marks` gives it (the least of the streams' latest times in the batches
    before: lateness 0). `restored`: every key restores its session from the state store
    in every batch, as after a restart (the workers' live sessions dropped)."""
    made, store = EngineHost(spec), Store()
    made.init(store)  # type: ignore[arg-type]
    lines = []
    for rows, mark in zip(batches, marks, strict=True):
        if restored:
            incremental_engine._LIVE.clear()
        lines.append(micro_batch(made, store, rows, mark))
    return lines


def priced(stream: str, company: str, price: int, t: int) -> tuple:
    text = f"<{EX}{company}> <{EX}price> {ox.Literal(price)} ."
    return (stream, "f", t, f"{EX}g{t}", t, t, "abstract", text)


@pytest.mark.parametrize("restored", [False, True])
@pytest.mark.parametrize("path", ["columnar", "rows"])
def test_a_bucket_told_by_marks_emits_in_the_batch_that_decides(monkeypatch, path, restored):
    """Hand-worked, lateness 0, two buckets (c1 in bucket 0, c0 in bucket 1). Batch 1:
    X(c1, 1) at 1 on a, Y(c1, 2) at 2 on b; the bucket of c1 steps to min(1, 2) - 1 = 0,
    no match due. Batch 2: c0's X at 3 on a and Y at 4 on b reach c0's bucket only; c1's
    bucket gets mark rows (a at 3, b at 4), steps to min(3, 4) - 1 = 2, and emits c1's
    match at t 2 in this batch (at Spark's watermark, 1 in batch 2 and 3 in batch 3, it
    would leave in batch 3). The end of input then flushes c0's match at t 4. Alike when
    every batch restores the keys' sessions from the state store."""
    monkeypatch.setenv("SEPIA_ENGINE_PATH", path)
    query = parse_query(BUCKETED)
    assert [bucket_of(ox.NamedNode(EX + c), 2) for c in ("c0", "c1")] == [1, 0]
    first = [priced(A, "c1", 1, 1), priced(B, "c1", 2, 2)]
    second = [priced(A, "c0", 5, 3), priced(B, "c0", 6, 4)]
    ends = [end_row(A, "abstract"), end_row(B, "abstract")]
    live = job_spec(units_of([("q", query)]), streams=(A, B), buckets=2, stream_horizon=0)
    at_watermark = replace(live, stream_horizon=None)
    waited = run_batches(at_watermark, [first, second, [], ends], [0, 1, 3, 3], restored)
    assert [[json.loads(line)["t"] for line in out] for out in waited] == [[], [], [2], [4]]
    made = run_batches(live, [first, second, ends], [0, 1, 3], restored)
    assert [[json.loads(line)["t"] for line in out] for out in made] == [[], [2], [4]]
    decided, flushed = made[1], made[2]
    assert json.loads(decided[0])["binding"] == {
        "c": f"<{EX}c1>",
        "p1": str(ox.Literal(1)),
        "p2": str(ox.Literal(2)),
    }
    streams = streams_of([*first, *second], (A, B))
    reference = [jsonl_line(r, TimeKind.ABSTRACT) for r in evaluate(query, streams, name="q")]
    assert evaluations(decided + flushed) == evaluations(reference)


def test_marks_tell_every_bucket_each_streams_latest_time_on_live_runs_only():
    query = parse_query(BUCKETED)
    rows = [priced(A, "c0", 5, 3), priced(A, "c0", 4, 2), priced(B, "c0", 6, 4)]
    live = job_spec(units_of([("q", query)]), streams=(A, B), buckets=2, stream_horizon=0)
    marks = sorted((key, row[0], row[END]) for _, key, row in mark_rows(live, rows))
    assert marks == [("0/2", A, 3), ("0/2", B, 4), ("1/2", A, 3), ("1/2", B, 4)]
    routed = [row for _, _, row in _chunk_rows(live, [(row, None) for row in rows])]
    assert sum(row[3] == MARK_GRAPH for row in routed) == 4
    batch = replace(live, stream_horizon=None)
    assert all(row[3] != MARK_GRAPH for _, _, row in _chunk_rows(batch, [(r, None) for r in rows]))
    elements, ended, told = unpack(routed)
    assert told == {A: 3, B: 4} and not ended
    assert all(row[3] != MARK_GRAPH for row in elements)
    one_key = job_spec(units_of([("q", parse_query(QUERY))]), streams=(A, B), stream_horizon=0)
    assert list(mark_rows(one_key, rows)) == []  # its one key gets every element


def test_a_bucket_drops_an_element_at_or_before_the_horizon_its_marks_gave():
    """After batch 2 c1's bucket stands at horizon 2 from its mark rows alone (a at 3, b at
    4: it got no element in that batch), as the unit's one key would. Y(c1, 9) at 2 on b
    comes in batch 3: late, dropped, so no second c1 match (1, 9) at 2; c0's (5, 6) is
    flushed at the end."""
    query = parse_query(BUCKETED)
    live = job_spec(units_of([("q", query)]), streams=(A, B), buckets=2, stream_horizon=0)
    first = [priced(A, "c1", 1, 1), priced(B, "c1", 2, 2)]
    second = [priced(A, "c0", 5, 3), priced(B, "c0", 6, 4)]
    late = [priced(B, "c1", 9, 2)]
    ends = [end_row(A, "abstract"), end_row(B, "abstract")]
    made = run_batches(live, [first, second, late, ends], [0, 1, 3, 3])
    assert [[json.loads(line)["t"] for line in out] for out in made] == [[], [2], [], [4]]
    assert json.loads(made[3][0])["binding"]["c"] == f"<{EX}c0>"

