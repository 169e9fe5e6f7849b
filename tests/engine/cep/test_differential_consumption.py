"""Differential tests for CHRONOLOGICAL / RECENT consumption over every event operator the
engine runs: CQELS-CEP SEQ with a negated element (triple sequences of up to four elements
and event clauses), EP-SPARQL SEQ / EQUALS / OPTIONALSEQ / EQUALSOPTIONAL / UNION with
interval FILTERs over occurrences of two streams, and random operator trees mixing RSEP-QL
SEQ / FIRST / LAST with CQELS-CEP JOIN / OR / SEQ_WO / NO_HEAD / NO_TAIL and EP-SPARQL's
joins over windows (built as algebra: no dialect's syntax writes them together), on dense
streams (a small vocabulary, equal times, repeated triples, interval-stamped elements), so
that equal mappings of different supports are common. The engine's answer must be the
reference's; snapshots taken mid-stream must resume exactly; PARTITION BY too."""

from __future__ import annotations

import dataclasses

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.algebra import event as ev
from sepia.algebra import pattern as gp
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.runtime.local import run
from sepia.semantics import evaluate

from ..generators import EX, S1, S2, answering, event_windows, streams
from ..shares import judge
from ..support import assert_agrees, assert_resumes, background
from .test_differential_cep import cqels_queries, epsparql_queries, interval_streams

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large]
CONSUMING = ("EVENT POLICY CHRONOLOGICAL", "EVENT POLICY RECENT")

VOCABULARY = [ox.NamedNode(EX + x) for x in ("a", "b", "p", "q")]
SMALL = st.builds(
    ox.Triple,
    st.sampled_from(VOCABULARY[:2]),
    st.sampled_from(VOCABULARY[2:]),
    st.sampled_from([*VOCABULARY[:2], ox.Literal("1", datatype=ox.NamedNode(
        "http://www.w3.org/2001/XMLSchema#integer"))]),
)


@st.composite
def dense_stream(draw, iri: str, intervals: bool) -> list[StreamElement]:
    """Elements of one stream in arrival order (by end): one or two triples of a
    six-triple-shaped vocabulary, often at one time, some (``intervals``) stamped [end - d,
    end]."""
    end, elements = draw(st.integers(0, 2)), []
    for number in range(draw(st.integers(2, 8))):
        end += draw(st.sampled_from([0, 0, 1, 1, 2, 4])) if number else 0
        start = end - draw(st.sampled_from([0, 0, 1, 2])) if intervals else end
        graph = draw(st.lists(SMALL, min_size=1, max_size=2, unique=True))
        elements.append(StreamElement(iri, f"_:g{number}", max(0, start), end, tuple(graph)))
    return elements


@st.composite
def dense_streams(draw) -> dict[str, list[StreamElement]]:
    intervals = draw(st.booleans())
    return {S1: draw(dense_stream(S1, intervals)), S2: draw(dense_stream(S2, intervals))}


any_streams = st.one_of(dense_streams(), streams(), interval_streams())


# --- CQELS-CEP and EP-SPARQL, as written -----------------------------------------------

cqels = cqels_queries(policies=CONSUMING, longest=4)
epsparql = epsparql_queries(policies=CONSUMING)
partitioned = st.one_of(
    cqels_queries(partitioned=True, policies=CONSUMING, longest=4),
    epsparql_queries(partitioned=True, policies=CONSUMING),
)


@settings(max_examples=150, deadline=None, suppress_health_check=CHECKS)
@given(answering(cqels, any_streams))
def test_cqels_cep_consumption_agrees_with_reference(case):
    assert_agrees(*case)


@settings(max_examples=150, deadline=None, suppress_health_check=CHECKS)
@given(answering(epsparql, any_streams))
def test_epsparql_consumption_agrees_with_reference(case):
    assert_agrees(*case)


# --- operator trees over windows ---------------------------------------------------------

LEAVES = [
    ("w1", ("x", "p", "y")),
    ("w2", ("y", "k", "z")),
    ("w1", ("x", "q", "w")),
    ("w2", ("x", "j", "v")),
    ("w1", ("u", "i", "n")),
]
VARIABLES = "?x ?y ?z ?w ?v ?u ?n ?k ?j ?i"
BINARY = {
    "seq": lambda a, b: ev.Seq(a, b, ev.SelectionPolicy.UNRESTRICTED),
    "join": ev.IntervalJoin,
    "covering": ev.EventJoin,
    "equals": ev.EqJoin,
    "or": ev.Or,
    "optionalseq": lambda a, b: ev.SeqRightJoin(a, b, None),
    "equalsoptional": lambda a, b: ev.EqLeftJoin(a, b, None),
    "no-head": ev.NoHead,
    "no-tail": ev.NoTail,
}


