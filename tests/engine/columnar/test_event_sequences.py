"""CQELS-CEP / RSEP-QL chains of SEQs on the columnar core (``columnar.event_sequences``)
against the reference evaluator: drawn sequences of 1-3 basic event patterns (a trailing
negated one is NO_TAIL) over sliding and landmark windows, with streams planted to match
(several matches, equal times, elements leaving the window), through the push path, with
interval-stamped elements, and through batches cut anywhere (then in the row engine's
order too); a hand-derived case of eviction; and what stays on the row engine."""

from __future__ import annotations

import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.engine.columnar import ColumnBatch
from sepia.engine.columnar.event_sequences import EventSequence
from sepia.engine.hosts.engine_path import explain
from sepia.engine.query.continuous import ContinuousQuery
from sepia.rdf.stream import StreamElement

from ..cep.test_differential_cep import interval_streams
from ..generators import EX, S1, answering
from ..support import (
    assert_agrees,
    assert_columnar_agrees,
    cut_anywhere,
    engine_path,
    session_of,
)

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

ELEMENTS = ["{ ?x :p ?y }", "{ ?y ?k ?z }", "{ ?x :q ?w }", "{ ?x ?j ?v }",
            "{ ?x :p ?y FILTER(?y != :c) }"]
WINDOWS = st.one_of(
    st.builds(lambda a, b, t0: f"[RANGE {a} STEP {b} START {t0}]",
              st.integers(3, 12), st.integers(1, 3), st.integers(0, 3)),
    st.builds(lambda a: f"[RANGE {a}]", st.integers(2, 8)),
    st.builds(lambda t0: f"[LANDMARK FROM {t0}]", st.integers(0, 4)),
)


@st.composite
def chains(draw) -> str:
    """A covered CQELS-CEP query: ``SEQ`` of 1-3 elements in one window (a trailing
    negated one, always after one alone: NO_TAIL), or ``SEQ(:w1, :w3)`` over two windows
    on the same stream; a join with the background sometimes; SELECT * or a projection."""
    if draw(st.booleans()):
        parts = draw(st.lists(st.sampled_from(ELEMENTS), min_size=1, max_size=3))
        if len(parts) == 1 or draw(st.integers(0, 3)) == 0:
            parts.append("!{ ?x :q ?y }")
        pattern = f"WINDOW :w1 {{ SEQ({', '.join(parts)}) }}"
    else:
        pattern = "SEQ(:w1, :w3) WINDOW :w1 { ?x :p ?y } WINDOW :w3 { ?x ?k ?z }"
    declared = "\n".join(f"FROM NAMED WINDOW :{w} ON :s1 {draw(WINDOWS)}" for w in ("w1", "w3"))
    outside = draw(st.sampled_from(["", "", "?x :r ?q .", "?x :r ?q FILTER(?q != :c)"]))
    head = draw(st.sampled_from(["SELECT *", "SELECT ?x", "SELECT ?y"]))
    return f"PREFIX : <{EX}>\n{head}\n{declared}\nWHERE {{ {pattern} {outside} }}"


@settings(max_examples=200, deadline=None, suppress_health_check=CHECKS)
@given(answering(chains()))
def test_event_sequences_agree_with_reference(case):
    """The push path (one instant at a time) gives the reference's answer, in time order."""
    text, data = case
    assert_columnar_agrees(text, data, EventSequence)


@settings(max_examples=100, deadline=None, suppress_health_check=CHECKS)
@given(answering(chains(), interval_streams()))
def test_interval_stamped_elements_agree_with_reference(case):
    """Elements stamped with an interval: a window shows one by its end, a match starts
    where its first element starts and each element ends before the next one starts."""
    text, data = case
    with engine_path("columnar-always"):
        assert_agrees(text, data)


@settings(max_examples=200, deadline=None, suppress_health_check=CHECKS)
@given(answering(chains()), st.lists(st.integers(0, 20), max_size=4))
def test_batches_cut_anywhere_agree_with_reference(case, cuts):
    """``push_columns`` with the input cut at arbitrary elements gives the reference's
    answer, at the row engine's instants in its order (within an instant the row engine
    orders matches of one interval by their ids, which depend on the order terms were
    encoded in: a batch encodes them otherwise than the push path)."""
    text, data = case
    got, rows = cut_anywhere(text, data, cuts)
    assert [(r.t, r.interval) for r in got] == [(r.t, r.interval) for r in rows], text


def _element(t: int, s: str, o: str) -> StreamElement:
    triple = ox.Triple(ox.NamedNode(EX + s), ox.NamedNode(EX + "p"), ox.NamedNode(EX + o))
    return StreamElement(S1, f"_:g{t}", t, t, (triple,))


def test_an_element_out_of_the_window_starts_no_match():
    """RANGE 5 shows (t - 5, t]: at 4 the pair (1, 4); at 8 the pair (4, 8) only, 1 having
    left at 6; at 9 nothing, ?y differing (worked out by hand)."""
    text = (f"PREFIX : <{EX}> SELECT ?x FROM NAMED WINDOW :w ON :s1 [RANGE 5] "
            "WHERE { WINDOW :w { SEQ({ ?x :p ?y }, { ?x :p ?y }) } }")
    elements = [_element(1, "a", "b"), _element(4, "a", "b"), _element(8, "a", "b"),
                _element(9, "a", "c")]
    session = session_of(text)
    assert isinstance(session.queries[0], EventSequence)
    got = session.push_columns(ColumnBatch.from_elements(elements, session.dictionary))
    got += session.flush()
    assert [(r.t, r.interval) for r in got] == [(4, (1, 4)), (8, (4, 8))]


def test_what_is_not_covered_stays_on_the_row_engine():
    """SEQ_WO, NO_HEAD and count windows are the row engine's, and explain says why."""
    uncovered = [
        ("WINDOW :w { SEQ({ ?x :p ?y }, !{ ?x :q ?y }, { ?x :p ?z }) }", "[RANGE 5]",
         "SEQ_WO"),
        ("WINDOW :w { SEQ(!{ ?x :q ?y }, { ?x :p ?z }) }", "[RANGE 5]", "SEQ_WO"),
        ("WINDOW :w { SEQ({ ?x :p ?y }, { ?x :p ?z }) }", "[ELEMENTS 3]", "sliding or landmark"),
    ]
    for pattern, window, reason in uncovered:
        text = (f"PREFIX : <{EX}> SELECT * FROM NAMED WINDOW :w ON :s1 {window} "
                f"WHERE {{ {pattern} }}")
        session = session_of(text)
        assert isinstance(session.queries[0], ContinuousQuery), text
        with engine_path("columnar-always"):
            shown = explain(session.queries[0].physical, session.dictionary)
        assert "path: rows" in shown and reason in shown, shown
