"""Queries with several MATCHes (joined, or in OPTIONAL / UNION branches): each MATCH gives
every match it has at an instant, and a solution is pushed once, when the last match it
holds ends (docs/semantics.md). The engine's answer is the reference's on generated
RSEP-QL and CQELS-CEP patterns, and the join is derived by hand once."""

from __future__ import annotations

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.algebra.query import Unsupported
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.runtime.local import run
from sepia.semantics import evaluate

from ..generators import EVENTS, EX, S1, S2, declared, event_head, event_windows, streams
from ..support import assert_agrees, assert_resumes

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large]


@st.composite
def event_pattern(draw) -> str:
    """One RSEP-QL event pattern: an EVENT, a SEQ of two, or FIRST / LAST of one."""
    first, second = draw(st.lists(st.sampled_from(EVENTS), min_size=2, max_size=2))
    return draw(st.sampled_from([first, f"{first} SEQ {second}", f"LAST({first})",
                                 f"FIRST({first}) SEQ {second}"]))  # fmt: skip


@st.composite
def several_match_queries(draw) -> str:
    """Two or three MATCHes joined, one in an OPTIONAL or UNION branch, with or without
    background data, under SELECT, ASK or CONSTRUCT and each streaming operator."""
    a, b, c = (f"MATCH {{ {draw(event_pattern())} }}" for _ in range(3))
    body = draw(st.sampled_from([
        f"{a} {b}", f"{a} {b} {c}", f"{a} OPTIONAL {{ {b} }}", f"{{ {a} }} UNION {{ {b} }}",
        f"{a} {b} ?y :r ?q .", f"{{ {a} }} UNION {{ {b} {c} }}",
    ]))  # fmt: skip
    windows = declared(draw, ["w1", "w2"], event_windows)
    head = event_head(draw)
    policy = draw(st.sampled_from(["", "", "EVENT POLICY NAIVE"]))
    return (
        f"PREFIX : <{EX}>\n{head}\n{windows}\n{policy}\nWHERE {{ {body} }}"
    )


@settings(max_examples=250, deadline=None, suppress_health_check=CHECKS)
@given(several_match_queries(), streams())
def test_several_matches_agree_with_reference(text, data):
    assert_agrees(text, data)


@settings(max_examples=40, deadline=None, suppress_health_check=CHECKS)
@given(several_match_queries(), streams(), st.data())
def test_several_matches_resume_from_a_snapshot(text, data, split):
    """Each MATCH's matches are derived from the windows, which the snapshot holds."""
    assert_resumes(text, data, split.draw(st.integers(0, sum(len(es) for es in data.values()))))


def test_a_new_match_joins_the_earlier_matches_of_the_other():
    """w1 (RANGE 10): a p b at 1, b q c at 3, so the SEQ matches [1, 3]; w2: alarms on a at
    2 and 5. The SEQ's match and the alarm at 2 end by 3: pushed at 3 over [1, 3]; the
    alarm at 5 joins the SEQ's earlier match: pushed at 5 over [1, 5]."""
    triple = lambda s, p, o: ox.Triple(*(ox.NamedNode(EX + x) for x in (s, p, o)))  # noqa: E731
    data = {
        S1: [StreamElement(S1, "_:g0", 1, 1, (triple("a", "p", "b"),)),
             StreamElement(S1, "_:g1", 3, 3, (triple("b", "q", "c"),))],
        S2: [StreamElement(S2, "_:h0", 2, 2, (triple("a", "alarm", "x"),)),
             StreamElement(S2, "_:h1", 5, 5, (triple("a", "alarm", "y"),))],
    }  # fmt: skip
    query = parse_query(
        f"PREFIX : <{EX}>\nSELECT ?a\nFROM NAMED WINDOW :w1 ON :s1 [RANGE 10 STEP 1]\n"
        "FROM NAMED WINDOW :w2 ON :s2 [RANGE 10 STEP 1]\nWHERE { MATCH { EVENT :w1 { ?x :p ?y }"
        " SEQ EVENT :w1 { ?y :q ?z } } MATCH { EVENT :w2 { ?x :alarm ?a } } }"
    )
    expected = [(3, (1, 3), "x"), (5, (1, 5), "y")]
    for results in (evaluate(query, data), list(run([("q", query)], data, None))):
        got = [(r.t, r.interval, r.values["a"].value.removeprefix(EX)) for r in results]
        assert got == expected


def test_a_spaseq_sequence_among_several_matches_is_refused():
    query = parse_query(
        f"PREFIX : <{EX}>\nSELECT * FROM STREAM S1 :s1 FROM NAMED WINDOW :w1 ON :s1 [RANGE 5]\n"
        "WHERE { { SEQ(A, B) DEFINE GPM A ON S1 { ?x :p ?y } DEFINE GPM B ON S1 { ?y :q ?z } }"
        " MATCH { EVENT :w1 { ?x :p ?v } } }"
    )
    with pytest.raises(Unsupported, match="SPAseq sequence among several MATCHes"):
        list(run([("q", query)], {S1: []}, None))
