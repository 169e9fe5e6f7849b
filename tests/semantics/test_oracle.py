"""The RSP-QL correctness oracle (Definitions 25-26, Theorem 1) on RSP-QL's Example 10.

The E1 query with w2 = (2, 2, t0 0) reports at 8 (carl, eve) and 16 (diana). An engine that
started w2 at t0 = 1 has windows (1, 3], ..., (7, 9], (13, 15], (15, 17]: it reports the
alice coupon at 9 and bob's at 15, which is also a correct answer (a shifted t0).
"""

from __future__ import annotations

import dataclasses

import pyoxigraph as ox

from sepia.algebra import dataset as ds
from sepia.lang import parse_query
from sepia.rdf.results import result_to_json
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind
from sepia.semantics import evaluate
from sepia.semantics.oracle import candidates, check, with_t0

from . import example_queries
from .support import element, iri


def streams():
    nearby = [
        element(2, ("diana", "isNearby", "a"), stream="nearby"),
        element(2, ("eve", "isNearby", "b"), stream="nearby"),
        element(5, ("carl", "isNearby", "a"), stream="nearby"),
        element(7, ("eve", "isNearby", "a"), stream="nearby"),
        element(12, ("diana", "isNearby", "b"), stream="nearby"),
    ]
    coupons = [
        element(8, ("alice", "offers", "c10"), stream="coupons"),
        element(15, ("bob", "offers", "coffee"), stream="coupons"),
    ]
    return {iri("nearby").value: nearby, iri("coupons").value: coupons}


def background():
    store = ox.Store()
    store.add(ox.Quad(iri("alice"), iri("owns"), iri("a")))
    store.add(ox.Quad(iri("bob"), iri("owns"), iri("b")))
    return store


def test_candidates_are_bounded_by_the_slide():
    query = example_queries.e1_shops_coupons()
    choices = candidates(query)
    assert len(choices) == 2 * 2  # w1 slide 2 from t0 1: {1, 2}; w2 slide 2 from 0: {0, 1}
    assert {c[iri("w1")] for c in choices} == {1, 2}
    assert {c[iri("w2")] for c in choices} == {0, 1}
    shifted = with_t0(query, {iri("w2"): 1})
    assert shifted.dataset.windows[1].spec == ds.Sliding(2, 2, 1)


def test_accepts_the_reference_answer_and_a_shifted_t0():
    query = example_queries.e1_shops_coupons()
    own = [result_to_json(r, TimeKind.ABSTRACT) for r in evaluate(query, streams(), background())]
    verdict = check(query, streams(), background(), own)
    assert verdict.correct and verdict.t0 == {iri("w1").value: 1, iri("w2").value: 0}
    shifted = [
        result_to_json(r, TimeKind.ABSTRACT)
        for r in evaluate(with_t0(query, {iri("w2"): 1}), streams(), background(), name="other")
    ]
    assert {line["t"] for line in shifted} == {9, 15}
    verdict = check(query, streams(), background(), shifted)
    assert verdict.correct and verdict.t0[iri("w2").value] == 1
    as_results = evaluate(with_t0(query, {iri("w2"): 1}), streams(), background())
    assert check(query, streams(), background(), as_results).correct
    assert verdict.describe().startswith("correct")


def test_rejects_a_wrong_answer_with_the_first_difference():
    query = example_queries.e1_shops_coupons()
    own = [result_to_json(r, TimeKind.ABSTRACT) for r in evaluate(query, streams(), background())]
    wrong = [line for line in own if line["binding"]["shopper"] != f"<{iri('eve').value}>"]
    verdict = check(query, streams(), background(), wrong)
    assert not verdict.correct
    assert verdict.difference is not None and verdict.difference.t == 8
    assert len(verdict.difference.missing) == 1 and "eve" in verdict.difference.missing[0]
    assert verdict.difference.unexpected == ()
    assert "first difference at t = 8" in verdict.describe()


def test_a_query_without_a_t0_to_choose_is_compared_as_is():
    # E3: a landmark window and RANGE 5 (slide 1: t0 can only be 0): one candidate, t_s = 0
    query = example_queries.e3_rsepql_landmark()
    stream = {
        iri("s").value: [
            element(2, ("a1", "p", "b1")),
            element(6, ("b1", "q", "c1")),
        ]
    }
    assert len(candidates(query)) == 1
    own = evaluate(query, stream)
    assert [(r.t, r.interval) for r in own] == [(6, (2, 6))]
    verdict = check(query, stream, None, own)
    assert verdict.correct and verdict.t_start == 0 and verdict.tried == 1
    late = [dataclasses.replace(r, t=7) for r in own]
    assert not check(query, stream, None, late).correct


def test_literals_are_compared_in_canonical_form():
    """Another engine may print a literal as its input wrote it ("4.50"^^xsd:decimal) where
    the reference prints the form its store holds ("4.5"): the same term, so a correct
    answer; another value is still wrong."""
    decimal = ox.NamedNode("http://www.w3.org/2001/XMLSchema#decimal")
    price = ox.Triple(iri("coffee"), iri("price"), ox.Literal("4.50", datatype=decimal))
    data = {iri("prices").value: [StreamElement(iri("prices").value, "g", 3, 3, (price,))]}
    query = parse_query(
        f"PREFIX : <{iri('').value}>\nREGISTER RSTREAM :out AS SELECT ?p "
        "FROM NAMED WINDOW :w ON :prices [RANGE 4 STEP 4] WHERE { WINDOW :w { ?x :price ?p } }"
    )

    def answer(lexical: str) -> list[dict]:
        value = f'"{lexical}"^^<{decimal.value}>'
        return [{"query": "q", "t": 4, "op": "+", "binding": {"p": value}}]

    assert [r.values["p"].value for r in evaluate(query, data)] == ["4.5"]
    assert check(query, data, None, answer("4.50")).correct
    assert check(query, data, None, answer("4.5")).correct
    assert not check(query, data, None, answer("4.6")).correct
