"""RDFS over streams in the engine (issue 8): each arriving triple is expanded once by schema
lookups, derived triples are counted per supporting element in the windows and leave with
the last of them. Differential against the reference evaluator with ``rdfs=True`` on random
schemas, streams that carry types, and window, SPAseq and RSEP-QL queries."""

from __future__ import annotations

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sepia.reasoning.elements as elements
from sepia.engine.plan.planner import Unsupported
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.runtime.local import Session, run
from sepia.semantics import evaluate

from .generators import BACKGROUND, EX, S1, S2, event_queries, queries, sequence_queries
from .support import assert_agrees, canonical

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large]
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
SUB_CLASS, SUB_PROPERTY = ox.NamedNode(RDFS + "subClassOf"), ox.NamedNode(RDFS + "subPropertyOf")
DOMAIN, RANGE = ox.NamedNode(RDFS + "domain"), ox.NamedNode(RDFS + "range")

node = lambda name: ox.NamedNode(EX + name)  # noqa: E731
CLASSES = st.sampled_from([node(c) for c in "CDE"])
PROPERTIES = st.sampled_from([node(p) for p in "pqr"])
THINGS = st.sampled_from([node(x) for x in "abc"])
OBJECTS = st.one_of(
    THINGS,
    st.just(ox.Literal("3", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer"))),
)

schema_triples = st.one_of(
    st.builds(ox.Triple, CLASSES, st.just(SUB_CLASS), CLASSES),
    st.builds(ox.Triple, PROPERTIES, st.just(SUB_PROPERTY), PROPERTIES),
    st.builds(ox.Triple, PROPERTIES, st.sampled_from([DOMAIN, RANGE]), CLASSES),
)
instance_triples = st.one_of(
    st.builds(ox.Triple, THINGS, PROPERTIES, OBJECTS),
    st.builds(ox.Triple, THINGS, st.just(RDF_TYPE), CLASSES),
)

TYPED_WINDOW = [  # (projection, WHERE body): patterns that read derived triples
    ("*", "WINDOW :w1 { ?x a ?c }"),
    ("*", "WINDOW :w1 { ?x ?p ?y }"),
    ("*", "WINDOW :w1 { ?x :q ?y . ?y a :E }"),
    ("?x", "WINDOW :w1 { ?x a :C } WINDOW :w2 { ?x :r ?y }"),
    ("*", "WINDOW :w1 { ?x a :D OPTIONAL { ?x :p ?y } }"),
    ("DISTINCT ?c", "WINDOW :w1 { ?x a ?c } ?x :r ?z"),
]


@st.composite
def background(draw) -> ox.Store:
    """The engine tests' background data with a random schema over the streams' terms."""
    store = ox.Store()
    store.load(BACKGROUND.encode(), format=ox.RdfFormat.TRIG)
    store.extend(ox.Quad(*t) for t in draw(st.sets(schema_triples, max_size=7)))
    return store


@st.composite
def stream(draw, iri: str, min_size: int) -> list[StreamElement]:
    t, elements = draw(st.integers(0, 3)), []
    for number in range(draw(st.integers(min_size, 8))):
        t += draw(st.sampled_from([0, 1, 2, 5])) if number else 0
        graph = draw(st.lists(instance_triples, max_size=3, unique=True))
        elements.append(StreamElement(iri, f"_:g{number}", t, t, tuple(graph)))
    return elements


@st.composite
def typed_streams(draw) -> dict[str, list[StreamElement]]:
    return {S1: draw(stream(S1, 2)), S2: draw(stream(S2, 1))}


@st.composite
def typed_queries(draw) -> str:
    """A window query whose patterns match rdf:type and super-property triples."""
    projection, where = draw(st.sampled_from(TYPED_WINDOW))
    windows = ["w1", "w2"] if ":w2" in where else ["w1"]
    spec = st.sampled_from(["[RANGE 3 STEP 1]", "[RANGE 6 STEP 2]", "[ELEMENTS 2]", "[NOW]"])
    declared = "\n".join(
        f"FROM NAMED WINDOW :{w} ON :s{i + 1} {draw(spec)}" for i, w in enumerate(windows)
    )
    operator = draw(st.sampled_from(["RSTREAM", "ISTREAM", "DSTREAM"]))
    return (
        f"PREFIX : <{EX}>\nREGISTER {operator} :out AS SELECT {projection}\n{declared}\n"
        f"WHERE {{ {where} }}"
    )


@settings(max_examples=150, deadline=None, suppress_health_check=CHECKS)
@given(typed_queries(), typed_streams(), background())
def test_typed_window_queries_agree_with_the_reference(text, data, store):
    assert_agrees(text, data, store, rdfs=True, renamed=True, ordered=False)


@settings(max_examples=120, deadline=None, suppress_health_check=CHECKS)
@given(st.one_of(queries(), sequence_queries(), event_queries()), typed_streams(), background())
def test_every_query_family_agrees_under_random_schemas(text, data, store):
    """Windows, SPAseq event graphs and RSEP-QL event graphs read closed elements."""
    assert_agrees(text, data, store, rdfs=True, renamed=True, ordered=False)


SCHEMA = f"""@prefix : <{EX}> . @prefix rdfs: <{RDFS}> .
:p rdfs:subPropertyOf :q . :q rdfs:range :E . :E rdfs:subClassOf :F ."""
QUERY = f"""PREFIX : <{EX}>
REGISTER RSTREAM :out AS SELECT ?x ?y ?c FROM NAMED WINDOW :w ON :s1 [RANGE 4 STEP 2]
WHERE {{ WINDOW :w {{ ?x :q ?y . ?y a ?c }} }}"""


def schema_store() -> ox.Store:
    store = ox.Store()
    store.load(SCHEMA.encode(), format=ox.RdfFormat.TURTLE)
    return store


def element(t: int, *triples: str) -> StreamElement:
    parsed = [ox.Triple(*(node(x) for x in text.split())) for text in triples]
    return StreamElement(S1, f"_:e{t}", t, t, tuple(parsed))


def test_a_derived_triple_leaves_with_its_last_supporting_element():
    """Worked by hand: `a p b` at 1 entails `a q b`, `b a E`, `b a F`; `a q b` at 3 entails
    the same; `c r c` at 5 entails nothing. RANGE 4 STEP 2 closes (0,4], (2,6], (4,8]: at 4
    both supporters are in, at 6 only the one at 3, at 8 none (the window still holds the
    element at 5, so NON EMPTY holds, but the derived triples have left)."""
    data = {S1: [element(1, "a p b"), element(3, "a q b"), element(5, "c r c")]}
    got = list(run([("q", QUERY)], data, schema_store(), rdfs=True))
    rows = sorted((r.t, str(dict(r.binding)["c"])) for r in got)
    f, e = f"<{EX}F>", f"<{EX}E>"
    assert rows == sorted((t, c) for t in (4, 6) for c in (e, f))
    assert canonical(got) == canonical(
        evaluate(parse_query(QUERY), data, schema_store(), name="q", rdfs=True)
    )


def test_window_state_holds_each_derived_triple_once_per_supporting_element():
    session = Session(schema_store(), rdfs=True)
    engine = session.register(QUERY, "q")
    session.push(element(1, "a p b"))
    session.push(element(3, "a q b"))
    session.flush(until=3)
    (window,) = engine.windows.values()
    assert len(window.graph) == 4  # a p b, a q b, b a E, b a F
    per_element = [len(triples) for _, triples in window.elements]
    assert per_element == [4, 3]  # each element closed on its own


def test_each_distinct_triple_is_expanded_once(monkeypatch):
    calls = []
    real = elements.entailed
    monkeypatch.setattr(elements, "entailed", lambda t, s: calls.append(t) or real(t, s))
    data = {S1: [element(t, "a p b", "b p c") for t in range(1, 9)]}
    list(run([("q", QUERY)], data, schema_store(), rdfs=True))
    assert len(calls) == 2  # eight elements, two distinct triples


def test_schema_triples_of_the_background_may_arrive_in_a_stream():
    known = ox.Triple(node("p"), SUB_PROPERTY, node("q"))
    data = {S1: [StreamElement(S1, "_:e1", 1, 1, (known, *element(1, "a p b").triples))]}
    query = QUERY.replace("?x :q ?y . ?y a ?c", "?x ?k ?y")
    got = list(run([("q", query)], data, schema_store(), rdfs=True))
    expected = evaluate(parse_query(query), data, schema_store(), name="q", rdfs=True)
    assert got and canonical(got) == canonical(expected)


def test_a_new_schema_triple_in_a_stream_is_refused():
    """It would change the rules for the whole window (semantics.md), not just its element."""
    new = StreamElement(S1, "_:e1", 1, 1, (ox.Triple(node("r"), SUB_PROPERTY, node("q")),))
    with pytest.raises(Unsupported, match="schema triples"):
        list(run([("q", QUERY)], {S1: [new, element(3, "a r b")]}, schema_store(), rdfs=True))
