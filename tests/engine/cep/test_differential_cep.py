"""Differential tests for the CEP dialects issue #5 point 4 brought into the engine:
EP-SPARQL (SEQ, EQUALS, OPTIONALSEQ, EQUALSOPTIONAL, UNION of groups, BGPs over triple
occurrences from different elements, getDURATION() / getSTARTTIME() / getENDTIME(), streams
with interval-stamped elements) and CQELS-CEP (triple sequence patterns inside a window with
a negated head, middle or tail element, paths with nested tests in the elements, and event
clauses over windows), and interval-stamped elements under RSEP-QL EVENT and CQELS-CEP
windows. Each compares the
engine with the reference evaluator on generated streams (equal times, bursts, gaps) and
queries of the family; snapshots taken mid-stream must resume exactly."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.rdf.stream import StreamElement

from ..generators import (
    EX,
    S1,
    S2,
    answering,
    event_queries,
    event_windows,
    gaps,
    narrow_triples,
    partition_clause,
    streams,
    triples,
)
from ..support import assert_agrees, assert_resumes

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large]


# --- EP-SPARQL ------------------------------------------------------------------------

SPANS = (0, 0, 0, 1, 3, 6)
"""How long an interval-stamped element lasts (half of them are points)."""


@st.composite
def interval_stream(
    draw, iri: str, min_size: int = 0, max_size: int = 7, content=triples
) -> list[StreamElement]:
    """Elements of one stream in arrival order (by end), some stamped with an interval
    [end - d, end] rather than a point, their triples drawn from ``content``."""
    end = draw(st.integers(0, 3))
    elements = []
    for number in range(draw(st.integers(min_size, max_size))):
        end += draw(gaps) if number else 0
        start = max(0, end - draw(st.sampled_from(SPANS)))
        graph = draw(st.lists(content, min_size=0, max_size=3, unique=True))
        elements.append(StreamElement(iri, f"_:g{number}", start, end, tuple(graph)))
    return elements


@st.composite
def interval_streams(draw, content=triples) -> dict[str, list[StreamElement]]:
    return {S1: draw(interval_stream(S1, min_size=2, content=content)),
            S2: draw(interval_stream(S2, content=content))}


GROUPS = [
    "{ ?x :p ?y }",
    "{ ?y ?k ?z }",
    "{ ?x :q ?w FILTER(?w != :c) }",
    "{ ?x ?j ?v . ?v :p ?n }",  # two occurrences, possibly of different elements
    "{ ?u ?i ?n FILTER(isLiteral(?n)) }",
    "{ { ?x :p ?y } UNION { ?x :q ?y } }",
]
OPERATORS = ["SEQ", "SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL", "UNION"]
CONDITIONS = [
    "getDURATION() < 6",
    "getSTARTTIME() > 2",
    "getENDTIME() - getSTARTTIME() >= 1 && ?x != :a",
    "getDURATION() <= 10 && getENDTIME() > 4",
]


@st.composite
def epsparql_queries(draw, partitioned: bool = False, policies: tuple[str, ...] = ("",)) -> str:
    """An EP-SPARQL query: 2-3 groups joined by its binary operators (left-associative),
    with a FILTER over the intervals sometimes (and with ``partitioned``, PARTITION BY; an
    EVENT POLICY drawn from ``policies``)."""
    groups = draw(st.lists(st.sampled_from(GROUPS), min_size=2, max_size=3))
    pattern = groups[0]
    for i, group in enumerate(groups[1:]):
        operators = OPERATORS if i else OPERATORS[:-1]  # UNION alone is no event pattern
        pattern += f" {draw(st.sampled_from(operators))} {group}"
    condition = draw(st.sampled_from(["", "", *CONDITIONS]))
    filtered = f" FILTER({condition})" if condition else ""
    head = draw(st.sampled_from(["SELECT *", "SELECT *", "SELECT ?x ?y"]))
    partition = partition_clause(draw, groups) if partitioned else ""
    policy = draw(st.sampled_from(policies))
    return f"PREFIX : <{EX}>\n{head}\n{partition}\n{policy}\nWHERE {{ {pattern}{filtered} }}"


@settings(max_examples=250, deadline=None, suppress_health_check=CHECKS)
@given(epsparql_queries(), interval_streams())
def test_epsparql_agrees_with_reference(text, data):
    assert_agrees(text, data)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=CHECKS)
@given(epsparql_queries(), interval_streams())
def test_epsparql_agrees_with_reference_long(text, data):
    assert_agrees(text, data)


@settings(max_examples=40, deadline=None, suppress_health_check=CHECKS)
@given(epsparql_queries(), interval_streams(), st.data())
def test_epsparql_resumes_from_a_snapshot(text, data, split):
    """Every occurrence seen is a state row: a restored session rebuilds the BGPs' solutions."""
    size = sum(len(es) for es in data.values())
    assert_resumes(text, data, split.draw(st.integers(0, size)))


# --- CQELS-CEP ------------------------------------------------------------------------

