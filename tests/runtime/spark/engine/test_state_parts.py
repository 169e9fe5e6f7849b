"""A window query's state parts follow the change: its windows are stored in time chunks
(`incremental_engine.chunk_width`), a step writes the chunks its elements fell in and
removes the evicted ones, and a session restored from the chunks answers as the
uninterrupted one. Hand-checked on a [RANGE 64 STEP 32] window (chunks of 2 time units),
on the row engine and on the columnar core."""

from __future__ import annotations

import json

import pyoxigraph as ox
import pytest

from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.runtime.spark import incremental_engine
from sepia.runtime.spark.engine_protocol import Step, stored
from sepia.runtime.spark.host import packed, unpacked
from sepia.runtime.spark.incremental_engine import (
    FLUSHED,
    PART,
    PARTS,
    VERSION,
    IncrementalEngine,
    restored_snapshot,
)
from sepia.runtime.spark.units import units_of

from .protocol import element_row

EX = "http://example.org/"
QUERY = f"""PREFIX : <{EX}>
SELECT ?x ?v FROM NAMED WINDOW :w ON :s [RANGE 64 STEP 32]
REPORT ON WINDOW CLOSE WHERE {{ WINDOW :w {{ ?x :v ?v }} }}"""
STEPS = [  # (element times, horizon)
    ([1, 2, 3], 3),  # chunks 0 (time 1) and 1 (times 2, 3)
    ([4], 4),  # chunk 2 only: chunks 0 and 1 are not written again
    ([40, 100], 100),  # past the close at 96 the window keeps (64, 128]'s: chunks 0-2 go
    ([130], 130),
]


def chunk(n: int) -> str:
    return f"windows{PART}<{EX}w>{PART}{n + FLUSHED:020d}"


def element(time: int) -> StreamElement:
    triple = ox.Triple(ox.NamedNode(f"{EX}x{time}"), ox.NamedNode(f"{EX}v"), ox.Literal(str(time)))
    return StreamElement(f"{EX}s", f"{EX}g{time}", time, time, (triple,))


def run(restore_before: int | None) -> tuple[list[Step], list[dict], list[dict]]:
    """Every step, the state after it and its session's snapshot; `restore_before`: the
    live session is dropped before that step (a restarted job), which restores it from the
    stored rows."""
    engine = IncrementalEngine(units_of([("q", parse_query(QUERY))])[0], None, False)
    state: dict = {}
    steps, states, snapshots = [], [], []
    for n, (times, horizon) in enumerate(STEPS):
        if n == restore_before:
            incremental_engine._LIVE.clear()
        rows = [element_row(element(t), t) for t in times]
        step = engine.step(None, state, rows, horizon, final=False)
        state = {k: unpacked(packed(v)) if k in engine.tables else v
                 for k, v in stored(state, step).items()}  # fmt: skip
        steps.append(step)
        states.append(state)
        live = incremental_engine._LIVE[state[VERSION][0][0]][0]
        snapshots.append(live.queries[0].snapshot())
    return steps, states, snapshots


def windows_changed(step: Step) -> dict[str, list | None]:
    return {k: v and json.loads(v[0]) for k, v in step.changed[PARTS].items()
            if k.startswith("windows" + PART)}  # fmt: skip


@pytest.mark.parametrize("path", ["rows", "columnar-always"])
def test_a_step_writes_the_chunks_it_changed_and_drops_the_evicted(monkeypatch, path):
    monkeypatch.setenv("SEPIA_ENGINE_PATH", path)
    steps, _, _ = run(restore_before=None)
    first, second, third, _ = map(windows_changed, steps)
    assert set(first) == {chunk(0), chunk(1)}
    # a chunk holds its elements' times and, per triple, its element's offset into them
    assert [first[chunk(0)][:2], first[chunk(1)][:2]] == [[[1], [0]], [[2, 3], [0, 1]]]
    assert set(second) == {chunk(2)}
    assert second[chunk(2)][:2] == [[4], [0]]
    assert {k for k, v in third.items() if v is None} == {chunk(0), chunk(1), chunk(2)}
    assert {k: v[:2] for k, v in third.items() if v is not None} == {chunk(50): [[100], [0]]}


@pytest.mark.parametrize("path", ["rows", "columnar-always"])
@pytest.mark.parametrize("restore_before", [1, 2, 3])
def test_a_session_restored_from_chunks_answers_as_the_uninterrupted_one(
    monkeypatch, path, restore_before
):
    monkeypatch.setenv("SEPIA_ENGINE_PATH", path)
    steps, states, snapshots = run(restore_before=None)
    again, states_again, snapshots_again = run(restore_before=restore_before)
    assert [s.results for s in again] == [s.results for s in steps]
    # IStream (SELECT's default): the close at 64 shows (0, 64], all new; 96's (32, 96]
    # nothing new; 128's (64, 128] the element at 100
    assert [[r.t for r in s.results] for s in steps] == [[], [], [64] * 5, [128]]
    assert snapshots_again == snapshots
    # the restoring step writes and removes the parts the uninterrupted one does (a restored
    # window's chunks digest as stored), so the store holds the same parts
    assert again[restore_before].changed[PARTS] == steps[restore_before].changed[PARTS]
    assert [dict(s[PARTS]) for s in states_again] == [dict(s[PARTS]) for s in states]


def test_restored_chunks_number_elements_across_chunks_and_keep_empty_ones():
    stored_parts = {
        chunk(1): json.dumps([[2, 3], [0, 0, 1], [5, 6, 7], [8, 8, 8], [9, 9, 9]]),
        chunk(0): json.dumps([[0, 1], [1], [4], [8], [9]]),
        "windows": "[]",
        "clock": json.dumps([["low", None]]),
    }
    assert restored_snapshot(stored_parts) == {
        "clock": [("low", None)],
        "windows": [
            (f"<{EX}w>", 0, 0, None, None, None),
            (f"<{EX}w>", 1, 1, 4, 8, 9),
            (f"<{EX}w>", 2, 2, 5, 8, 9),
            (f"<{EX}w>", 2, 2, 6, 8, 9),
            (f"<{EX}w>", 3, 3, 7, 8, 9),
        ],
    }


def test_windows_stored_as_one_part_of_rows_resume_and_are_written_as_chunks():
    """A checkpoint from before the chunks: its windows are one `windows` part of rows."""
    steps, states, _ = run(restore_before=None)
    engine = IncrementalEngine(units_of([("q", parse_query(QUERY))])[0], None, False)
    parts = dict(states[1][PARTS])
    rows = restored_snapshot(parts)["windows"]
    assert [r[2] for r in rows] == [1, 2, 3, 4]
    old = {k: v for k, v in parts.items() if not k.startswith("windows")}
    state = {**states[1], PARTS: [*old.items(), ("windows", json.dumps(rows))]}
    incremental_engine._LIVE.clear()
    times, horizon = STEPS[2]
    rows_in = [element_row(element(t), t) for t in times]
    step = engine.step(None, state, rows_in, horizon, final=False)
    assert step.results == steps[2].results
    assert dict(stored(state, step)[PARTS]) == dict(states[2][PARTS])
