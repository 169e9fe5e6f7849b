"""The engines behind the engine protocol, driven in-process the way the Spark host drives
them (protocol.py, no Spark): whatever the batches, and whether the incremental engine's
live sessions survive between steps or every step restores from the state rows, the lines
are the reference evaluator's answer, in its order of evaluations (the rows of one
evaluation, which no ORDER BY orders, compared as a bag: the columnar core joins in another
order than the reference's store)."""

from __future__ import annotations

import dataclasses

import pytest

from sepia.algebra import event as ev
from sepia.io.background import load_background
from sepia.io.streams import read_stream
from sepia.lang import parse_query
from sepia.runtime.spark import incremental_engine
from sepia.runtime.spark.elements import to_element
from sepia.runtime.spark.incremental_engine import HELD, VERSION, IncrementalEngine
from sepia.runtime.spark.reference_engine import ReferenceEngine
from sepia.runtime.spark.units import units_of

from ..evaluations import evaluations
from .examples import NAMES, Example, example
from .protocol import drive, element_row


def lines_of(ex: Example, batch_size: int, engine: str, forget: bool = False) -> list[str]:
    store = load_background(ex.data) if ex.data else None
    streams = {iri: list(read_stream(path, iri)) for iri, path in ex.bindings.items()}
    return evaluations(drive(ex.queries, streams, store, rdfs=ex.rdfs, batch_size=batch_size,
                             engine=engine, forget=forget))  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("batch_size", [1, 3, 1000])
@pytest.mark.parametrize("engine", ["incremental", "reference"])
def test_batches_give_the_reference_answer(name, batch_size, engine):
    ex = example(name)
    assert lines_of(ex, batch_size, engine) == evaluations(ex.reference_lines())


@pytest.mark.parametrize("name", NAMES)
def test_steps_restored_from_rows_give_the_same_answer(name):
    ex = example(name)
    assert lines_of(ex, 2, "incremental", forget=True) == evaluations(ex.reference_lines())


@pytest.mark.parametrize(
    ("name", "policy"),
    [
        ("e2-subway-delays", ev.SelectionPolicy.CHRONOLOGICAL),
        ("e3-rsepql-landmark", ev.SelectionPolicy.RECENT),
        ("e5-epsparql-drop-rise", ev.SelectionPolicy.CHRONOLOGICAL),
        ("e5-epsparql-drop-rise", ev.SelectionPolicy.RECENT),
    ],
)
def test_consuming_units_restored_from_rows_give_the_reference_answer(name, policy):
    """CQELS-CEP (E2), RSEP-QL (E3) and EP-SPARQL (E5) under a consuming EVENT POLICY on the
    incremental engine, every step restored from the state rows: the consumed occurrences
    travel with them."""
    ex = example(name)
    consuming = [
        dataclasses.replace(q, query=dataclasses.replace(q.query, event_policy=policy))
        for q in ex.queries
    ]
    ex = dataclasses.replace(ex, queries=consuming)
    assert lines_of(ex, 2, "incremental", forget=True) == evaluations(ex.reference_lines())


CONSUMING_MATCHES = """PREFIX : <http://example.org/>
SELECT ?x ?y ?z ?w
FROM NAMED WINDOW :w1 ON :s [LANDMARK FROM 1]
FROM NAMED WINDOW :w2 ON :s [RANGE 5]
EVENT POLICY CHRONOLOGICAL
WHERE {
  MATCH { EVENT :w1 { ?x :p ?y } SEQ EVENT :w2 { ?y :q ?z } }
  MATCH { EVENT :w2 { ?x :p ?w } }
}"""


def test_refused_units_fall_back_to_the_reference_with_a_message(capsys):
    """E3's data under two MATCHes with consumption (the engine refuses several MATCHes
    under CHRONOLOGICAL: their consumed set is one), so the unit runs on the reference
    adapter."""
    ex = example("e3-rsepql-landmark")
    query = parse_query(CONSUMING_MATCHES)
    ex = dataclasses.replace(ex, queries=[dataclasses.replace(ex.queries[0], query=query)])
    assert len(ex.reference_lines()) == 3  # E3's first three matches, a1 and a2 consumed once
    assert lines_of(ex, 3, "incremental") == evaluations(ex.reference_lines())
    assert "runs on the reference adapter" in capsys.readouterr().err
    with pytest.raises(Exception, match="several MATCHes under EVENT POLICY"):
        IncrementalEngine(units_of([(q.name, q.query) for q in ex.queries])[0], None, False)


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


def test_incremental_state_holds_back_elements_past_the_horizon():
    """E1 (README), its :nearby stream alone; an element stamped after the horizon waits
    in the state (a later batch may still bring earlier ones) and wakes the key at its time;
    a late one is dropped; the rows are plain values; the live session is used only when
    the state carries its token."""
    ex = example("e1-shops-coupons")
    unit = units_of([(q.name, q.query) for q in ex.queries])[0]
    streams = {iri: list(read_stream(path, iri)) for iri, path in ex.bindings.items()}
    rows = [element_row(e, n) for n, e in enumerate(next(iter(streams.values())))]
    engine = IncrementalEngine(unit, load_background(ex.data), False)
    times = [r[5] for r in rows]
    first = engine.step(None, {}, rows, horizon=times[0], final=False)
    assert first.state[HELD] == [r for r in rows if r[5] > times[0]]
    # W2 closes every 2 (STEP 2): the close at 4 may report without new input for the key
    assert first.wake_at == 4 < min(t for t in times if t > times[0])
    assert all(isinstance(v, int | str | None) for table in first.state.values()
               for row in table for v in row)  # fmt: skip
    token = first.state[VERSION][0][0]
    assert token in incremental_engine._LIVE
    state = {**first.state, **first.appended}
    late = engine.step(None, state, [rows[0]], horizon=times[0], final=False)
    assert late.state[HELD] == first.state[HELD]  # the late copy of the first is dropped
    assert token not in incremental_engine._LIVE  # taken by the step that used it


def test_a_key_without_state_or_elements_stays_silent():
    """After the final flush a key's state is gone; Spark may still fire its other expired
    timer in the same batch. That call must neither emit nor write state (a fresh session
    would: empty tables, and a query without report policy is evaluated once at 0)."""
    text = "PREFIX : <http://example.org/>\nSELECT * FROM NAMED WINDOW :w ON :s [RANGE 5]\n"
    text += "WHERE { WINDOW :w { ?x :p ?y } }"
    unit = units_of([("q", parse_query(text))])[0]
    engine = IncrementalEngine(unit, None, False)
    assert engine.step(None, {}, [], horizon=10**12, final=True).results == []
    assert engine.step(None, {}, [], horizon=10, final=False).state == {}
