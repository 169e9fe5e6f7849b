"""SPARQL 1.1's translation into the algebra (section 18.2), checked on small queries whose
algebra follows by hand from the specification."""

import pyoxigraph as ox
import pytest

import sepia.algebra as a
from sepia.lang import QueryError, parse_query

P = "PREFIX : <http://e/>\n"
X = {"": "http://e/"}


def sexpr(query: str) -> str:
    return a.to_sexpr(parse_query(P + query).expression, X)


def test_optional_takes_its_filter_as_the_left_join_condition():
    assert sexpr("SELECT * WHERE { ?a :p ?b OPTIONAL { ?b :q ?c FILTER(?c > 1) } }") == (
        "(project (left-join (bgp ((triple-pattern ?a :p ?b))) (bgp ((triple-pattern ?b :q ?c)))"
        " (binary > ?c 1)) (?a ?b ?c))")


def test_filters_apply_to_the_whole_group_and_bind_extends_what_precedes():
    assert sexpr("SELECT ?d WHERE { FILTER(?a) ?a :p ?b BIND(?b + 1 AS ?d) MINUS { ?a :r ?b } }") \
        == ("(project (filter ?a (minus (extend (bgp ((triple-pattern ?a :p ?b))) ?d"
            " (binary + ?b 1)) (bgp ((triple-pattern ?a :r ?b))))) (?d))")


def test_group_by_with_aggregates_having_and_order():
    query = parse_query(P + "SELECT ?a (COUNT(DISTINCT ?b) AS ?n) WHERE { ?a :p ?b } "
                            "GROUP BY ?a HAVING (SUM(?b) > 3) ORDER BY DESC(?n) LIMIT 2 OFFSET 1")
    sliced = query.expression
    assert (sliced.offset, sliced.limit) == (1, 2)
    order = sliced.inner.inner
    assert order.conditions == (  # a slice's ties broken by the projected variables
        a.OrderCondition(ox.Variable("n"), descending=True), a.OrderCondition(ox.Variable("a")),
    )
    extend = order.inner
    assert extend.variable == ox.Variable("n")
    having = extend.inner
    group = having.inner
    assert group.variables == (ox.Variable("a"),)
    count, total = group.aggregates
    assert count.aggregate == a.Aggregate(a.AggregateFunction.COUNT, (ox.Variable("b"),),
                                          distinct=True)
    assert extend.expression == count.variable
    assert having.expression == a.Binary(a.BinaryOperator.GREATER, total.variable,
                                         ox.Literal("3", datatype=ox.NamedNode(
                                             "http://www.w3.org/2001/XMLSchema#integer")))


def test_count_star_and_group_concat_separator():
    query = parse_query(P + 'SELECT (COUNT(*) AS ?n) (GROUP_CONCAT(?b; SEPARATOR=", ") AS ?s) '
                            "WHERE { ?a :p ?b }")
    group = query.pattern.inner.inner.inner
    assert [b.aggregate for b in group.aggregates] == [
        a.Aggregate(a.AggregateFunction.COUNT, ()),
        a.Aggregate(a.AggregateFunction.GROUP_CONCAT, (ox.Variable("b"),), separator=", ")]


def test_property_paths_inverse_links_become_triples_others_stay_paths():
    assert sexpr("SELECT * WHERE { ?a ^:p ?b . ?b :q/:r* ?c . ?c !(:s|^:t) ?d }") == (
        "(project (join (join (bgp ((triple-pattern ?b :p ?a))) (path-pattern ?b (sequence"
        " (link :q) (zero-or-more (link :r))) ?c)) (path-pattern ?c (negated-set (:s) (:t)) ?d))"
        " (?b ?a ?c ?d))")


def test_nested_path_element_with_and_without_term():
    assert sexpr("SELECT * WHERE { ?s [:means]/:end ?c }") == (
        "(project (path-pattern ?s (sequence (nested-test (link :means) _) (link :end)) ?c)"
        " (?s ?c))")


def test_blank_node_property_lists_and_collections_expand():
    query = parse_query(P + "SELECT * WHERE { ?a :p [ :q ?b ] ; :r (1 ?c) }")
    triples = query.pattern.inner.triples
    predicates = [t.predicate.value.rsplit("/", 1)[-1].rsplit("#", 1)[-1] for t in triples]
    assert predicates == ["p", "q", "r", "first", "rest", "first", "rest"]
    assert query.pattern.variables == (ox.Variable("a"), ox.Variable("b"), ox.Variable("c"))


def test_values_subquery_and_union():
    assert sexpr("SELECT ?a WHERE { { SELECT ?a WHERE { ?a :p ?b } LIMIT 1 } UNION "
                 "{ VALUES ?a { :x UNDEF } } }") == (
        "(project (union (slice (project (bgp ((triple-pattern ?a :p ?b))) (?a)) 0 1)"
        " (values (?a) ((:x) (_)))) (?a))")


def test_construct_where_and_ask_and_describe():
    construct = parse_query(P + "CONSTRUCT WHERE { ?a :p ?b }")
    assert construct.form == a.Construct((a.TriplePattern(
        ox.Variable("a"), ox.NamedNode("http://e/p"), ox.Variable("b")),))
    assert isinstance(parse_query(P + "ASK { ?a :p ?b }").form, a.Ask)
    assert parse_query(P + "DESCRIBE :x").form == a.Describe((ox.NamedNode("http://e/x"),))


def test_base_resolves_relative_iris_and_escapes_are_read():
    query = parse_query("BASE <http://b/dir/>\nSELECT * WHERE { <x> <y> 'a\\tb\\u0041' }")
    (triple,) = query.pattern.inner.triples
    assert (triple.subject.value, triple.object.value) == ("http://b/dir/x", "a\tbA")


def test_bind_may_not_rebind_a_variable_of_the_group():
    with pytest.raises(QueryError, match="BIND assigns \\?b"):
        parse_query(P + "SELECT * WHERE { ?a :p ?b BIND(1 AS ?b) }")


def test_ask_and_construct_may_group_and_project_nothing():
    ask = parse_query(P + "ASK WHERE { ?x ?p ?y } GROUP BY ?x")
    assert a.to_sexpr(ask.expression) == "(group (bgp ((triple-pattern ?x ?p ?y))) (?x) ())"
    construct = parse_query(P + "CONSTRUCT { ?x :n 1 } WHERE { ?x ?p ?y } LIMIT 3")
    assert isinstance(construct.expression, a.Slice)
    assert isinstance(construct.expression.inner, a.Bgp)