ELEMENTS = [
    "{ ?x :p ?y }", "{ ?y ?k ?z }", "{ ?x :q ?w }", "{ ?x ?j ?v }", "{ ?u ?i ?n }",
    "{ ?x (:p/[:q])+ ?y }",  # a path with a nested test over one event's graph
    "{ ?x ([:q :a]/:p)* ?w }",
]


@st.composite
def triple_sequence(draw, longest: int = 3) -> str:
    """``WINDOW :w1 { SEQ({P1}, {P2}, ...) }``: 2 to ``longest`` elements, at most one
    negated (the negated one never first and last at once)."""
    parts = draw(st.lists(st.sampled_from(ELEMENTS), min_size=2, max_size=longest))
    negated = draw(st.sampled_from([None, None, *range(len(parts))]))
    parts = [f"!{p}" if i == negated else p for i, p in enumerate(parts)]
    return f"WINDOW :w1 {{ SEQ({', '.join(parts)}) }}"


@st.composite
def event_clause(draw) -> str:
    """``SEQ(:w1, !:w2, :w3)`` and its shorter forms over windows, each with one block."""
    blocks = {"w1": "?x :p ?y", "w2": draw(st.sampled_from(["?x ?j ?v", "?y :q ?z"])),
              "w3": draw(st.sampled_from(["?y ?k ?z", "?x :q ?w"]))}
    order = draw(st.sampled_from([
        ["w1", "w3"], ["w1", "!w2", "w3"], ["!w2", "w3"], ["w1", "!w2"], ["w1", "w2", "w3"],
    ]))
    names = [n.lstrip("!") for n in order]
    clause = ", ".join(f"!:{n[1:]}" if n.startswith("!") else f":{n}" for n in order)
    return f"SEQ({clause}) " + " ".join(f"WINDOW :{n} {{ {blocks[n]} }}" for n in names)


NAIVE_SOMETIMES = ("", "", "EVENT POLICY NAIVE")


@st.composite
def cqels_queries(
    draw, partitioned: bool = False, policies: tuple[str, ...] = NAIVE_SOMETIMES, longest: int = 3
) -> str:
    """A CQELS-CEP query over windows on two streams, optionally joined with background
    data outside the event pattern; an EVENT POLICY drawn from ``policies`` (and with
    ``partitioned``, PARTITION BY); triple sequences of up to ``longest`` elements."""
    pattern = draw(st.one_of(triple_sequence(longest), event_clause()))
    declared = "\n".join(
        f"FROM NAMED WINDOW :{w} ON :s{s} {draw(event_windows)}"
        for w, s in (("w1", 1), ("w2", 2), ("w3", 1))
    )
    outside = draw(st.sampled_from(["", "", "?x :r ?q ."]))
    policy = draw(st.sampled_from(policies))
    head = draw(st.sampled_from(["SELECT *", "SELECT *", "SELECT ?x"]))
    if partitioned:
        declared += "\n" + partition_clause(draw, [pattern])
    return f"PREFIX : <{EX}>\n{head}\n{declared}\n{policy}\nWHERE {{ {pattern} {outside} }}"


@settings(max_examples=250, deadline=None, suppress_health_check=CHECKS)
@given(cqels_queries(), streams())
def test_cqels_cep_agrees_with_reference(text, data):
    assert_agrees(text, data)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=CHECKS)
@given(cqels_queries(), streams())
def test_cqels_cep_agrees_with_reference_long(text, data):
    assert_agrees(text, data)


@settings(max_examples=40, deadline=None, suppress_health_check=CHECKS)
@given(answering(cqels_queries()), st.data())
def test_cqels_cep_resumes_from_a_snapshot(case, split):
    text, data = case
    size = sum(len(es) for es in data.values())
    assert_resumes(text, data, split.draw(st.integers(0, size)))


# --- interval-stamped elements under EVENT ---------------------------------------------

@settings(max_examples=150, deadline=None, suppress_health_check=CHECKS)
@given(answering(st.one_of(event_queries(), cqels_queries()), interval_streams()))
def test_interval_stamped_events_agree_with_reference(case):
    """RSEP-QL EVENT and CQELS-CEP elements over windows whose elements carry an interval:
    a window shows an element by its end, its event mappings carry its interval."""
    text, data = case
    assert_agrees(text, data)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=CHECKS)
@given(answering(st.one_of(event_queries(), cqels_queries()), interval_streams()))
def test_interval_stamped_events_agree_with_reference_long(case):
    """The short test's cases, streams planted from the query as there: drawn apart, a
    third of the reference's answers were empty (66.8% non-empty, under the 70% floor)."""
    text, data = case
    assert_agrees(text, data)


@settings(max_examples=30, deadline=None, suppress_health_check=CHECKS)
@given(answering(st.one_of(event_queries(), cqels_queries()), interval_streams(narrow_triples)),
       st.data())
def test_interval_stamped_events_resume_from_a_snapshot(case, split):
    """Each shown element's start is a state row beside the window's own."""
    text, data = case
    size = sum(len(es) for es in data.values())
    assert_resumes(text, data, split.draw(st.integers(0, size)))
