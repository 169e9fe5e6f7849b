"""Event automata against the reference: SPAseq sequences on generated streams give exactly
the reference evaluator's matches. Match numbers are compared up to renaming (the reference
numbers matches after the whole input is known)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from ..generators import answering, event_queries, sequence_queries, streams
from ..support import assert_agrees

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


@settings(max_examples=250, deadline=None, suppress_health_check=CHECKS)
@given(answering(sequence_queries(), aimed=True))
def test_automaton_agrees_with_reference(case):
    """Streams planted from the query (aimed), among noise."""
    assert_agrees(*case, renamed=True)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=CHECKS)
@given(sequence_queries(), streams())
def test_automaton_agrees_with_reference_long(text, data):
    assert_agrees(text, data, renamed=True)


@settings(max_examples=200, deadline=None, suppress_health_check=CHECKS)
@given(answering(event_queries(), aimed=True))
def test_rsepql_sequences_agree_with_reference(case):
    """RSEP-QL: unrestricted SEQ chains of EVENTs (under FIRST / LAST or not) over windows,
    pushed as they complete."""
    text, data = case
    assert_agrees(text, data, renamed=True)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=CHECKS)
@given(answering(event_queries(), aimed=True))
def test_rsepql_sequences_agree_with_reference_long(case):
    """Streams planted from the query, as above: drawn apart from the query, 60% of the
    reference's answers were non-empty, under the share every differential test keeps."""
    assert_agrees(*case, renamed=True)
