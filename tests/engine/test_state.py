"""Engine state is rows: a snapshot written as JSON and read back resumes the run exactly;
and the state the engine holds stays bounded over a long stream."""

from __future__ import annotations

import json

import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.rdf.stream import StreamElement, StreamSet
from sepia.runtime.local import Session

from .generators import EX, S1, queries, streams
from .test_differential import background


def session(text: str) -> Session:
    s = Session(background())
    s.register(text, "q")
    return s


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queries(), streams(), st.integers(0, 20))
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
    assert got == expected


def test_state_stays_bounded_over_a_long_stream():
    """20,000 elements, two per time unit, through a RANGE 10 STEP 5 window: it never holds
    more than the 2 * 10 elements of one window, IStream keeps one answer, and the dictionary
    stops growing once every term has been seen."""
    text = f"""PREFIX : <{EX}>
    REGISTER ISTREAM :out AS SELECT ?x ?y ?z
    FROM NAMED WINDOW :w ON :s1 [RANGE 10 STEP 5]
    WHERE {{ WINDOW :w {{ ?x :p ?y . ?y :p ?z }} }}"""
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
    assert peak["dictionary_terms"] == terms
