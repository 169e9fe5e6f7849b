"""The reference engine behind the engine protocol, driven in-process the way the Spark host
drives it (no Spark here): batches of elements, a watermark that trails them, wake-up
timers, and the end-of-input flush. Its output must be the reference evaluator's answer,
line for line, whatever the batches."""

from __future__ import annotations

import pytest

from sepia.io.background import load_background
from sepia.io.results import jsonl_line
from sepia.io.streams import read_stream
from sepia.rdf.stream import StreamElement, StreamSet
from sepia.runtime.spark.elements import to_element
from sepia.runtime.spark.reference_engine import ReferenceEngine
from sepia.runtime.spark.units import units_of

from .examples import NAMES, Example, example


def element_row(e: StreamElement, seq: int) -> tuple:
    text = "\n".join(f"{t} ." for t in e.triples)
    return (e.stream, "file", seq, e.graph, e.start, e.end, e.kind.value, text)


def drive(ex: Example, batch_size: int) -> list[str]:
    """Run the example's units over batches of `batch_size` elements; return jsonl lines."""
    store = load_background(ex.data) if ex.data else None
    units = units_of([(q.name, q.query) for q in ex.queries])
    engines = [ReferenceEngine(unit, store, ex.rdfs) for unit in units]
    streams = {iri: list(read_stream(path, iri)) for iri, path in ex.bindings.items()}
    elements = list(StreamSet(streams).merged())
    states: dict[tuple, dict] = {}
    wake: dict[tuple, int | None] = {}
    lines: list[str] = []
    watermark = 0

    def step(key: tuple, rows: list, final: bool = False) -> list[tuple]:
        unit, partition = key
        done = engines[unit].step(partition, states.get(key, {}), rows, watermark - 1, final)
        states[key], wake[key] = done.state, done.wake_at
        position = {q.name: q.position for q in units[unit].queries}
        return [
            (r.t, position[r.query], partition or "", n, jsonl_line(r, done.time_kind))
            for n, r in enumerate(done.results)
        ]

    for start in range(0, len(elements), batch_size):
        batch = elements[start : start + batch_size]
        routed: dict[tuple, list] = {}
        for n, unit in enumerate(units):
            keys = unit.partition_keys(batch, store, ex.rdfs) if unit.partition_by else [
                [None] if unit.reads(e.stream) else [] for e in batch
            ]
            for seq, (e, element_keys) in enumerate(zip(batch, keys, strict=True), start):
                for key in element_keys:
                    routed.setdefault((n, key), []).append(element_row(e, seq))
        out = [row for key, rows in routed.items() for row in step(key, rows)]
        out += [row for key, at in list(wake.items()) if at is not None and at < watermark
                for row in step(key, [])]  # fmt: skip
        lines += [row[-1] for row in sorted(out)]
        watermark = max(watermark, *(e.end for e in batch))
    final = [row for key in list(states) for row in step(key, [], final=True)]
    return lines + [row[-1] for row in sorted(final)]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("batch_size", [1, 3, 1000])
def test_batches_give_the_reference_answer(name, batch_size):
    ex = example(name)
    assert drive(ex, batch_size) == ex.reference_lines()


def test_late_elements_are_dropped_and_state_is_plain_rows():
    ex = example("e3-rsepql-landmark")
    unit = units_of([(q.name, q.query) for q in ex.queries])[0]
    engine = ReferenceEngine(unit, None, False)
    streams = {iri: list(read_stream(path, iri)) for iri, path in ex.bindings.items()}
    rows = [element_row(e, n) for n, e in enumerate(next(iter(streams.values())))]
    first = engine.step(None, {}, rows[:3], horizon=6, final=False)
    # E3 (README): the match (a1, b1, c1) over [2, 6] is reported at 6.
    assert [(r.t, r.interval) for r in first.results] == [(6, (2, 6))]
    assert all(isinstance(v, int | str) for table in first.state.values()
               for row in table for v in row)  # fmt: skip
    late = engine.step(None, first.state, [rows[1]], horizon=7, final=False)
    assert len(late.state["elements"]) == 3  # stamped 6 or before, after horizon 6: dropped
    assert to_element(late.state["elements"][0]) == streams[rows[0][0]][0]
