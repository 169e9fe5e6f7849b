"""Every query of the papers compiles to the algebra its definitions describe."""

import pyoxigraph as ox
import pytest
from shapes import match_of, paper, shape

import sepia.algebra as a

EX = "http://example.org/"
PREFIXES = {"": EX, "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#"}


def test_cqels_cep_example_6_is_no_tail_of_a_sequence_joined_with_the_path():
    """Example 7 models it as EC = (publicTransport, [RANGE 10m], SEQ(P1, P1, !P2)) and
    P = {?v rdf:type :subway . ?s (^:beg/[:means :subway]/:end)+ :c}; Eq. 7 gives NO_TAIL."""
    query = paper("cqels-cep-example-6")
    assert query.dialect is a.Dialect.CQELS_CEP
    assert a.to_sexpr(query.expression, PREFIXES) == (
        "(project (join (match (no-tail (seq (event (bgp ((triple-pattern ?v :delayAt ?s))) :W _ _)"
        " (event (bgp ((triple-pattern ?v :delayAt ?s))) :W _ _) unrestricted)"
        " (event (bgp ((triple-pattern ?v :arriveAt ?s))) :W _ _)))"
        " (join (bgp ((triple-pattern ?v rdf:type :subway)))"
        " (path-pattern ?s (one-or-more (sequence (sequence (inverse (link :beg))"
        " (nested-test (link :means) :subway)) (link :end))) :c))) (?s))"
    )
    assert query.dataset.default_graphs == (ox.NamedNode(EX + "transportationMap"),)
    window = query.dataset.windows[0]
    assert (window.name, window.stream) == (ox.NamedNode(EX + "W"),
                                            ox.NamedNode(EX + "publicTransport"))
    assert window.spec == a.Sliding(width=600_000, slide=1, t0=0)
    assert query.time_kind.value == "dateTime"
    assert query.report == a.PushMatches()


def test_rspql_example_10_is_rstream_over_two_windows_and_the_shops_graph():
    query = paper("rspql-example-10")
    assert query.dialect is a.Dialect.RSPQL
    assert a.to_sexpr(query.expression, PREFIXES) == (
        "(r-stream (project (join (join (window :w1 (bgp ((triple-pattern ?shopper :isNearby"
        " ?shop)))) (window :w2 (bgp ((triple-pattern ?shop_owner :offers ?coupon)))))"
        " (bgp ((triple-pattern ?shop_owner :owns ?shop)))) (?shopper ?shop ?shop_owner"
        " ?coupon)))"
    )
    w1, w2 = query.dataset.windows
    assert (w1.spec, w2.spec) == (a.Sliding(5, 2, 1), a.Sliding(2, 2, 0))
    assert query.report == a.Report((a.WindowClose(w2.name), a.NonEmpty(w2.name)))
    assert query.dataset.default_graphs == (ox.NamedNode(EX + "shops"),)
    assert query.registration == a.Registration(a.RegistrationKind.RSTREAM, EX + "out")


def test_rsepql_example_4_is_a_match_of_two_beps_in_sequence():
    query = paper("rsepql-example-4")
    assert query.dialect is a.Dialect.RSEPQL
    assert a.to_sexpr(query.pattern, PREFIXES) == (
        "(project (match (seq (event (bgp ((triple-pattern ?x :p ?y))) :w1 _ _)"
        " (event (bgp ((triple-pattern ?y :q ?z))) :w2 _ _) unrestricted)) (?x ?y ?z))"
    )
    assert [w.spec for w in query.dataset.windows] == [a.Landmark(1), a.Sliding(5, 1, 0)]


def test_epsparql_query_5_is_a_construct_over_eq_left_join_of_sequences():
    query = paper("epsparql-query-5")
    assert query.dialect is a.Dialect.EPSPARQL
    assert isinstance(query.form, a.Construct) and len(query.form.template) == 2
    event = match_of(query).event
    assert shape(event) == (
        "(event-filter (eq-left-join (seq-join occ2 occ1 unrestricted)"
        " (seq-join (seq-join occ2 occ1 unrestricted) occ1 unrestricted)))"
    )
    assert a.to_sexpr(event.expression).startswith(
        "(binary && (unary ! (call BOUND (?inbetween))) (binary < (call GETDURATION ()) "
        '"P10D"^^<http://www.w3.org/2001/XMLSchema#duration>))')
    assert event.inner.expression is None


def test_epsparql_query_6_projects_an_average_over_the_same_operators():
    query = paper("epsparql-query-6")
    extend = query.pattern.inner
    assert isinstance(extend, a.Extend) and extend.variable == ox.Variable("average")
    assert shape(match_of(query).event) == (
        "(event-filter (eq-left-join (seq-join occ1 occ2 unrestricted)"
        " (seq-join (seq-join occ1 occ1 unrestricted) occ2 unrestricted)))"
    )


@pytest.mark.parametrize(("name", "expected"), [
    ("spaseq-q1-smart-grid", "(seq (seq A (kleene B) skip-till-next) C strict-contiguity)"),
    ("spaseq-q2-credit-card", "(seq A (kleene B) strict-contiguity)"),
    ("spaseq-q3-head-and-shoulders",
     "(seq (seq (seq (seq (seq (seq A B strict-contiguity) C strict-contiguity) D"
     " strict-contiguity) E strict-contiguity) F strict-contiguity) G strict-contiguity)"),
    ("spaseq-q4-v-shaped", "(seq (seq A B strict-contiguity) C strict-contiguity)"),
    ("spaseq-q5-traffic", "(seq A (and B C) skip-till-next)"),
    ("spaseq-q6-trajectory", "(seq (seq A (kleene B) strict-contiguity) C strict-contiguity)"),
])
def test_spaseq_appendix_queries(name, expected):
    query = paper(name)
    assert query.dialect is a.Dialect.SPASEQ
    assert shape(match_of(query).event) == expected
    assert query.report == a.PushMatches()
    assert query.within.width == (60 if "q1" in name or "q3" in name or "q4" in name
                                  else 30) * 60_000


def test_spaseq_q1_gpms_keep_their_streams_filters_and_background_graph():
    event = match_of(paper("spaseq-q1-smart-grid")).event
    a_gpm, kleene_b = event.left.left, event.left.right
    streams = {"A": a_gpm.stream, "B": kleene_b.inner.stream, "C": event.right.stream}
    assert {k: v.value.rsplit("/", 1)[1] for k, v in streams.items()} == {
        "A": "power", "B": "weather", "C": "storage"}
    assert isinstance(a_gpm.pattern, a.Filter)
    graph = a_gpm.pattern.inner.right
    assert isinstance(graph, a.Graph) and graph.name.value == "http://smartgrid.org/db"
    assert a.to_sexpr(event.right.pattern.expression) == "(binary < ?fr2 ?fr1)"
