"""DESCRIBE in the reference: the concise bounded description, checked against
pyoxigraph's own DESCRIBE, and a continuous DESCRIBE over a window derived by hand."""

from __future__ import annotations

import pyoxigraph as ox
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.lang import parse_query
from sepia.rdf.describe import bounded_description
from sepia.rdf.stream import StreamElement
from sepia.semantics import evaluate

from .support import EX, iri

NODES = [iri(x) for x in "abc"] + [ox.BlankNode(x) for x in ("k1", "k2", "k3")]
graphs = st.lists(
    st.builds(
        ox.Triple,
        st.sampled_from(NODES),
        st.sampled_from([iri("p"), iri("q")]),
        st.sampled_from([*NODES, ox.Literal("1")]),
    ),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(graphs, st.lists(st.sampled_from(NODES[:3]), min_size=1, max_size=2))
def test_the_bounded_description_is_pyoxigraphs_describe(triples, resources):
    store = ox.Store()
    store.extend(ox.Quad(t.subject, t.predicate, t.object, ox.DefaultGraph()) for t in triples)
    expected = set(store.query(f"DESCRIBE {' '.join(map(str, resources))}"))

    def outgoing(node):
        quads = store.quads_for_pattern(node, None, None)
        return {(q.subject, q.predicate, q.object) for q in quads}

    found = bounded_description(resources, outgoing, lambda x: isinstance(x, ox.BlankNode))
    assert {ox.Triple(*t) for t in found} == expected


def test_a_continuous_describe_reads_the_window_and_the_background():
    """[RANGE 4 STEP 2] closes at 4 and 6 with content. At 4 the window holds
    a p b, b q _:k (1) and b p c, _:k q z (3): ?y is b and c, so b is described by its
    window triples, its background label and the blank node's triple, c by its background
    triple, and :a (named) by a p b. At 6 the window (2, 6] holds the second element only:
    ?y = c, and :a has no triple left."""
    k = ox.BlankNode("k")
    triple = lambda s, p, o: ox.Triple(iri(s) if isinstance(s, str) else s, iri(p),  # noqa: E731
                                       iri(o) if isinstance(o, str) else o)  # fmt: skip
    stream = [
        StreamElement(EX + "s", "_:g0", 1, 1, (triple("a", "p", "b"), triple("b", "q", k))),
        StreamElement(EX + "s", "_:g1", 3, 3, (triple("b", "p", "c"), triple(k, "q", "z"))),
    ]
    background = ox.Store()
    background.load(b'@prefix : <http://example.org/> . :b :label "bee" . :c :r :a .',
                    format=ox.RdfFormat.TURTLE)  # fmt: skip
    query = parse_query(
        f"PREFIX : <{EX}>\nREGISTER RSTREAM :o AS DESCRIBE ?y :a\n"
        "FROM NAMED WINDOW :w ON :s [RANGE 4 STEP 2]\nWHERE { WINDOW :w { ?x :p ?y } }"
    )
    results = evaluate(query, {EX + "s": stream}, background)
    label = ox.Triple(iri("b"), iri("label"), ox.Literal("bee"))
    c_r_a = triple("c", "r", "a")
    assert [(r.t, set(r.triples or ())) for r in results] == [
        (4, {triple("a", "p", "b"), triple("b", "q", k), triple("b", "p", "c"),
             triple(k, "q", "z"), label, c_r_a}),
        (6, {c_r_a}),
    ]  # fmt: skip
