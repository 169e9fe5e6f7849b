"""This module and the reference evaluator (``sepia.semantics``) give the same closures:
for random schemas and graphs, and end to end, where ``evaluate(..., rdfs=True)`` answers a
window query and a background query that return every triple they read."""

from __future__ import annotations

from collections import defaultdict

import pyoxigraph as ox
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.reasoning.background import as_tuple, background_schema, close_background
from sepia.reasoning.entailment import rdfs_closure
from sepia.reasoning.rdfs import graph_closure
from sepia.reasoning.schema import Vocabulary
from sepia.reasoning.support import SupportCounter
from sepia.semantics import evaluate

EX = "http://example.org/"
V = Vocabulary.terms()
CLASSES = st.sampled_from([ox.NamedNode(EX + c) for c in ("C0", "C1", "C2", "C3")])
PROPERTIES = st.sampled_from([ox.NamedNode(EX + p) for p in ("p0", "p1", "p2", "hasType")])
THINGS = st.sampled_from([ox.NamedNode(EX + x) for x in ("a", "b", "C0", "p0")])
OBJECTS = st.one_of(THINGS, CLASSES, st.just(ox.Literal("1")))
SCHEMA_TRIPLES = st.one_of(
    st.tuples(CLASSES, st.just(V.sub_class), CLASSES),
    st.tuples(PROPERTIES, st.just(V.sub_property), PROPERTIES),
    st.tuples(PROPERTIES, st.sampled_from([V.domain, V.range]), CLASSES),
    st.just((ox.NamedNode(EX + "hasType"), V.sub_property, V.type)),
)
INSTANCE_TRIPLES = st.one_of(
    st.tuples(THINGS, PROPERTIES, OBJECTS), st.tuples(THINGS, st.just(V.type), CLASSES)
)
TRIPLES = st.one_of(SCHEMA_TRIPLES, INSTANCE_TRIPLES)


def store_of(triples) -> ox.Store:
    store = ox.Store()
    store.extend(ox.Quad(s, p, o) for s, p, o in triples)
    return store


@settings(max_examples=300, deadline=None)
@given(st.sets(SCHEMA_TRIPLES, max_size=6), st.sets(TRIPLES, max_size=8))
def test_graph_closure_equals_the_reference_closure(schema, graph):
    reference = rdfs_closure([ox.Triple(*t) for t in graph], [ox.Triple(*t) for t in schema])
    mine = graph_closure(graph, background_schema(store_of(schema)))
    assert mine == {as_tuple(t) for t in reference}


WINDOW_QUERY = parse_query(f"""PREFIX : <{EX}>
REGISTER RSTREAM :out AS SELECT ?s ?p ?o
FROM NAMED WINDOW :w ON :s [RANGE 3 STEP 1] WHERE {{ WINDOW :w {{ ?s ?p ?o }} }}""")
BACKGROUND_QUERY = parse_query("SELECT ?s ?p ?o WHERE { ?s ?p ?o }")


def by_time(results) -> dict[int, set]:
    rows: dict[int, set] = defaultdict(set)
    for r in results:
        rows[r.t].add((r.values["s"], r.values["p"], r.values["o"]))
    return rows


@settings(max_examples=40, deadline=None)
@given(
    st.sets(st.one_of(SCHEMA_TRIPLES, INSTANCE_TRIPLES), max_size=8),
    st.lists(st.sets(TRIPLES, min_size=1, max_size=3), min_size=1, max_size=6),
)
def test_window_snapshots_and_background_agree_with_evaluate_rdfs(background, elements):
    store = store_of(background)
    stream = [
        StreamElement(EX + "s", f"g{i}", i, i, tuple(ox.Triple(*t) for t in triples))
        for i, triples in enumerate(elements, start=1)
    ]
    streams = {EX + "s": stream}
    explicit = by_time(evaluate(WINDOW_QUERY, streams, store))
    entailed = by_time(evaluate(WINDOW_QUERY, streams, store, rdfs=True))
    closed, schema = close_background(store)
    window = SupportCounter(schema)
    before: set = set()
    for t in sorted(explicit.keys() | entailed.keys()):
        window.update(added=explicit[t] - before, removed=before - explicit[t])
        before = explicit[t]
        assert set(window) == entailed[t], t
    (reference_background,) = by_time(evaluate(BACKGROUND_QUERY, {}, store, rdfs=True)).values() \
        or [set()]
    assert {as_tuple(q) for q in closed} == reference_background
