"""DESCRIBE on the engine: the concise bounded description of each resource over the
default graph and the windows at each evaluation (docs/semantics.md), the reference's
answer on generated window, RSEP-QL and SPAseq queries over streams with blank nodes."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..generators import (
    EX,
    ONE_WINDOW,
    TWO_WINDOWS,
    blank_triples,
    declared,
    event_queries,
    report,
    sequence_queries,
    streams,
)
from ..support import assert_agrees

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large]
HEADS = ["DESCRIBE ?x", "DESCRIBE ?y :a", "DESCRIBE *", "DESCRIBE :b ?z", "DESCRIBE :c"]


@st.composite
def describe_queries(draw) -> str:
    """A window query (every family that binds ?x) under one of ``HEADS``."""
    entry = draw(st.sampled_from([e for e in ONE_WINDOW + TWO_WINDOWS if e[0] == "*"]))
    windows = ["w1", "w2"] if entry in TWO_WINDOWS else ["w1"]
    operator = draw(st.sampled_from(["RSTREAM", "ISTREAM", "DSTREAM"]))
    return (
        f"PREFIX : <{EX}>\nREGISTER {operator} :out AS\n{draw(st.sampled_from(HEADS))}\n"
        f"{declared(draw, windows)}\n{draw(report(windows))}\nWHERE {{ {entry[1]} }}"
    )


@st.composite
def describe_event_queries(draw) -> str:
    """An RSEP-QL or SPAseq query describing what its matches bind."""
    text = draw(st.one_of(event_queries(), sequence_queries()))
    return text.replace("SELECT *", draw(st.sampled_from(HEADS)), 1)


@settings(max_examples=200, deadline=None, suppress_health_check=CHECKS)
@given(describe_queries(), streams(content=blank_triples))
def test_describe_agrees_with_reference(text, data):
    assert_agrees(text, data)


@settings(max_examples=100, deadline=None, suppress_health_check=CHECKS)
@given(describe_event_queries(), streams())
def test_describe_over_event_matches_agrees_with_reference(text, data):
    """(Without blank nodes: the reference passes a MATCH's rows to pyoxigraph as a VALUES
    block, which cannot hold a blank node.)"""
    assert_agrees(text, data, renamed=True)
