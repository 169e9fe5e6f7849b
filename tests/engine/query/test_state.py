"""Engine state is rows: a snapshot written as JSON and read back resumes the run exactly;
and the state the engine holds stays bounded over a long stream."""

from __future__ import annotations

import json
from collections import Counter

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.rdf.stream import StreamElement, StreamSet
from sepia.runtime.local import Session

from ..generators import EX, S1, S2, queries, sequence_queries, streams
from ..support import background, engine_path


def session(text: str) -> Session:
    s = Session(background())
    s.register(text, "q")
    return s


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(queries(), sequence_queries()), streams(), st.integers(0, 20))
def test_snapshot_as_json_resumes_exactly(text, data, cut):
    elements = list(StreamSet(data).merged())
    whole = session(text)
    expected = [r for e in elements for r in whole.push(e)] + whole.flush()

    first = session(text)
    got = [r for e in elements[:cut] for r in first.push(e)]
    saved = json.loads(json.dumps(first.snapshot()))
    second = session(text)
    second.restore(saved)
    got += [r for e in elements[cut:] for r in second.push(e)] + second.flush()
    assert Counter(got) == Counter(expected)  # rows of one evaluation come in any order
    assert [r.t for r in got] == [r.t for r in expected]


@pytest.mark.parametrize("path", ["rows", "columnar"])
def test_state_stays_bounded_over_a_long_stream(path):
    """20,000 elements, two per time unit, through a RANGE 10 STEP 5 window: it never holds
    more than the 2 * 10 elements of one window, IStream keeps one answer (and the row
    engine's delta evaluation the mappings of one window's join; the columnar core keeps
    none), and the dictionary stops growing once every term has been seen."""
    text = f"""PREFIX : <{EX}>
    REGISTER ISTREAM :out AS SELECT ?x ?y ?z
    FROM NAMED WINDOW :w ON :s1 [RANGE 10 STEP 5]
    WHERE {{ WINDOW :w {{ ?x :p ?y . ?y :p ?z }} }}"""
    with engine_path(path):
        s = session(text)
    node = [ox.NamedNode(f"{EX}n{i}") for i in range(50)]
    p = ox.NamedNode(EX + "p")
    peak: dict[str, int] = {}
    produced = 0
    for i in range(20_000):
        triple = ox.Triple(node[i % 50], p, node[(i * 7 + 3) % 50])
        produced += len(s.push(StreamElement(S1, f"g{i}", i // 2, i // 2, (triple,))))
        for key, value in s.state_size().items():
            peak[key] = max(peak.get(key, 0), value)
        if i == 100:  # every term of the stream has been seen
            terms = len(s.dictionary)
    assert produced > 0
    assert peak["window_elements"] <= 20
    assert peak["window_triples"] <= 20
    assert peak["previous_answer"] <= 20 * 20
    if path == "rows":
        assert 0 < peak["maintained_rows"] <= 20 * 20  # delta evaluation's join, counted
    else:
        assert peak["maintained_rows"] == 0
    assert peak["dictionary_terms"] == terms


@pytest.mark.parametrize("path", ["rows", "columnar"])
def test_aggregate_state_stays_bounded_over_a_long_stream(path):
    """A GROUP BY over 20,000 elements, two per time unit, through a RANGE 10 STEP 5
    window: the row engine maintains it (engine.aggregates): its match sets hold at most
    the window's 20 triples, its state a row per group and per value of MAX's multisets
    (at most 20 + 20); the columnar core recomputes it from the window and keeps none."""
    text = f"""PREFIX : <{EX}>
    REGISTER RSTREAM :out AS SELECT ?x (AVG(?y) AS ?a) (MAX(?y) AS ?m)
    FROM NAMED WINDOW :w ON :s1 [RANGE 10 STEP 5]
    WHERE {{ WINDOW :w {{ ?x :p ?y }} }} GROUP BY ?x"""
    with engine_path(path):
        s = session(text)
    node = [ox.NamedNode(f"{EX}n{i}") for i in range(50)]
    p, integer = ox.NamedNode(EX + "p"), ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")
    peak: dict[str, int] = {}
    produced = 0
    for i in range(20_000):
        triple = ox.Triple(node[i % 50], p, ox.Literal(str(i % 97), datatype=integer))
        produced += len(s.push(StreamElement(S1, f"g{i}", i // 2, i // 2, (triple,))))
        for key, value in s.state_size().items():
            peak[key] = max(peak.get(key, 0), value)
    assert produced > 0
    assert peak["window_triples"] <= 20
    if path == "rows":
        assert 0 < peak["maintained_rows"] <= 20
        assert 0 < peak["aggregate_state"] <= 40
    else:
        assert peak["maintained_rows"] == peak["aggregate_state"] == 0


def test_maintained_optional_and_minus_state_stays_bounded():
    """Delta evaluation of OPTIONAL and MINUS keeps both inputs of each (and the joins'
    mappings): over 6,000 elements, two per time unit on two streams, in RANGE 4 content
    change windows, that stays within the rows of the present windows: w1 and w2 each hold
    at most 2 * 4 one-triple elements, so each of the three window joins holds at most 8
    mappings, OPTIONAL's two inputs 8 + 8 rows, MINUS's inputs OPTIONAL's answer (at most
    8 * 8) and 8."""
    text = f"""PREFIX : <{EX}>
    REGISTER ISTREAM :out AS SELECT *
    FROM NAMED WINDOW :w1 ON :s1 [RANGE 4] FROM NAMED WINDOW :w2 ON :s2 [RANGE 4]
    REPORT ON CONTENT CHANGE
    WHERE {{ WINDOW :w1 {{ ?x :p ?y }} OPTIONAL {{ WINDOW :w2 {{ ?y :p ?z }} }}
             MINUS {{ WINDOW :w2 {{ ?x :p ?x }} }} }}"""
    s = session(text)
    node = [ox.NamedNode(f"{EX}n{i}") for i in range(30)]
    p = ox.NamedNode(EX + "p")
    peak, produced = 0, 0
    for i in range(3_000):
        for stream, (a, b) in ((S1, (i % 30, (i * 7 + 3) % 30)), (S2, ((i * 11) % 30, i % 7))):
            triple = ox.Triple(node[a], p, node[b])
            element = StreamElement(stream, f"g{i}", i // 2, i // 2, (triple,))
            produced += len(s.push(element))
        peak = max(peak, s.state_size()["maintained_rows"])
    assert produced > 0
    assert 0 < peak <= 3 * 8 + (8 + 8) + (8 * 8 + 8)


def test_runs_expire_with_within():
    """A skip-till-any sequence keeps every A as a run, but WITHIN 10 drops runs older than
    10 time units: over 5,000 time units the buffer never holds more than one run per start
    time in [t - 10, t] (11 of them) plus the initial run."""
    text = f"""PREFIX : <{EX}>
    SELECT * WITHIN 10 FROM STREAM S1 :s1 FROM STREAM S2 :s2
    WHERE {{ SEQ(A : B) DEFINE GPM A ON S1 {{ ?x :p ?y }} DEFINE GPM B ON S2 {{ ?y :q ?z }} }}"""
    s = session(text)
    node = [ox.NamedNode(f"{EX}n{i}") for i in range(7)]
    p, q = ox.NamedNode(EX + "p"), ox.NamedNode(EX + "q")
    peak = produced = 0
    for t in range(5_000):
        a = StreamElement(S1, f"a{t}", t, t, (ox.Triple(node[t % 7], p, node[(t + 1) % 7]),))
        b = StreamElement(S2, f"b{t}", t, t, (ox.Triple(node[t % 7], q, node[0]),))
        produced += len(s.push(a)) + len(s.push(b))
        peak = max(peak, s.state_size()["runs"])
    assert produced > 0
    assert peak == 12


def test_max_runs_bounds_skip_till_any_and_counts_what_it_drops():
    """SEQ(A : B) without WITHIN keeps one run per A forever; with max_runs=5 the buffer
    holds the 5 newest (plus the initial run), 100 - 5 are counted as dropped, and a B then
    completes only the runs kept."""
    text = f"""PREFIX : <{EX}>
    SELECT * FROM STREAM S1 :s1 FROM STREAM S2 :s2
    WHERE {{ SEQ(A : B) DEFINE GPM A ON S1 {{ ?x :p ?y }} DEFINE GPM B ON S2 {{ ?y :q ?z }} }}"""
    s = Session(background(), max_runs=5)
    s.register(text, "q")
    p, q, o = (ox.NamedNode(EX + x) for x in "pqo")
    for t in range(100):
        s.push(StreamElement(S1, f"a{t}", t, t, (ox.Triple(ox.NamedNode(f"{EX}n{t}"), p, o),)))
    s.push(StreamElement(S2, "b", 100, 100, (ox.Triple(o, q, o),)))
    results = s.flush()
    assert s.state_size()["dropped_runs"] == 95
    assert sorted(r.interval[0] for r in results) == [95, 96, 97, 98, 99]
