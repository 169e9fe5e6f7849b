"""Differential tests: the incremental engine must give exactly the reference evaluator's
results (as a multiset) on generated streams and RSP-QL queries."""

from __future__ import annotations

from collections import Counter

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings

from sepia.lang import parse_query
from sepia.runtime.local import run
from sepia.semantics import evaluate

from .generators import BACKGROUND, queries, streams

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large]


def background() -> ox.Store:
    store = ox.Store()
    store.load(BACKGROUND.encode(), format=ox.RdfFormat.TRIG)
    return store


def assert_agrees(text: str, data: dict) -> None:
    query = parse_query(text)
    expected = evaluate(query, data, background(), name="q")
    got = list(run([("q", query)], data, background()))
    assert Counter(got) == Counter(expected), text
    assert [r.t for r in got] == sorted(r.t for r in got)


@settings(max_examples=300, deadline=None, suppress_health_check=CHECKS)
@given(queries(), streams())
def test_engine_agrees_with_reference(text, data):
    assert_agrees(text, data)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=CHECKS)
@given(queries(), streams())
def test_engine_agrees_with_reference_long(text, data):
    assert_agrees(text, data)
