"""Every static check rejects the query before any data is read, pointing at the offending
text: line, column, the text itself, the message and what was expected."""

import pytest

from sepia.lang import QueryError, parse_query

P = "PREFIX : <http://e/>\n"
W = "FROM NAMED WINDOW :w ON :s [RANGE 10]\n"

CASES = [
    # (name, query, line, column, offending text, words of the message, words of expected)
    ("undeclared window", P + "SELECT * " + W + "WHERE { WINDOW :v { ?a ?b ?c } }",
     3, 16, ":v", "undeclared window <http://e/v>", "FROM NAMED WINDOW <http://e/v>"),
    ("undeclared event window", P + "SELECT * WHERE { MATCH { EVENT :w1 { ?a :p ?b } } }",
     2, 32, ":w1", "undeclared window <http://e/w1>", "FROM NAMED WINDOW"),
    ("undeclared report window", P + "SELECT * " + W + "REPORT ON WINDOW CLOSE OF :x\n"
     "WHERE { WINDOW :w { ?a ?b ?c } }", 3, 27, ":x", "undeclared window <http://e/x>",
     "FROM NAMED WINDOW"),
    ("undeclared stream", P + "SELECT * FROM STREAM S1 <http://s>\n"
     "WHERE { SEQ(A) DEFINE GPM A ON S2 { ?a ?b ?c } }", 3, 32, "S2",
     "undeclared stream S2", "FROM STREAM S2 <iri>"),
    ("undeclared GPM", P + "SELECT * FROM STREAM S1 <http://s>\nWHERE {\n  SEQ(A; B)\n"
     "  DEFINE GPM A ON S1 { ?a ?b ?c }\n}", 4, 10, "B", "undeclared GPM B",
     "DEFINE GPM B ON"),
    ("undeclared prefix", "SELECT * WHERE { ?s ex:p ?o }", 1, 21, "ex:p",
     "undeclared prefix 'ex:'", "PREFIX ex:"),
    ("second negation", P + "SELECT * " + W + "WHERE { WINDOW :w { SEQ({?a :p ?b}, "
     "!{?a :q ?b}, !{?a :r ?b}) } }", 3, 50, "!{?a :r ?b}", "negate only one element",
     "at most one '!'"),
    ("mixed time units", P + "SELECT * FROM NAMED WINDOW :w ON :s [RANGE 10m]\n"
     "FROM NAMED WINDOW :v ON :s [RANGE 5]\nWHERE { WINDOW :w { ?a ?b ?c } }", 3, 35, "5",
     "'10m' is wall-clock, '5' is abstract", "same kind of duration"),
    ("mixed units in WITHIN", P + "SELECT * WITHIN 30 MINUTES FROM STREAM S1 <http://s>\n"
     "FROM NAMED WINDOW :w ON :s [TUMBLING 4]\nWHERE { WINDOW :w { ?a ?b ?c } }", 3, 38,
     "4", "'30 MINUTES' is wall-clock", "same kind"),
    ("aggregate in FILTER", P + "SELECT ?a WHERE { ?a :p ?b FILTER(COUNT(?b) > 2) }", 2, 28,
     "FILTER(COUNT(?b) > 2)", "aggregates are not allowed in FILTER", "SELECT, HAVING"),
    ("aggregate in BIND", P + "SELECT ?a WHERE { ?a :p ?b BIND(SUM(?b) AS ?s) }", 2, 28,
     "BIND(SUM(?b) AS ?s)", "aggregates are not allowed in BIND", "SELECT, HAVING"),
    ("ungrouped projection", P + "SELECT ?a ?b (COUNT(*) AS ?n) WHERE { ?a :p ?b } GROUP BY ?a",
     2, 11, "?b", "?b is projected but neither grouped nor aggregated", "GROUP BY ?b"),
    ("nested aggregate", P + "SELECT (SUM(COUNT(?b)) AS ?n) WHERE { ?a :p ?b }", 2, 8,
     "(SUM(COUNT(?b)) AS ?n)", "may not contain another aggregate", None),
    ("unknown function", P + "SELECT * WHERE { ?a :p ?b FILTER(getDURATON() < 3) }", 2, 34,
     "getDURATON", "unknown function 'getDURATON'", "GETDURATION"),
    ("wrong arity", P + "SELECT * WHERE { ?a :p ?b FILTER(REGEX(?b)) }", 2, 34, "REGEX(?b)",
     "REGEX() takes 2 to 3 argument(s), found 1", None),
    ("unknown XSD function", P + "SELECT * WHERE { ?a :p ?b FILTER("
     "<http://www.w3.org/2001/XMLSchema#foo>(?b)) }", 2, 34,
     "<http://www.w3.org/2001/XMLSchema#foo>(?b)", "unknown function", "XSD constructor"),
    ("SERVICE", P + "SELECT * WHERE { SERVICE <http://dbpedia.org/sparql> { ?a ?b ?c } }", 2,
     18, "SERVICE <http://dbpedia.org/sparql> { ?a ?b ?c }", "SERVICE is not supported",
     "--data"),
    ("LOAD", "LOAD <http://example.org/data.ttl>", 1, 1, "LOAD", "LOAD is not supported", None),
    ("triple sequence outside WINDOW", P + "SELECT * WHERE { SEQ({?a :p ?b}, {?a :q ?b}) }", 2,
     18, "SEQ({?a :p ?b}, {?a :q ?b})", "must be written inside a WINDOW block",
     "WINDOW <w>"),
    ("window sequence without its block", P + "SELECT * " + W + "WHERE { SEQ(:w, !:v) "
     "WINDOW :w { ?a :p ?b } }", 3, 18, ":v", "SEQ names window <http://e/v>",
     "WINDOW <http://e/v>"),
    ("syntax error", P + "SELECT ?x WHERE {\n ?x :p ?y . FILTER(?x ^ 3) }", 3, 23, "^",
     "unexpected '^'", "'&&'"),
]


