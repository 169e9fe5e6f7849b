"""The engines behind the engine protocol, driven in-process the way the Spark host drives
them (protocol.py, no Spark): whatever the batches, and whether the incremental engine's
live sessions survive between steps or every step restores from the state rows, the lines
are the reference evaluator's answer, in its order of evaluations (the rows of one
evaluation, which no ORDER BY orders, compared as a bag: the columnar core joins in another
order than the reference's store)."""

from __future__ import annotations

import dataclasses
import json
import re

import pyoxigraph as ox
import pytest

from sepia.algebra import event as ev
from sepia.engine.forgetting import Forgetting
from sepia.io.background import load_background
from sepia.io.streams import read_stream
from sepia.lang import parse_query
from sepia.rdf.results import jsonl_line
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind
from sepia.runtime.local import run
from sepia.runtime.spark import incremental_engine
from sepia.runtime.spark.elements import to_element
from sepia.runtime.spark.engine_protocol import stored
from sepia.runtime.spark.held import stored_blocks
from sepia.runtime.spark.host import packed, unpacked
from sepia.runtime.spark.incremental_engine import (
    HELD,
    TERMS,
    VERSION,
    IncrementalEngine,
    term_rows,
)
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
def test_due_elements_pushed_in_slices_give_the_reference_answer(name, monkeypatch):
    """A step's due elements reach the columnar core two at a time, the session collecting
    its unheld terms (past a threshold of 16) between slices."""
    monkeypatch.setattr(incremental_engine, "PUSH_ELEMENTS", 2)
    ex = example(name)
    store = load_background(ex.data) if ex.data else None
    streams = {iri: list(read_stream(path, iri)) for iri, path in ex.bindings.items()}
    lines = drive(ex.queries, streams, store, rdfs=ex.rdfs, batch_size=1000, forget_terms=16)
    assert evaluations(lines) == evaluations(ex.reference_lines())


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
    [block] = stored_blocks((key, *value) for key, value in first.changed[HELD].items()).values()
    assert list(block) == [r for r in rows if r[5] > times[0]]
    # W2 closes every 2 (STEP 2): the close at 4 may report without new input for the key
    assert first.wake_at == 4 < min(t for t in times if t > times[0])
    assert all(isinstance(v, int | str | None) for table in first.state.values()
               for row in table for v in row)  # fmt: skip
    token = first.state[VERSION][0][0]
    assert token in incremental_engine._LIVE
    state = stored({}, first)
    late = engine.step(None, state, [rows[0]], horizon=times[0], final=False)
    assert late.changed[HELD] == {}  # the late copy of the first is dropped, nothing cut
    assert stored(state, late)[HELD] == state[HELD]
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


FRESH = """PREFIX : <http://example.org/>
{head} FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 5] WHERE {{ WINDOW :w {{ ?x :value ?v }} }}"""
FRESH_STREAM = "http://example.org/s"
FRESH_TERMS = 150


def fresh_elements(count: int) -> list[StreamElement]:
    """Element i at time i // 2 names a fresh sensor and a fresh reading: 2 new terms."""
    value = ox.NamedNode("http://example.org/value")
    return [
        StreamElement(FRESH_STREAM, f"http://example.org/g{i}", i // 2, i // 2,
                      (ox.Triple(ox.NamedNode(f"http://example.org/sensor{i}"), value,
                                 ox.NamedNode(f"http://example.org/reading{i}")),))
        for i in range(count)
    ]  # fmt: skip


BLANK = re.compile(r"_:sepia\d+")


def unlabelled(lines: list[str]) -> tuple[list[str], list[str]]:
    """`evaluations` up to CONSTRUCT's blank labels (each line's triples grouped by their
    blank node, written `_:b`), and the labels of the blank nodes of every row."""
    labels: list[str] = []
    shaped = []
    for line in lines:
        row = json.loads(line)
        groups: dict[str, list[str]] = {}
        for triple in row.get("triples", []):
            label = next(iter(BLANK.findall(triple)), "")
            groups.setdefault(label, []).append(BLANK.sub("_:b", triple))
        row["triples"] = sorted(sorted(group) for group in groups.values())
        labels += [label for label in groups if label]
        shaped.append(json.dumps(row))
    return evaluations(shaped), sorted(labels)


