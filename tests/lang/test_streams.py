"""Window specs, durations, REPORT, WITHIN, PARTITION BY and EVENT POLICY (language.md
sections 2-5), table-driven: each spec is lowered to the window it names."""

import pyoxigraph as ox
import pytest

import sepia.algebra as a
from sepia.lang import QueryError, parse_query
from sepia.rdf.time import TimeKind

P = "PREFIX : <http://e/>\n"


def window_query(spec: str, extra: str = "") -> a.Query:
    return parse_query(P + f"SELECT * FROM NAMED WINDOW :w ON :s [{spec}] {extra}"
                           "WHERE { WINDOW :w { ?a ?b ?c } }")


@pytest.mark.parametrize(("spec", "window", "kind"), [
    ("RANGE 10", a.Sliding(10, 1, 0), TimeKind.ABSTRACT),
    ("RANGE 10 STEP 2", a.Sliding(10, 2, 0), TimeKind.ABSTRACT),
    ("RANGE 10 SLIDE 5 START 3", a.Sliding(10, 5, 3), TimeKind.ABSTRACT),
    ("TUMBLING 4", a.Sliding(4, 4, 0), TimeKind.ABSTRACT),
    ("TUMBLING 4 START 1", a.Sliding(4, 4, 1), TimeKind.ABSTRACT),
    ("RANGE PT10S STEP PT5S", a.Sliding(10_000, 5_000, 0), TimeKind.DATETIME),
    ("RANGE 500ms", a.Sliding(500, 1, 0), TimeKind.DATETIME),
    ("RANGE 10m STEP 1m", a.Sliding(600_000, 60_000, 0), TimeKind.DATETIME),
    ("RANGE 2h", a.Sliding(7_200_000, 1, 0), TimeKind.DATETIME),
    ("RANGE 1d", a.Sliding(86_400_000, 1, 0), TimeKind.DATETIME),
    ("RANGE P1DT1H", a.Sliding(90_000_000, 1, 0), TimeKind.DATETIME),
    ("RANGE PT1.5S", a.Sliding(1_500, 1, 0), TimeKind.DATETIME),
    ("RANGE 3 SECONDS STEP 1 SECOND", a.Sliding(3_000, 1_000, 0), TimeKind.DATETIME),
    ("NOW", a.Now(), None),
    ("ALL", a.Landmark(0), None),
    ("LANDMARK", a.Landmark(0), None),
    ("LANDMARK FROM 5", a.Landmark(5), TimeKind.ABSTRACT),
    ("TRIPLES 7", a.CountBased(7), None),
    ("RANGE TRIPLES 7", a.CountBased(7), None),
    ("ELEMENTS 3", a.CountBased(3), None),
    ("FROM 2 TO 9", a.Interval(2, 9), TimeKind.ABSTRACT),
])
def test_window_specs(spec, window, kind):
    query = window_query(spec)
    assert query.dataset.windows == (a.WindowDecl(ox.NamedNode("http://e/w"),
                                                  ox.NamedNode("http://e/s"), window),)
    assert query.time_kind is kind


def test_durations_with_years_or_months_are_rejected():
    with pytest.raises(QueryError, match="years or months"):
        window_query("RANGE P1M")


def test_csparql_from_stream_window_is_merged_into_the_default_graph():
    query = parse_query(P + "REGISTER QUERY q AS SELECT * FROM STREAM :s [RANGE 10 STEP 5] "
                            "WHERE { ?a :p ?b FILTER(timestamp(?a, :p, ?b) > 3) }")
    (window,) = query.dataset.windows
    assert window.into_default and window.stream == ox.NamedNode("http://e/s")
    assert window.spec == a.Sliding(10, 5, 0)
    assert query.dialect is a.Dialect.CSPARQL
    assert query.registration == a.Registration(a.RegistrationKind.QUERY, "q")
    assert a.to_sexpr(query.pattern.inner.expression, {"": "http://e/"}) == (
        "(binary > (call TIMESTAMP (?a :p ?b)) 3)")


def test_cqels_inline_stream_gets_a_generated_window():
    query = parse_query(P + "SELECT ?a WHERE { STREAM :s [RANGE 5] { ?a :p ?b } }")
    (window,) = query.dataset.windows
    assert window.spec == a.Sliding(5, 1, 0) and not window.into_default
    assert query.pattern.inner == a.Window(window.name, a.Bgp((a.TriplePattern(
        ox.Variable("a"), ox.NamedNode("http://e/p"), ox.Variable("b")),)))
    assert query.dataset.streams == (a.StreamDecl(ox.NamedNode("http://e/s")),)


def test_report_strategies_with_and_without_window():
    query = window_query("RANGE 10", "REPORT ON CONTENT CHANGE AND NON EMPTY OF :w AND EVERY 5\n")
    w = ox.NamedNode("http://e/w")
    assert query.report == a.Report((a.ContentChange(None), a.NonEmpty(w), a.Periodic(5, None)))


def test_within_partition_and_event_policy():
    query = parse_query(P + "SELECT * WITHIN PT1H TUMBLING FROM STREAM S1 :s\n"
                            "PARTITION BY ?c EVENT POLICY RECENT\n"
                            "WHERE { SEQ(A : B) DEFINE GPM A ON S1 { ?c :p ?x } "
                            "DEFINE GPM B ON S1 { ?c :q ?y } }")
    assert query.within == a.Within(3_600_000, tumbling=True)
    assert query.partition_by == ox.Variable("c")
    assert query.event_policy is a.SelectionPolicy.RECENT


@pytest.mark.parametrize(("policy", "expected"), [
    ("", a.SelectionPolicy.UNRESTRICTED),
    ("EVENT POLICY CHRONOLOGICAL", a.SelectionPolicy.CHRONOLOGICAL),
    ("EVENT POLICY naive", a.SelectionPolicy.NAIVE),
])
def test_event_policy_reaches_rsepql_seq(policy, expected):
    query = parse_query(P + f"SELECT * FROM NAMED WINDOW :w ON :s [RANGE 5] {policy} WHERE {{ "
                            "MATCH { EVENT :w { ?x :p ?y } SEQ EVENT :w { ?y :q ?z } } }")
    assert query.pattern.inner.event.policy is expected
