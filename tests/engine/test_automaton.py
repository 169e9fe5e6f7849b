"""Event automata against the reference: SPAseq sequences on generated streams give exactly
the reference evaluator's matches. Match numbers are compared up to renaming (the reference
numbers matches after the whole input is known)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from sepia.lang import parse_query
from sepia.runtime.local import run
from sepia.semantics import evaluate

from .generators import event_queries, sequence_queries, streams
from .support import background, canonical

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def assert_agrees(text: str, data: dict) -> None:
    query = parse_query(text)
    expected = evaluate(query, data, background(), name="q")
    got = list(run([("q", query)], data, background()))
    assert canonical(got) == canonical(expected), text
    assert [r.t for r in got] == sorted(r.t for r in got)


@settings(max_examples=250, deadline=None, suppress_health_check=CHECKS)
@given(sequence_queries(), streams())
def test_automaton_agrees_with_reference(text, data):
    assert_agrees(text, data)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=CHECKS)
@given(sequence_queries(), streams())
def test_automaton_agrees_with_reference_long(text, data):
    assert_agrees(text, data)


@settings(max_examples=200, deadline=None, suppress_health_check=CHECKS)
@given(event_queries(), streams())
def test_rsepql_sequences_agree_with_reference(text, data):
    """RSEP-QL: unrestricted SEQ chains of EVENTs (under FIRST / LAST or not) over windows,
    pushed as they complete."""
    assert_agrees(text, data)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=CHECKS)
@given(event_queries(), streams())
def test_rsepql_sequences_agree_with_reference_long(text, data):
    assert_agrees(text, data)
