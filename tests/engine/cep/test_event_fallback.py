"""Event patterns whose graph pattern the engine hands to pyoxigraph (property paths,
EXISTS over one event's graph, paths over background data in a GPM): the
sub-pattern reads the graph of the event being matched, as the reference's
``GRAPH ?element { P }`` does. Differential tests on RSEP-QL, CQELS-CEP and SPAseq queries
built from such patterns."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..generators import EX, event_windows, narrow_triples, streams
from ..support import assert_agrees

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large]
PATTERNS = [
    "?x :p+ ?y",
    "?x (:p|:q) ?y",
    "?x :p/:q ?y",
    "?x :p ?y FILTER EXISTS { ?y :q ?w }",
    "?x ?k ?y FILTER NOT EXISTS { ?y :p ?x }",
    "?x :p ?y GRAPH :g { ?y :r* ?z }",
    "?x :q ?y OPTIONAL { ?y :p+ ?z }",
    "?y :p ?z",
]


@st.composite
def rsepql_queries(draw) -> str:
    """RSEP-QL: two or three EVENTs in SEQ over the two windows, one pattern each."""
    count = draw(st.integers(2, 3))
    events = [
        f"EVENT :w{draw(st.integers(1, 2))} {{ {draw(st.sampled_from(PATTERNS))} }}"
        for _ in range(count)
    ]
    declared = "\n".join(
        f"FROM NAMED WINDOW :w{i} ON :s{i} {draw(event_windows)}" for i in (1, 2)
    )
    return (
        f"PREFIX : <{EX}>\nSELECT *\n{declared}\n"
        f"WHERE {{ MATCH {{ {' SEQ '.join(events)} }} }}"
    )


@st.composite
def spaseq_queries(draw) -> str:
    """SPAseq: two or three GPMs in a sequence, with the fallback patterns in them."""
    names = ["A", "B", "C"][: draw(st.integers(2, 3))]
    expression = names[0]
    for name in names[1:]:
        modifier = draw(st.sampled_from(["", "", "+", "?"]))
        expression += f" {draw(st.sampled_from([',', ';', ':']))} {name}{modifier}"
    defines = "\n".join(
        f"DEFINE GPM {n} ON S{draw(st.integers(1, 2))} {{ {draw(st.sampled_from(PATTERNS))} }}"
        for n in names
    )
    within = draw(st.sampled_from(["", "WITHIN 10"]))
    return (
        f"PREFIX : <{EX}>\nSELECT * {within}\nFROM STREAM S1 :s1\nFROM STREAM S2 :s2\n"
        f"WHERE {{ SEQ({expression})\n{defines} }}"
    )


@settings(max_examples=150, deadline=None, suppress_health_check=CHECKS)
@given(st.one_of(rsepql_queries(), spaseq_queries()), streams(narrow_triples))
def test_event_patterns_with_fallback_sub_patterns_agree_with_the_reference(text, data):
    assert_agrees(text, data, renamed=True)
