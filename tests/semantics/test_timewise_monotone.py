"""EP-SPARQL patterns are matched over the whole input once (``EventEvaluator.match_rows``):
at every evaluation time t their rows must be exactly those of the pattern evaluated at t
(RSEP-QL Eq. 8, what ``evaluate(e, t)`` computes), the solutions that end by t. A pattern
whose answer at t is not such a prefix (consumption, a window, FIRST) keeps the evaluation
at t."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.generators import epsparql_pattern
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.semantics.evaluator import Evaluation, _matches

from .support import EX, element

NAMES = ["a", "b", "c"]
GROUPS = [
    "{ ?x :p ?y }",
    "{ ?y :q ?z }",
    "{ ?x :q ?w . ?w :p ?n }",  # two occurrences, possibly of different elements
    "{ { ?x :p ?y } UNION { ?x :q ?y } }",
]
OPERATORS = ["SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL"]
CONDITIONS = ["", " FILTER(getDURATION() < 5)", " FILTER(getSTARTTIME() > 1 && ?x != :a)"]


@st.composite
def queries(draw) -> str:
    pattern = epsparql_pattern(draw, GROUPS, OPERATORS)
    return f"PREFIX : <{EX}>\nSELECT * WHERE {{ {pattern}{draw(st.sampled_from(CONDITIONS))} }}"


@st.composite
def streams(draw) -> dict[str, list[StreamElement]]:
    """One stream of 2-7 elements in arrival order, some stamped with an interval."""
    elements, end = [], 0
    for _ in range(draw(st.integers(2, 7))):
        end += draw(st.integers(0, 2))
        start = max(0, end - draw(st.sampled_from([0, 0, 1, 3])))
        triple = st.tuples(st.sampled_from(NAMES), st.sampled_from(["p", "q"]),
                           st.sampled_from(NAMES))
        triples = draw(st.lists(triple, min_size=1, max_size=3, unique=True))
        elements.append(element(start, *triples, end=end))
    return {"s": elements}


def _rows_at_every_instant(text: str, data: dict[str, list[StreamElement]]) -> None:
    run = Evaluation(parse_query(text), data, None, "q")
    (match,) = _matches(run.query.pattern)
    assert run.events.timewise_monotone(match.event)
    for t in run.instants(None):
        run.data.at(t)
        whole = {(r.mu, r.start, r.end) for r in run.events.match_rows(match.event, t)}
        at_t = {(m.mu, m.start, m.end) for m in run.events.evaluate(match.event, t)}
        assert whole == at_t, t


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queries(), streams())
def test_whole_input_rows_are_the_rows_at_every_instant(text, data):
    _rows_at_every_instant(text, data)


def test_w8s_queries_are_matched_once():
    listed = (f"PREFIX : <{EX}>\nSELECT * WHERE {{ {{ ?x :p ?y }} EQUALS {{ ?x a :c }} "
              "SEQ { ?x :p ?z } SEQ { ?x :p ?w } FILTER(getDURATION() < 4) }")
    data = {"s": [element(t, ("a", "p", n), ("a", "type", "c")) for t, n in
                  enumerate(["a", "b", "c", "a", "b"])]}
    _rows_at_every_instant(listed.replace(" a :c", " :type :c"), data)


@pytest.mark.parametrize("policy", ["CHRONOLOGICAL", "RECENT", "NAIVE"])
def test_a_seq_with_another_policy_is_evaluated_at_every_instant(policy):
    text = (f"PREFIX : <{EX}>\nSELECT * EVENT POLICY {policy} "
            "WHERE { { ?x :p ?y } SEQ { ?x :q ?z } }")
    run = Evaluation(parse_query(text), {"s": [element(1, ("a", "p", "b"))]}, None, "q")
    (match,) = _matches(run.query.pattern)
    assert not run.events.timewise_monotone(match.event)
