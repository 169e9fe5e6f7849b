"""How the host keeps a key's engine tables in Spark's state store: every map table in one
map state (`host.ENGINE_MAPS`), an entry under its table's name, written back as the engine
protocol says. Driven through the host in-process, on the in-memory store of the horizon
tests."""

from __future__ import annotations

from typing import ClassVar

import pytest

from sepia.lang import parse_query
from sepia.rdf.time import TimeKind
from sepia.runtime.spark import host as host_module
from sepia.runtime.spark.engine_protocol import Step
from sepia.runtime.spark.host import (
    ENGINE_MAPS,
    STREAM_ENDS,
    EngineHost,
    StoredTables,
    job_spec,
)
from sepia.runtime.spark.incremental_engine import HELD, PARTS, TERMS, VERSION, IncrementalEngine
from sepia.runtime.spark.units import units_of

from .test_stream_horizon import BUCKETED, A, B, KeyedMap, Store, micro_batch, priced


def test_a_keys_map_tables_share_one_map_state():
    """Every map table of a key's engine is kept in the host's one map state, an entry
    under its table's name (each state variable a task opens costs the JVM its encoders in
    every task); the horizon tests' bucket test, restored, reads its sessions back from it."""
    live = job_spec(units_of([("q", parse_query(BUCKETED))]), streams=(A, B), buckets=2,
                    stream_horizon=0)  # fmt: skip
    made, store = EngineHost(live), Store()
    made.init(store)  # type: ignore[arg-type]
    micro_batch(made, store, [priced(A, "c1", 1, 1), priced(B, "c1", 2, 2)], 0)
    assert {name for _, name in store.tables} == {VERSION, ENGINE_MAPS, STREAM_ENDS}
    tables = {entry.split("\0")[0] for (_, name), entries in store.tables.items()
              if name == ENGINE_MAPS for entry in entries}  # fmt: skip
    assert PARTS in tables and tables <= set(IncrementalEngine.maps)


def test_a_map_table_of_more_than_one_string_is_refused(monkeypatch):
    class TwoColumns(IncrementalEngine):
        maps: ClassVar[dict[str, str]] = {"pairs": "left string, right bigint"}

    monkeypatch.setattr(host_module, "engines", lambda: {"incremental": TwoColumns})
    with pytest.raises(ValueError, match="'pairs' must hold one string value"):
        job_spec(units_of([("q", parse_query(BUCKETED))]), streams=(A, B))


def test_a_step_replaces_the_map_tables_it_names_and_leaves_the_others():
    """The protocol's `state` on map tables, kept in the one map state: a table named with
    rows has exactly those entries after; every table named empty (the end of input)
    leaves the key's map state empty; a table named in neither keeps its entries."""
    store = Store()
    maps = KeyedMap(store, ENGINE_MAPS)
    tables = StoredTables({}, maps, [PARTS, TERMS, HELD])
    step = lambda state, changed: Step(state, [], None, TimeKind.ABSTRACT, changed=changed)  # noqa: E731
    EngineHost._save(tables, step({}, {PARTS: {"a": ("1",), "b": ("2",)}, TERMS: {"0": ("t",)}}))
    assert tables.map_tables() == {PARTS: [("a", "1"), ("b", "2")], TERMS: [("0", "t")], HELD: []}
    EngineHost._save(tables, step({PARTS: [("c", "3")]}, {}))
    assert tables.map_tables() == {PARTS: [("c", "3")], TERMS: [("0", "t")], HELD: []}
    EngineHost._save(tables, step({PARTS: [], TERMS: [], HELD: []}, {}))
    assert maps.entries == {}
