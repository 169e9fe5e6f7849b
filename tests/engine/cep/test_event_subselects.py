"""Sub-SELECTs inside event patterns (an RSEP-QL EVENT, a SPAseq GPM): evaluated over the
event's graph alone, as SPARQL 1.1 section 18.6 evaluates a pattern inside GRAPH (the
reference does since tests/semantics/test_rsepql.py's fix). The engine hands them to
pyoxigraph over the event's graph (``Fallback``); generated queries agree with the
reference."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..generators import EVENTS, EX, declared, event_windows, streams
from ..support import assert_agrees

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large]
SUBSELECTS = [
    "{ SELECT ?x (COUNT(?y) AS ?n) WHERE { ?x :p ?y } GROUP BY ?x }",
    "{ SELECT ?x ?y WHERE { ?x ?i ?y } ORDER BY DESC(?y) LIMIT 1 }",
    "{ SELECT DISTINCT ?y WHERE { ?y ?k ?z } }",
    "?x :p ?y { SELECT ?x (MAX(?v) AS ?m) WHERE { ?x ?j ?v } GROUP BY ?x }",
    "{ SELECT ?x ?y WHERE { ?x :p ?y GRAPH :g { ?y :r ?z } } }",
]


@st.composite
def subselect_queries(draw) -> str:
    """An EVENT holding a sub-SELECT, alone or in a SEQ with another EVENT, or a SPAseq GPM
    holding one in a sequence."""
    inner = draw(st.sampled_from(SUBSELECTS))
    window = draw(st.sampled_from(["w1", "w2"]))
    event = f"EVENT :{window} {{ {inner} }}"
    other = draw(st.sampled_from(EVENTS))
    windows = declared(draw, ["w1", "w2"], event_windows)
    rsepql = draw(st.sampled_from([event, f"{event} SEQ {other}", f"{other} SEQ {event}"]))
    spaseq = (
        f"SEQ(A {draw(st.sampled_from([',', ';', ':']))} B) DEFINE GPM A ON S1 {{ {inner} }} "
        "DEFINE GPM B ON S2 { ?y ?k ?z }"
    )
    body = draw(st.sampled_from([f"MATCH {{ {rsepql} }}", spaseq]))
    return (
        f"PREFIX : <{EX}>\nSELECT *\nFROM STREAM S1 :s1\nFROM STREAM S2 :s2\n{windows}\n"
        f"WHERE {{ {body} }}"
    )


@settings(max_examples=150, deadline=None, suppress_health_check=CHECKS)
@given(subselect_queries(), streams())
def test_subselects_in_events_agree_with_reference(text, data):
    assert_agrees(text, data, renamed=True)
