"""Differential tests: the incremental engine must give exactly the reference evaluator's
results (as a multiset) on generated streams and RSP-QL queries."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.lang import parse_query
from sepia.runtime.local import run
from sepia.semantics import evaluate

from .generators import (
    ONE_WINDOW,
    TWO_WINDOWS,
    paired_streams,
    planted,
    queries,
    sequence_queries,
    streams,
)
from .shares import judge
from .support import assert_agrees, background, canonical, engine_path

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large]


FAMILIES = ONE_WINDOW + TWO_WINDOWS


def family_id(family: tuple[str, ...]) -> str:
    return " ".join(family[1:]).replace("WINDOW ", "")


@pytest.mark.parametrize("family", FAMILIES, ids=family_id)
@settings(max_examples=12, deadline=None, suppress_health_check=CHECKS)
@given(data=st.data())
def test_engine_agrees_with_reference(family, data):
    """Each pattern family on its own, so that each is drawn (and with answers: 12 x 25
    examples, most of whose reference answers are non-empty, see shares.py)."""
    text = data.draw(queries(family), label="query")
    assert_agrees(text, data.draw(planted(text, paired_streams()), label="streams"))


@settings(max_examples=150, deadline=None, suppress_health_check=CHECKS)
@given(queries(), streams())
def test_row_engine_agrees_with_reference(text, data):
    """The row engine forced on every query, those the columnar core takes by default
    included (``tests/engine/test_columnar.py`` checks that core's batch path)."""
    with engine_path("rows"):
        assert_agrees(text, data)


@settings(max_examples=300, deadline=None, suppress_health_check=CHECKS)
@given(queries(), streams())
def test_columnar_core_agrees_with_reference(text, data):
    """The columnar core wherever it covers a query, reports at arrivals included (by
    default those stay on the row engine's delta evaluation, for speed)."""
    with engine_path("columnar-always"):
        assert_agrees(text, data)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=CHECKS)
@given(queries(), paired_streams())
def test_engine_agrees_with_reference_long(text, data):
    assert_agrees(text, data)


@settings(max_examples=40, deadline=None, suppress_health_check=CHECKS)
@given(queries(), sequence_queries(), queries(), streams())
def test_queries_sharing_a_session_agree_with_the_reference(first, second, third, data):
    """Several queries over one dictionary and background, fed together: each gives its
    own reference answer, and the merged output is in time order per query."""
    texts = {"a": first, "b": second, "c": third}
    answers = {n: evaluate(parse_query(t), data, background(), name=n) for n, t in texts.items()}
    judge("\n".join(texts.values()), data, [r for rs in answers.values() for r in rs])
    got = list(run(list(texts.items()), data, background()))
    for name, expected in answers.items():
        mine = [r for r in got if r.query == name]
        assert canonical(mine) == canonical(expected)  # match numbers up to renaming
        assert [r.t for r in mine] == sorted(r.t for r in mine)


@settings(max_examples=120, deadline=None, suppress_health_check=CHECKS)
@given(st.one_of(queries(), sequence_queries()), streams())
def test_rdfs_entailment_agrees_with_the_reference(text, data):
    """Under RDFS entailment (a schema in the background: sub-properties, domains, ranges,
    sub-classes), windows, event graphs and background graphs are read as their closures."""
    query = parse_query(text)
    expected = evaluate(query, data, background(schema=True), name="q", rdfs=True)
    judge(text, data, expected)
    got = list(run([("q", query)], data, background(schema=True), rdfs=True))
    assert canonical(got) == canonical(expected), text