@pytest.mark.parametrize(("name", "query", "line", "column", "offending", "message", "expected"),
                         CASES, ids=[c[0] for c in CASES])
def test_static_check(name, query, line, column, offending, message, expected):
    with pytest.raises(QueryError) as raised:
        parse_query(query)
    error = raised.value
    assert (error.line, error.column, error.offending) == (line, column, offending)
    assert message in error.message
    if expected is not None:
        assert expected in error.expected


def test_the_message_shows_the_query_line_with_a_caret_under_the_offending_text():
    with pytest.raises(QueryError) as raised:
        parse_query("PREFIX : <http://e/>\nSELECT * WHERE { ?s ex:p ?o }", source="q.rq")
    assert str(raised.value).splitlines() == [
        "q.rq:2:21: undeclared prefix 'ex:'; expected a declaration 'PREFIX ex: <...>' "
        "before it is used",
        "2 | SELECT * WHERE { ?s ex:p ?o }",
        "                        ^^^^",
    ]


def test_end_of_query_is_pointed_at():
    with pytest.raises(QueryError) as raised:
        parse_query("SELECT * WHERE { ?s ?p ?o ")
    assert raised.value.message == "unexpected end of query"
    assert (raised.value.line, raised.value.column) == (1, 26)


@pytest.mark.parametrize("query", [
    "PREFIX : <http://examp]le.org/ns#>\nSELECT * WHERE { ?s :p ?o }",
    "BASE <http://e/>\nSELECT * WHERE { ?s <a b> ?o }",
    "SELECT * WHERE { ?s ?p 'unterminated }",
])
def test_malformed_text_is_a_query_error_not_a_crash(query):
    with pytest.raises(QueryError):
        parse_query(query)


@pytest.mark.parametrize(("query", "column"), [
    ("SELECT * WHERE { ?a <http://e/p> ?b FILTER(getDURATION() < 3) }", 44),
    ("SELECT (getSTARTTIME() AS ?t) WHERE { {?a <http://e/p> ?b} SEQ {?a <http://e/q> ?c} }", 9),
])
def test_interval_functions_need_an_event_pattern(query, column):
    with pytest.raises(QueryError) as raised:
        parse_query(query)
    assert raised.value.column == column
    assert raised.value.message.endswith("has no interval to read here")
    assert "EP-SPARQL operators" in raised.value.expected


def test_interval_functions_in_a_nested_operand_group_are_fine():
    query = parse_query("SELECT * WHERE { {?a <http://e/p> ?b} SEQ "
                        "{ ?a <http://e/q> ?c FILTER(getENDTIME() > 3) } }")
    assert query.dialect.value == "EP-SPARQL"
