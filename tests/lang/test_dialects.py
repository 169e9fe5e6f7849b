"""Each dialect's constructs and defaults (language.md sections 3-5)."""

import pytest
from shapes import match_of, nodes, shape

import sepia.algebra as a
from sepia.lang import QueryError, parse_query

P = "PREFIX : <http://e/>\n"
W = "FROM NAMED WINDOW :w ON :s [RANGE 10]\n"
GPMS = " ".join(f"DEFINE GPM {n} ON S1 {{ ?x :p{n} ?v{n} }}" for n in "ABCDE")


def spaseq(expression: str) -> str:
    query = parse_query(P + f"SELECT * FROM STREAM S1 :s WHERE {{ SEQ({expression}) {GPMS} }}")
    return shape(match_of(query).event)


@pytest.mark.parametrize(("expression", "expected"), [
    ("A , B", "(seq A B strict-contiguity)"),
    ("A ; B : C", "(seq (seq A B skip-till-next) C skip-till-any)"),
    ("A, B?, C", "(seq (seq A (optional B) strict-contiguity) C strict-contiguity)"),
    ("A ; !B ; C", "(seq (seq A (negation B) skip-till-next) C skip-till-next)"),
    ("A ; B! ; C", "(seq (seq A (negation B) skip-till-next) C skip-till-next)"),
    ("A & B | C", "(or (and A B) C)"),
    ("A | B & C", "(or A (and B C))"),
    ("A ; (B | C)+", "(seq A (kleene (or B C)) skip-till-next)"),
    ("A & B+ ; C", "(seq (and A (kleene B)) C skip-till-next)"),
])
def test_spaseq_operators_and_precedence(expression, expected):
    """Postfix binds tighter than &, & than |, | than the sequence operators."""
    assert spaseq(expression) == expected


@pytest.mark.parametrize(("sequence", "expected"), [
    ("{?a :p ?b}, {?a :q ?b}, {?a :r ?b}", "(seq :w (seq :w :w unrestricted) unrestricted)"),
    ("!{?a :p ?b}, {?a :q ?b}, {?a :r ?b}", "(no-head :w (seq :w :w unrestricted))"),
    ("{?a :p ?b}, !{?a :q ?b}, {?a :r ?b}", "(seq-without :w :w :w)"),
    ("{?a :p ?b}, {?a :q ?b}, !{?a :r ?b}", "(no-tail (seq :w :w unrestricted) :w)"),
])
def test_cqels_cep_triple_sequences(sequence, expected):
    """Eqs. 5-8 of seed 000: one negation at the head, in the middle or at the tail."""
    query = parse_query(P + "SELECT * " + W + f"WHERE {{ WINDOW :w {{ SEQ({sequence}) }} }}")
    assert shape(match_of(query).event).replace("<http://e/w>", ":w") == expected


def test_cqels_cep_event_clause_consumes_the_window_blocks():
    query = parse_query(P + "SELECT * " + W + "FROM NAMED WINDOW :v ON :s [RANGE 5]\n"
                            "WHERE { SEQ(:w, !:v) WINDOW :w { ?a :p ?b } WINDOW :v { ?a :q ?b }"
                            " ?a :r ?c }")
    match = match_of(query)
    assert isinstance(match.event, a.NoTail)
    assert a.to_sexpr(match.event.negated.pattern, {"": "http://e/"}) == (
        "(bgp ((triple-pattern ?a :q ?b)))")
    assert not any(isinstance(n, a.Window) for n in nodes(query.pattern))


def test_rsepql_first_and_last_nest():
    query = parse_query(P + "SELECT * " + W + "WHERE { MATCH { LAST(FIRST(EVENT :w { ?x :p ?y })"
                            " SEQ (EVENT :w { ?y :q ?z })) } }")
    assert shape(match_of(query).event) == (
        "(last (seq (first <http://e/w>) <http://e/w> unrestricted))")


def test_epsparql_optionalseq_takes_the_optional_groups_filter():
    query = parse_query(P + "SELECT * WHERE { { ?c :warn ?w FILTER(?w > 1) } OPTIONALSEQ "
                            "{ ?c :price ?p } { ?c :name ?n } }")
    event = match_of(query).event
    assert shape(event) == "(event-join (seq-right-join occ1 occ1) occ1)"
    assert a.to_sexpr(event.left.expression) == "(binary > ?w 1)"


def test_epsparql_rejects_optional_in_an_event_group():
    with pytest.raises(QueryError, match="OPTIONAL, MINUS and BIND"):
        parse_query(P + "SELECT * WHERE { {?a :p ?b} SEQ {?a :q ?c} OPTIONAL { ?a :r ?d } }")


@pytest.mark.parametrize(("query", "dialect", "report", "operator"), [
    ("SELECT * WHERE { ?a ?b ?c }", a.Dialect.SPARQL, a.Once(), None),
    ("REGISTER QUERY q AS SELECT * FROM STREAM :s [RANGE 5] WHERE { ?a ?b ?c }",
     a.Dialect.CSPARQL, a.Report((a.WindowClose(), a.NonEmpty())), a.RStream),
    ("REGISTER ISTREAM :o AS SELECT * " + W + "WHERE { WINDOW :w { ?a ?b ?c } }",
     a.Dialect.RSPQL, a.Report((a.WindowClose(), a.NonEmpty())), a.IStream),
    ("SELECT * " + W + "WHERE { WINDOW :w { ?a ?b ?c } }",
     a.Dialect.CQELS, a.Report((a.ContentChange(),)), a.IStream),
    ("SELECT * " + W + "WHERE { MATCH { EVENT :w { ?a ?b ?c } } }",
     a.Dialect.RSEPQL, a.PushMatches(), None),
    ("SELECT * WHERE { {?a :p ?b} SEQ {?a :q ?c} }", a.Dialect.EPSPARQL, a.PushMatches(), None),
    ("REGISTER DSTREAM :o AS SELECT * " + W + "REPORT EVERY 2 WHERE { WINDOW :w { ?a ?b ?c } }",
     a.Dialect.RSPQL, a.Report((a.Periodic(2),)), a.DStream),
])
def test_dialect_defaults(query, dialect, report, operator):
    compiled = parse_query(P + query)
    assert compiled.dialect is dialect
    assert compiled.report == report
    if operator is None:
        assert isinstance(compiled.expression, a.Project)
    else:
        assert isinstance(compiled.expression, operator)

