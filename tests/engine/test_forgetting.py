"""The dictionary forgets terms no state holds any more (``sepia.engine.forgetting``):
answers stay the reference's while it forgets at every advance, and over a long stream
with fresh IRIs per event it stays within the live windows' terms."""

from __future__ import annotations

import json

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.engine.codec import Codec
from sepia.engine.columnar import ColumnBatch
from sepia.engine.forgetting import Forgetting, held_integers
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.stream import StreamElement
from sepia.rdf.vocabulary import XSD
from sepia.runtime.local import Session

from .generators import EX, S1, event_queries, queries, sequence_queries, streams
from .support import assert_agrees, assert_resumes, engine_path

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]


@pytest.fixture
def always(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every session collects after every advance (the worst case for stale ids)."""
    monkeypatch.setattr(Forgetting, "due", lambda self, settled=True: True)


@pytest.mark.parametrize("path", ["rows", "columnar-always"])
@settings(max_examples=60, deadline=None, suppress_health_check=CHECKS)
@given(st.one_of(queries(), sequence_queries(), event_queries()), streams())
def test_forgetting_at_every_advance_keeps_the_reference_answers(always, path, text, data):
    with engine_path(path):
        assert_agrees(text, data, renamed=True)


@settings(max_examples=30, deadline=None, suppress_health_check=CHECKS)
@given(st.one_of(queries(), sequence_queries()), streams(), st.integers(0, 12))
def test_a_snapshot_with_forgotten_ids_resumes_exactly(always, text, data, cut):
    """Matches up to their names: two matches completing at one instant are numbered in
    the order each evaluator finds them."""
    assert_resumes(text, data, cut, renamed=True)


def test_forgotten_ids_are_never_given_again() -> None:
    d = Dictionary()
    _, b, _ = d.encode_many(["<http://e/a>", "<http://e/b>", "<http://e/c>"])
    d.forget({b})
    assert (len(d), d.last_id, d.lookup("<http://e/b>")) == (2, 3, None)
    with pytest.raises(KeyError):
        d.decode_text(b)
    assert d.encode_text("<http://e/b>") == 4
    assert list(d.rows(since=2)) == [(3, "<http://e/c>"), (4, "<http://e/b>")]
    assert list(Dictionary.from_rows(d.rows()).rows()) == list(d.rows())


def test_the_codec_forgets_a_terms_every_spelling() -> None:
    """``"01"`` and ``"1"`` are one integer, one id: once it is forgotten, neither
    spelling finds it, and both are given the next id when met again."""
    c = Codec()
    one, leading_zero = (ox.Literal(t, datatype=ox.NamedNode(XSD + "integer")) for t in ["1", "01"])
    kept = c.encode(ox.NamedNode("http://e/a"))
    assert c.encode(leading_zero) == c.encode(one) == kept + 1
    c.forget({kept + 1})
    assert (len(c), c.lookup('"1"^^<' + XSD + 'integer>')) == (1, None)
    assert c.encode(one) == c.encode(leading_zero) == kept + 2
    assert c.decode(kept + 2) == one


def test_held_integers_reach_closures_caches_and_arrays() -> None:
    import functools

    import numpy as np

    @functools.lru_cache(maxsize=4)
    def stamp(t: int) -> int:
        return t + 1000

    stamp(7)
    hidden = 55

    def reader() -> int:
        return hidden

    root = {"f": reader, "cache": stamp, "columns": np.array([3, 3, 9]), "slots": (1, [2]),
            "narrow": np.array([[4], [300]], dtype=np.uint16)}
    held = held_integers([root])
    dense = np.arange(1, 2000, dtype=np.int64)  # marked in a table over the range
    found = dense[held.among(dense)].tolist()
    assert {55, 7, 1007, 3, 9, 1, 2, 4, 300} <= set(found)
    assert not {5, 6, 8, 10, 1008} & set(found)
    sparse = np.array([1, 3, 5, 300, 1007, 1008, 10**9], dtype=np.int64)  # binary search
    assert held.among(sparse).tolist() == [True, True, False, True, True, False, False]


def test_held_integers_of_a_narrow_array_among_ids_beyond_its_type() -> None:
    """An int8 array (a live batch's kinds) held while every asked id is above 127: the
    range over the ids starts past what int8 holds, and nothing in the array is among them."""
    import numpy as np

    held = held_integers([np.array([1, 5, 7], dtype=np.int8), 1000])
    assert held.among(np.array([1000, 1001], dtype=np.int64)).tolist() == [True, False]
    assert held.among(np.array([5, 300], dtype=np.int64)).tolist() == [True, False]


PLAIN = "SELECT ?x ?v", "{ ?x :value ?v }", ""
GROUPED = ("SELECT ?k (AVG(?v) AS ?a) (MAX(?v) AS ?m)",
           "{ ?x :value ?v BIND(STRLEN(STR(?x)) AS ?k) FILTER(?v > 3) }", "GROUP BY ?k")


@pytest.mark.parametrize("path", ["rows", "columnar"])
@pytest.mark.parametrize("query", [PLAIN, GROUPED], ids=["plain", "grouped"])
def test_dictionary_stays_bounded_with_fresh_iris_per_event(path, query):
    """5,000 elements, each naming a fresh sensor and a fresh reading, two per time unit,
    through a RANGE 10 STEP 5 window: the live state holds at most 20 elements (40 fresh
    terms), so with collections from 1,000 terms (ten of them) the dictionary never holds
    more than those 1,000 and one advance's new terms, while without forgetting it holds
    every one of the 10,000 fresh terms (answers the same). Grouped: the caches of the
    readings' numeric values and of the BIND's and FILTER's values (keyed by ids) keep none
    alive. (20,000 elements took 38 s of the four cases for the same check.)"""
    text, elements = _fresh_sensors(query, 5_000)
    peaks, produced = {}, {}
    for forget in (1000, None):
        with engine_path(path):
            s = Session(forget_terms=forget)
            s.register(text, "q")
        peak, made = 0, []
        for e in elements:
            made += s.push(e)
            peak = max(peak, s.state_size()["dictionary_terms"])
        made += s.flush()
        peaks[forget], produced[forget] = peak, made
    assert produced[1000] == produced[None] and len(produced[None]) > 0
    assert peaks[None] >= 10_000 - 4  # the last time's two elements are still pending
    assert peaks[1000] <= 1000 + 40
    assert s.state_size()["forgotten_terms"] == 0


def test_a_collection_is_due_quiet_after_results_or_half_a_threshold_late() -> None:
    """min_terms 4 over one pinned term: due from 4 new terms when the run is settled
    (quiet after results), else from 4 + 2."""
    c = Codec()
    c.encode(ox.NamedNode("http://e/pinned"))
    forgetting = Forgetting(c, min_terms=4)
    seen = []
    for i in range(6):
        c.encode(ox.NamedNode(f"http://e/{i}"))
        seen.append((forgetting.due(settled=True), forgetting.due(settled=False)))
    assert seen == [(False, False)] * 3 + [(True, False), (True, False), (True, True)]


def test_a_collection_that_does_not_wait_is_due_at_its_threshold() -> None:
    """A Spark key's dictionary (``waits=False``) bounds its stored terms: due from 4 new
    terms over the pinned one, settled or not."""
    c = Codec()
    c.encode(ox.NamedNode("http://e/pinned"))
    forgetting = Forgetting(c, min_terms=4, waits=False)
    seen = []
    for i in range(5):
        c.encode(ox.NamedNode(f"http://e/{i}"))
        seen.append((forgetting.due(settled=True), forgetting.due(settled=False)))
    assert seen == [(False, False)] * 3 + [(True, True), (True, True)]


def test_collections_run_in_the_quiet_advance_after_results() -> None:
    """Two elements per time unit, each with a fresh sensor and reading, through a RANGE 10
    STEP 5 window: an advance reports at every fifth time. With collections from 100 terms
    (due quiet after results, or 50 terms late), every collection runs in the advance right
    after a reporting one (the first element of a new time releases the time before),
    none delays a result, and the dictionary stays within 100 + 50 terms and an advance's."""
    text, elements = _fresh_sensors(PLAIN, 2_000)
    s = Session(forget_terms=100)
    s.register(text, "q")
    reported, collections, peak = False, 0, 0
    for number, e in enumerate(elements):
        before = s.state_size()["forgotten_terms"]
        made = s.push(e)
        peak = max(peak, s.state_size()["dictionary_terms"])
        if s.state_size()["forgotten_terms"] > before:
            collections += 1
            assert not made and reported, number
        if number % 2 == 0:  # an advance: the time before was released
            reported = bool(made)
    assert collections > 20 and peak <= 150 + 4


@pytest.mark.parametrize("path", ["rows", "columnar"])
def test_no_collection_holds_results_a_batch_made_before_it(monkeypatch, path) -> None:
    """The stream above given seven elements at a time (``push_many``, as a paced or live
    run takes what arrived while it was busy): results made by one of a batch's instants
    reach the caller only when the call returns, so no collection may run later in that
    call (on W3 one held a batch's results 10-20 ms). Every collection still runs, in the
    first quiet advance after the results were returned."""
    text, elements = _fresh_sensors(PLAIN, 2_000)
    made_in_call: list[object] = []
    with engine_path(path):
        s = Session(forget_terms=100, on_result=made_in_call.append)
        s.register(text, "q")
    assert s.columnar == (path == "columnar")  # push_many's two ways: rows, one batch
    collect = s.forgetting.collect
    collections = []

    def collecting(*args, **kwargs):
        collections.append(len(made_in_call))
        return collect(*args, **kwargs)

    monkeypatch.setattr(s.forgetting, "collect", collecting)
    total = 0
    for start in range(0, len(elements), 7):
        made_in_call.clear()
        total += len(s.push_many(elements[start:start + 7]))
    one_by_one = Session(forget_terms=None)
    one_by_one.register(text, "q")
    assert total == sum(len(one_by_one.push(e)) for e in elements) and len(collections) > 20
    assert collections == [0] * len(collections)


def _fresh_sensors(query: tuple[str, str, str], count: int) -> tuple[str, list[StreamElement]]:
    """The query over a RANGE 10 STEP 5 window, and ``count`` elements, two per time unit,
    each naming a fresh sensor and a fresh reading."""
    select, where, group = query
    text = f"""PREFIX : <{EX}>
    REGISTER RSTREAM :out AS {select}
    FROM NAMED WINDOW :w ON :s1 [RANGE 10 STEP 5]
    WHERE {{ WINDOW :w {where} }} {group}"""
    p, decimal = ox.NamedNode(EX + "value"), ox.NamedNode(XSD + "decimal")
    return text, [
        StreamElement(S1, f"_:g{i}", i // 2, i // 2,
                      (ox.Triple(ox.NamedNode(f"{EX}sensor{i}"), p,
                                 ox.Literal(f"{i}.5", datatype=decimal)),))
        for i in range(count)
    ]


SEQ_CONSTRUCT = f"""PREFIX : <{EX}>
CONSTRUCT {{ _:m :from ?x ; :to ?z }} WITHIN 4 FROM STREAM S1 <{S1}>
WHERE {{ SEQ(A ; B) DEFINE GPM A ON S1 {{ ?x :start ?y }} DEFINE GPM B ON S1 {{ ?y :stop ?z }} }}"""


def test_a_resumed_session_gives_ids_after_the_forgotten_ones(always):
    """Elements `:xi :start :yi`, `:y(i-1) :stop :zi`, `:xi :noise :zi` at times 0, 1, 2, ...:
    no GPM matches the noise, so its terms, the highest ids given, are forgotten once it is
    taken (here by a watermark, so that no element waits to be encoded). A session resumed
    from a snapshot taken then must label CONSTRUCT's blank nodes (by the highest id given)
    as the session that ran through does: the snapshot carries that id (``last_id``), not
    only the rows of the terms still held."""
    names = [("x{i}", "start", "y{i}"), ("y{j}", "stop", "z{i}"), ("x{i}", "noise", "z{i}")]
    elements = []
    for i in range(30):
        s, p, o = (EX + n.format(i=i, j=i - 1) for n in names[i % 3])
        triple = ox.Triple(ox.NamedNode(s), ox.NamedNode(p), ox.NamedNode(o))
        elements.append(StreamElement(S1, f"_:g{i}", i, i, (triple,)))
    through = Session()
    through.register(SEQ_CONSTRUCT, "q")
    expected = [r for e in elements for r in through.push(e)] + through.flush()
    assert len(expected) == 10
    for cut in (5, 14, 26):  # the last element pushed is a noise, released by a watermark
        first = Session()
        first.register(SEQ_CONSTRUCT, "q")
        got = [r for e in elements[:cut] for r in first.push(e)]
        got += first.watermark(elements[cut - 1].time)
        assert max(i for i, _ in first.dictionary.rows()) < first.dictionary.last_id
        second = Session()
        second.register(SEQ_CONSTRUCT, "q")
        second.restore(json.loads(json.dumps(first.snapshot())))
        got += [r for e in elements[cut:] for r in second.push(e)] + second.flush()
        assert got == expected


def test_a_session_whose_caller_collects_after_batches_never_collects_inside_them() -> None:
    """With ``forget_after_batches`` (a Spark key, whose host collects between slices of
    a step) ``push_columns`` leaves the dictionary alone however far past its threshold,
    and a collection once the batches are gone forgets what the window let go; without
    it the session collects inside its pushes (keeping the batch it advances over).
    4,000 fresh sensors, two per time unit, through a RANGE 10 STEP 5 window (at most 40
    live fresh terms), pushed 1,000 at a time."""
    text, elements = _fresh_sensors(("SELECT ?s ?v", "{ ?s :value ?v }", ""), 4_000)
    sessions = {}
    for after in (True, False):
        with engine_path("columnar-always"):
            s = Session(forget_terms=500, forget_when_quiet=False, forget_after_batches=after)
            s.register(text, "q")
        for first in range(0, len(elements), 1000):  # no name holds a pushed slice after
            s.push_columns(ColumnBatch.from_elements(elements[first : first + 1000],
                                                     s.dictionary))  # fmt: skip
        sessions[after] = s
    assert sessions[False].state_size()["forgotten_terms"] > 0
    kept = sessions[True]
    assert kept.state_size()["forgotten_terms"] == 0 and len(kept.dictionary) >= 8_000
    assert kept.forgetting is not None
    kept.forgetting.collect([kept, *ColumnBatch.alive.values()])
    assert len(kept.dictionary) < 500