@pytest.mark.parametrize("head", ["SELECT ?x ?v", "CONSTRUCT { _:r :of ?x ; :is ?v }"])
def test_stored_dictionary_forgets_what_the_session_forgets(head):
    """400 elements with 2 fresh terms each (800 in all), 25 per batch, 150 terms before
    the first collection. The window [RANGE 10 STEP 5] holds the elements of at most 15
    instants (60 terms) and the query pins `:value`, so after a collection the dictionary
    holds fewer than 75 terms; 2 x 75 < 150, so the next collection comes when it holds 150
    again, and an advance (one instant: 2 elements, 4 terms) adds at most 4 (CONSTRUCT's
    fresh blank node: 2 more per row, 20 rows a close). The stored entries never exceed
    150 + 4 (+ 40), while without forgetting they hold every term of the elements pushed.
    The lines are the same with or without forgetting, live sessions or sessions restored
    from the rows at every step (CONSTRUCT's blank labels follow the highest id given: a
    restored session takes up the ids where the stored mark left them), and equal
    `--engine local`'s, evaluation by evaluation (a restored session lists an evaluation's
    rows in another order, so it gives them the same blank labels in another order)."""
    text = FRESH.format(head=head)
    query = units_of([("q", parse_query(text))])[0].queries
    streams = {FRESH_STREAM: fresh_elements(400)}
    bound = FRESH_TERMS + 4 + (40 if head.startswith("CONSTRUCT") else 0)
    local = unlabelled([jsonl_line(r, TimeKind.ABSTRACT) for r in run([("q", text)], streams)])
    kept: list[int] = []
    unforgotten = drive(query, streams, batch_size=25, forget_terms=None, terms=kept)
    assert unlabelled(unforgotten) == local
    assert max(kept) > 4 * bound  # nearly every term pushed (some wait past the horizon)
    for restored in (False, True):
        held: list[int] = []
        lines = drive(query, streams, batch_size=25, forget=restored,
                      forget_terms=FRESH_TERMS, terms=held)  # fmt: skip
        assert unlabelled(lines) == local
        assert max(held) <= bound, held


def test_stored_blocks_hold_exactly_the_session_terms_past_the_pinned():
    """With blocks of 4 ids, after each step of 25 fresh elements (50 new terms) and a
    collection every 60 terms, the stored blocks, applied as the state store applies
    them, hold exactly the live session's terms above the ones every session pins (the
    query's constants), each in the block of its id; blocks whose terms are all forgotten
    are removed, not left empty."""
    unit = units_of([("q", parse_query(FRESH.format(head="SELECT ?x ?v")))])[0]
    engine = IncrementalEngine(unit, None, False, forget_terms=60)
    rows = [element_row(e, n) for n, e in enumerate(fresh_elements(200))]
    state: dict = {}
    removed = 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(incremental_engine, "TERM_BLOCK", 4)
        for start in range(0, 200, 25):
            batch = rows[start : start + 25]
            step = engine.step(None, state, batch, horizon=batch[-1][5], final=False)
            removed += sum(value is None for value in step.changed[TERMS].values())
            state = stored(state, step)
            session = incremental_engine._LIVE[state[VERSION][0][0]][0]
            pinned = incremental_engine._LIVE[state[VERSION][0][0]][2].base
            held = term_rows(state[TERMS])
            assert held == list(session.dictionary.rows(since=pinned))
            assert all(int(key) == i // 4 for key, text in state[TERMS]
                       for i in json.loads(text)[0])  # fmt: skip
            assert all(json.loads(text)[0] for _, text in state[TERMS])
    assert removed > 10 and len(held) < 100  # collections removed whole blocks


SEQ_CONSTRUCT = """PREFIX : <http://example.org/>
CONSTRUCT { _:m :from ?x ; :to ?z } WITHIN 4 FROM STREAM S1 :s
WHERE { SEQ(A ; B) DEFINE GPM A ON S1 { ?x :start ?y } DEFINE GPM B ON S1 { ?y :stop ?z } }"""


