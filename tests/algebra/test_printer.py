"""The printers: S-expressions, the explain tree and JSON, on hand-built trees."""

import json

import pyoxigraph as ox

import sepia.algebra as a

EX = "http://example.org/"
PREFIXES = {"": EX}
X, Y, Z = ox.Variable("x"), ox.Variable("y"), ox.Variable("z")


def iri(local: str) -> ox.NamedNode:
    return ox.NamedNode(EX + local)


def bep(window: str, s: ox.Variable, p: str, o: ox.Variable) -> a.Event:
    return a.Event(a.Bgp((a.TriplePattern(s, iri(p), o),)), window=iri(window))


EXAMPLE_4 = a.Match(a.Seq(bep("w1", X, "p", Y), bep("w2", Y, "q", Z)))
"""RSEP-QL Example 4: MATCH (EVENT w1 {?x :p ?y} SEQ EVENT w2 {?y :q ?z})."""


def test_tag_is_kebab_case_of_the_class_name():
    assert a.tag(a.SeqRightJoin(EXAMPLE_4.event, EXAMPLE_4.event)) == "seq-right-join"
    assert a.tag(a.Bgp(())) == "bgp"


def test_sexpr_of_rsepql_example_4():
    assert a.to_sexpr(EXAMPLE_4, PREFIXES) == (
        "(match (seq (event (bgp ((triple-pattern ?x :p ?y))) :w1 _ _) "
        "(event (bgp ((triple-pattern ?y :q ?z))) :w2 _ _) unrestricted))"
    )


def test_sexpr_without_prefixes_prints_full_iris():
    assert a.to_sexpr(a.Window(iri("w"), a.Bgp(()))) == f"(window <{EX}w> (bgp ()))"


def test_sexpr_of_expressions_and_enums():
    expr = a.Binary(a.BinaryOperator.LESS, a.Call("GETDURATION", ()),
                    ox.Literal("30", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")))
    assert a.to_sexpr(expr) == "(binary < (call GETDURATION ()) 30)"
    duration = ox.Literal("P10D", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#duration"))
    assert a.to_sexpr(duration) == '"P10D"^^<http://www.w3.org/2001/XMLSchema#duration>'


def test_tree_puts_one_operator_per_line():
    assert a.to_tree(EXAMPLE_4, PREFIXES).splitlines() == [
        "Match",
        "  event: Seq policy=unrestricted",
        "    left: Event window=:w1",
        "      pattern: Bgp triples={ ?x :p ?y }",
        "    right: Event window=:w2",
        "      pattern: Bgp triples={ ?y :q ?z }",
    ]


def test_json_round_trips_through_the_json_module():
    data = json.loads(json.dumps(a.to_json(EXAMPLE_4, PREFIXES)))
    assert data["type"] == "Match"
    assert data["event"]["policy"] == "unrestricted"
    assert data["event"]["right"]["window"] == ":w2"
    assert data["event"]["left"]["pattern"]["triples"][0]["object"] == "?y"


def test_nodes_are_frozen_and_hashable():
    same = a.Match(a.Seq(bep("w1", X, "p", Y), bep("w2", Y, "q", Z)))
    assert same == EXAMPLE_4 and hash(same) == hash(EXAMPLE_4)
    try:
        EXAMPLE_4.event = None  # type: ignore[misc]
    except AttributeError:
        pass
    else:
        raise AssertionError("algebra nodes must be immutable")


def test_query_pattern_strips_the_streaming_operator():
    query = a.Query(a.Select(), a.IStream(EXAMPLE_4), a.Dataset(), a.PushMatches(),
                    a.Dialect.RSEPQL)
    assert query.pattern is EXAMPLE_4
