"""Query text printed from the algebra compiles back to the same algebra (round trip), for
every W3C positive syntax test, every paper and example query, and each extension."""

import re
import sys
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sepia.algebra as a
from sepia.algebra.text import QueryText
from sepia.lang import parse_query

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "conformance"))
from syntax_manifest import syntax_tests  # noqa: E402

P = "PREFIX : <http://e/>\n"
W = "FROM NAMED WINDOW :w ON :s [RANGE 10]\nFROM NAMED WINDOW :v ON :s [RANGE 5]\n"
GPMS = "DEFINE GPM A ON S1 { ?x :p ?a } DEFINE GPM B ON S1 { ?x :q ?b FILTER(?b > ?a) } " \
       "DEFINE GPM C ON S1 { ?x :r ?c }"
EXTENSIONS = [
    P + "SELECT * " + W + "WHERE { WINDOW :w { SEQ(!{?a :p ?b}, {?a :q ?b}, {?a :r ?b}) } }",
    P + "SELECT * " + W + "WHERE { WINDOW :w { SEQ({?a :p ?b}, !{?a :q ?b}, {?a :r ?b}) } }",
    P + "SELECT * " + W + "WHERE { SEQ(:w, !:v) WINDOW :w { ?a :p ?b } WINDOW :v { ?a :q ?b } }",
    P + "SELECT * " + W + "EVENT POLICY RECENT WHERE { MATCH { LAST(EVENT :w { ?x :p ?y }) SEQ "
        "(FIRST(EVENT :v { ?y :q ?z }) SEQ EVENT :w { ?z :r ?u }) } }",
    P + "SELECT * WITHIN 2h TUMBLING FROM STREAM S1 :s PARTITION BY ?x WHERE { "
        "SEQ(A ; !B : (C | A)+, B? & C) " + GPMS + " }",
    P + "SELECT * WHERE { { ?c :w ?w FILTER(?w > 1) } OPTIONALSEQ { ?c :p ?p } EQUALS "
        "{ ?c :q ?q } UNION { ?c :r ?r } FILTER(getDURATION() < 5) }",
    P + "REGISTER STREAM out AS CONSTRUCT { ?a :seen ?b } FROM STREAM :s [RANGE 10 STEP 5] "
        "REPORT EVERY 5 AND NON EMPTY WHERE { ?a :p ?b FILTER(timestamp(?a, :p, ?b) > 2) }",
    P + "SELECT ?a WHERE { STREAM :s [NOW] { ?a :p ?b } STREAM :t [TRIPLES 5] { ?a :q ?c } }",
    P + "REGISTER DSTREAM :o AS SELECT * FROM NAMED WINDOW :w ON :s [FROM 1 TO 9] "
        "FROM NAMED WINDOW :v ON :s [LANDMARK FROM 3] REPORT ON CONTENT CHANGE OF :v "
        "WHERE { WINDOW :w { ?a ?b ?c } WINDOW :v { ?a ?b ?d } }",
    P + "SELECT ?a (COUNT(DISTINCT ?b) AS ?n) WHERE { ?a :p ?b } GROUP BY ?a (?b + 1) "
        "HAVING (SUM(?b) > 3) ORDER BY DESC(?n) LIMIT 2",
]


def _normal(query: a.Query) -> str:
    """The S-expression of a query with generated names (fresh variables, blank nodes) erased."""
    return re.sub(r"\?_\d+", "?_", re.sub(r"_:sepia\.\d+", "_:b", a.to_sexpr(query)))


def _queries() -> list[tuple[str, str]]:
    files = [t.path for t in syntax_tests() if t.positive]
    files += sorted((ROOT / "tests" / "lang" / "papers").glob("*.rq"))
    files += sorted((ROOT / "examples").glob("*/*.rq"))
    named = [(f"{p.parent.name}/{p.name}", p.read_text(encoding="utf-8")) for p in files]
    return named + [(f"extension-{i}", q) for i, q in enumerate(EXTENSIONS)]


@pytest.mark.parametrize(("name", "text"), _queries(), ids=[n for n, _ in _queries()])
def test_query_text_round_trips(name, text):
    query = parse_query(text, syntax_only=True)  # the W3C syntax tests call unknown functions
    again = parse_query(a.to_sparql(query), syntax_only=True)
    assert _normal(again) == _normal(query)


def test_durations_print_in_the_largest_exact_unit():
    query = parse_query(P + "SELECT * FROM NAMED WINDOW :w ON :s [RANGE PT10M STEP 90s] "
                            "WHERE { WINDOW :w { ?a ?b ?c } }")
    assert "[RANGE 10m STEP 90s]" in a.to_sparql(query)


def test_an_operator_no_query_writes_has_no_text():
    bgp = a.Bgp(())
    with pytest.raises(ValueError, match="IntervalJoin"):
        QueryText().elements(a.Match(a.IntervalJoin(a.Event(bgp), a.Event(bgp))))


def _gpm(label: str) -> a.Event:
    triple = a.TriplePattern(ox.Variable("x"), ox.NamedNode(f"http://e/p{label}"),
                             ox.Variable(label.lower()))
    return a.Event(a.Bgp((triple,)), stream=ox.NamedNode("http://e/s"), label=label)


def _spaseq_trees():
    policies = st.sampled_from([a.SelectionPolicy.STRICT_CONTIGUITY,
                                a.SelectionPolicy.SKIP_TILL_NEXT,
                                a.SelectionPolicy.SKIP_TILL_ANY])
    leaves = st.sampled_from("ABC").map(_gpm)
    return st.recursive(leaves, lambda inner: st.one_of(
        st.builds(a.Seq, inner, inner, policies), st.builds(a.And, inner, inner),
        st.builds(a.Or, inner, inner), st.builds(a.Kleene, inner),
        st.builds(a.Optional, inner), st.builds(a.Negation, inner)), max_leaves=6)


def test_spaseq_expressions_print_and_parse_to_the_same_tree():
    """Any SPAseq operator tree, printed with its parentheses, parses back to itself
    (precedence and associativity of , ; : + ? ! & | agree between printer and grammar)."""
    @settings(max_examples=150, deadline=None)
    @given(_spaseq_trees())
    def round_trip(event):
        text = ("SELECT * FROM STREAM S1 <http://e/s> WHERE { "
                + " ".join(QueryText().event_elements(event)) + " }")
        assert parse_query(text).pattern.inner.event == event

    round_trip()