def start_stop_noise(count: int) -> list[StreamElement]:
    """Element i at time i: `:xi :start :yi`, then `:y(i-1) :stop :zi`, then
    `:xi :noise :zi` (which no GPM matches: its terms are dead as soon as it is taken)."""
    ex = "http://example.org/"
    triples = [
        (f"x{i}", "start", f"y{i}") if i % 3 == 0 else
        (f"y{i - 1}", "stop", f"z{i}") if i % 3 == 1 else (f"x{i}", "noise", f"z{i}")
        for i in range(count)
    ]  # fmt: skip
    return [
        StreamElement(FRESH_STREAM, f"{ex}g{i}", i, i,
                      (ox.Triple(*(ox.NamedNode(ex + name) for name in triple)),))
        for i, triple in enumerate(triples)
    ]  # fmt: skip


def test_a_restored_session_takes_up_ids_after_the_forgotten_ones(monkeypatch):
    """Every advance collects, and each batch of 3 ends with a noise element, whose terms,
    the highest ids given, are forgotten at once: the highest ids stored are below the
    highest given. A session restored from the rows at every step must still label
    CONSTRUCT's blank nodes (by the highest id given) as the uninterrupted one does: by the
    stored `last_id` mark, not by the highest id stored (without the mark, the labels of
    the 20 matches come out lower from the second on)."""
    monkeypatch.setattr(Forgetting, "due", lambda self, settled=True: True)
    query = units_of([("q", parse_query(SEQ_CONSTRUCT))])[0].queries
    streams = {FRESH_STREAM: start_stop_noise(60)}
    made = run([("q", SEQ_CONSTRUCT)], streams)
    local = unlabelled([jsonl_line(r, TimeKind.ABSTRACT) for r in made])
    assert len(local[1]) == 20 == len(set(local[1]))
    assert unlabelled(drive(query, streams, batch_size=3, forget=True)) == local


def test_list_tables_cross_the_state_store_packed_and_come_back_equal():
    rows = [("s", "f", n, "g", n, n + 1, "abstract", f"<a{n}> <p> <o> .") for n in range(2500)]
    version = [("token", 7, None, 12)]
    stored_rows = packed(rows)
    assert [len(json.loads(text)) for (text,) in stored_rows] == [1024, 1024, 452]
    assert unpacked(stored_rows) == rows
    assert unpacked(packed(version)) == version
    assert packed([]) == [] and unpacked([]) == []


def test_a_key_stores_no_term_every_session_of_its_unit_holds_already():
    """E1 (README), its :nearby stream alone: the background's terms (its owners and shops,
    `:owns`) and the query's constants get the same ids in every session made for the unit,
    so a key's stored dictionary holds only the other terms its elements brought (the
    shoppers, and each element's graph name); a session restored from those rows answers as
    the live one."""
    ex = example("e1-shops-coupons")
    unit = units_of([(q.name, q.query) for q in ex.queries])[0]
    store = load_background(ex.data)
    stream = next(iter(ex.bindings.items()))
    elements = list(read_stream(stream[1], stream[0]))
    rows = [element_row(e, n) for n, e in enumerate(elements)]
    engine = IncrementalEngine(unit, store, False)
    first = engine.step(None, {}, rows[:4], horizon=rows[3][5], final=False)
    blocks = [(key, *value) for key, value in first.changed[TERMS].items() if value is not None]
    texts = {text for _, text in term_rows(blocks)}
    background = {str(term) for quad in store for term in quad.triple}
    shoppers = {str(t.subject) for e in elements[:4] for t in e.triples}
    assert shoppers <= texts and not texts & background
    assert not texts & {str(t.predicate) for e in elements for t in e.triples}  # a constant
    state = stored({}, first)
    live = engine.step(None, state, rows[4:], horizon=10**12, final=True)
    incremental_engine._LIVE.clear()
    restored = engine.step(None, state, rows[4:], horizon=10**12, final=True)
    assert [jsonl_line(r, TimeKind.ABSTRACT) for r in restored.results] == [
        jsonl_line(r, TimeKind.ABSTRACT) for r in live.results
    ]