def leaf(window: str, triple: tuple[str, str, str]) -> ev.Event:
    """``EVENT :window { triple }``, a name in the predicate position being a constant."""
    s, p, o = (ox.Variable(x) if x not in ("p", "q") else ox.NamedNode(EX + x) for x in triple)
    return ev.Event(gp.Bgp((gp.TriplePattern(s, p, o),)), ox.NamedNode(EX + window))


@st.composite
def operator_tree(draw, depth: int) -> ev.EventPattern:
    """A random event pattern over window events, at most ``depth`` operators deep."""
    if depth == 0 or draw(st.booleans()):
        return leaf(*draw(st.sampled_from(LEAVES)))
    kind = draw(st.sampled_from([*BINARY, "seq", "seq", "seq-without", "first", "last"]))
    if kind in ("first", "last"):
        inner = draw(operator_tree(depth - 1))
        return ev.First(inner) if kind == "first" else ev.Last(inner)
    left, right = draw(operator_tree(depth - 1)), draw(operator_tree(depth - 1))
    if kind == "seq-without":
        return ev.SeqWithout(left, leaf(*draw(st.sampled_from(LEAVES))), right)
    return BINARY[kind](left, right)


@st.composite
def tree_queries(draw):
    """A consuming SEQ of two random trees, under CHRONOLOGICAL or RECENT, over two windows
    (built by swapping the tree into a parsed query's MATCH)."""
    declared = "\n".join(
        f"FROM NAMED WINDOW :{w} ON :s{i + 1} {draw(event_windows)}"
        for i, w in enumerate(["w1", "w2"])
    )
    policy = draw(st.sampled_from(CONSUMING))
    text = (
        f"PREFIX : <{EX}>\nSELECT {VARIABLES}\n{declared}\n{policy}\n"
        "WHERE { MATCH { EVENT :w1 { ?x :p ?y } SEQ EVENT :w2 { ?y ?k ?z } } }"
    )
    depths = st.integers(0, 2)
    pattern = ev.Seq(
        draw(operator_tree(draw(depths))), draw(operator_tree(draw(depths))),
        ev.SelectionPolicy.UNRESTRICTED,
    )
    query = parse_query(text)
    return dataclasses.replace(query, expression=_with_event(query.expression, pattern))


def _with_event(node, pattern: ev.EventPattern):
    """``node`` with its MATCH's event pattern replaced by ``pattern``."""
    if isinstance(node, gp.Match):
        return gp.Match(pattern)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        fields = [f.name for f in dataclasses.fields(node) if f.init]
        return dataclasses.replace(node, **{f: _with_event(getattr(node, f), pattern)
                                            for f in fields})
    return node


def assert_tree_agrees(query, data) -> None:
    expected = evaluate(query, data, background(), name="q")
    judge(repr(query), data, expected)
    got = list(run([("q", query)], data, background()))
    assert sorted(map(repr, got)) == sorted(map(repr, expected)), query
    assert [r.t for r in got] == sorted(r.t for r in got)


@settings(max_examples=150, deadline=None, suppress_health_check=CHECKS)
@given(tree_queries(), any_streams)
def test_operator_trees_under_consumption_agree_with_reference(query, data):
    assert_tree_agrees(query, data)


# --- snapshots and partitions ------------------------------------------------------------

@settings(max_examples=40, deadline=None, suppress_health_check=CHECKS)
@given(st.one_of(answering(st.one_of(cqels, epsparql), any_streams),
                 st.tuples(tree_queries(), any_streams)), st.data())
def test_consumption_resumes_from_a_snapshot(case, split):
    """Consumed occurrences, element names and starts, and EP-SPARQL's occurrences are
    state rows: a session restored from JSON mid-stream gives the whole run's answer."""
    text, data = case
    size = sum(len(es) for es in data.values())
    assert_resumes(text, data, split.draw(st.integers(0, size)))


@settings(max_examples=60, deadline=None, suppress_health_check=CHECKS)
@given(answering(partitioned, any_streams))
def test_partitioned_consumption_agrees_with_reference(case):
    """PARTITION BY: each partition consumes its own events."""
    assert_agrees(*case)


# --- longer runs (-m slow) -------------------------------------------------------------

@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=CHECKS)
@given(st.one_of(cqels, epsparql), any_streams)
def test_consumption_agrees_with_reference_long(text, data):
    assert_agrees(text, data)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=CHECKS)
@given(tree_queries(), any_streams)
def test_operator_trees_under_consumption_agree_with_reference_long(query, data):
    assert_tree_agrees(query, data)


@pytest.mark.slow
@settings(max_examples=500, deadline=None, suppress_health_check=CHECKS)
@given(partitioned, any_streams)
def test_partitioned_consumption_agrees_with_reference_long(text, data):
    assert_agrees(text, data)
