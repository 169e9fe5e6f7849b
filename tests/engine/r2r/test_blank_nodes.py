"""Blank nodes in stream data (an observation's result node, a reading's value node).

SPARQL's VALUES cannot hold a blank node, and both evaluators hand rows to pyoxigraph in
VALUES blocks (the engine to evaluate FILTER and BIND over a batch of rows, the reference
to join event mappings and path ends); those rows' blank nodes now travel in a graph of the
store instead (``sepia.algebra.sparql.table_text``). Before, any FILTER over a blank node
stopped the run with a SPARQL syntax error. The differential tests' streams hold a blank
node too (tests/engine/generators.py)."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.runtime.local import run
from sepia.semantics import evaluate

EX = "http://ex/"
S = EX + "s"
X, Y = ox.BlankNode("x"), ox.BlankNode("y")


def iri(name: str) -> ox.NamedNode:
    return ox.NamedNode(EX + name)


def number(n: int) -> ox.Literal:
    return ox.Literal(str(n), datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer"))


def reading(name: str, t: int, node: ox.BlankNode, value: int) -> StreamElement:
    """``:name :p node . node :v value`` stamped t."""
    body = (ox.Triple(iri(name), iri("p"), node), ox.Triple(node, iri("v"), number(value)))
    return StreamElement(S, f"g{t}", t, t, body)


DATA = {S: [reading("a", 1, X, 3), reading("b", 2, Y, 5)]}

WINDOW = f"""PREFIX : <{EX}>
REGISTER RSTREAM :out AS SELECT ?s ?o (?v + 1 AS ?w)
FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 1]
REPORT ON CONTENT CHANGE
WHERE {{ WINDOW :w {{ ?s :p ?o . ?o :v ?v FILTER(isBlank(?o) && ?o != :a) }} }}"""
EPSPARQL = f"""PREFIX : <{EX}>
SELECT ?s ?o ?s2 ?o2
WHERE {{ {{ ?s :p ?o }} SEQ {{ ?s2 :p ?o2 }} FILTER(?o2 != ?o && isBlank(?o)) }}"""
RSEPQL = f"""PREFIX : <{EX}>
SELECT ?a ?y ?z
FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 1]
WHERE {{ MATCH {{ EVENT :w {{ ?a :p ?y }} SEQ EVENT :w {{ ?b :p ?z }} }} FILTER(?y != ?z) }}"""


def answers(results) -> list[tuple]:
    return sorted(((r.t, r.binding) for r in results), key=repr)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # each arrival: the window's blank value nodes, their values plus one
        (WINDOW, [(t, (("o", n), ("s", iri(s)), ("w", number(w))))
                  for t, n, s, w in [(1, X, "a", 4), (2, X, "a", 4), (2, Y, "b", 6)]]),
        # a's blank node at 1, then b's (another one) at 2: one sequence, ending at 2
        (EPSPARQL, [(2, (("o", X), ("o2", Y), ("s", iri("a")), ("s2", iri("b"))))]),
        (RSEPQL, [(2, (("a", iri("a")), ("y", X), ("z", Y)))]),
    ],
    ids=["window", "ep-sparql", "rsep-ql"],
)  # fmt: skip
def test_filters_over_blank_nodes_agree_with_hand_derived_answers(text, expected):
    query = parse_query(text)
    expected = sorted(expected, key=repr)
    assert answers(evaluate(query, DATA)) == expected
    assert answers(run([("q", query)], DATA)) == expected
