"""Queries that used to crash or be accepted silently: each is one located QueryError, the
same for `explain` and `run` (both compile through `parse_query`)."""

from __future__ import annotations

import pytest

from sepia.lang import QueryError, parse_query

P = "PREFIX : <http://example.org/>\n"


def window(spec: str, where: str = "WINDOW :w { ?s :p ?o }") -> str:
    return P + f"REGISTER RSTREAM :q AS SELECT * FROM NAMED WINDOW :w ON :s [{spec}] " \
        f"WHERE {{ {where} }}"


DEEP = "the query is nested more than 150 levels deep"
CASES = {
    "600 UNION branches": (window("RANGE 5 STEP 1", " UNION ".join(["{ ?s :p ?o }"] * 600)),
                           1, DEEP),
    "600 parentheses": (window("RANGE 5 STEP 1", "?s :p ?o FILTER(" + "(" * 600 + "?o"
                               + ")" * 600 + ")"), 1, DEEP),
    "3000 nested groups": (window("RANGE 5 STEP 1", "{" * 3000 + "?s :p ?o" + "}" * 3000),
                           1, DEEP),
    "STEP 0": (window("RANGE 5 STEP 0"), 2, "a window step (STEP, SLIDE) of 0"),
    "RANGE 0": (window("RANGE 0 STEP 1"), 2, "a window width (RANGE) of 0"),
    "TUMBLING 0": (window("TUMBLING 0"), 2, "a window width (RANGE) of 0"),
    "unknown function": (window("RANGE 5", "?s :p ?o FILTER(<http://example.org/fn>(?o))"),
                         2, "unknown function <http://example.org/fn>"),
    "WITHIN 0": (P + "SELECT * WITHIN 0\nFROM STREAM S1 :s\nWHERE { SEQ(A, B)\n"
                 "DEFINE GPM A ON S1 { ?x :p ?y }\nDEFINE GPM B ON S1 { ?x :p ?z } }",
                 2, "WITHIN 0 admits no match"),
}


@pytest.mark.parametrize("name", CASES)
def test_a_hostile_query_is_one_located_error(name: str) -> None:
    text, line, message = CASES[name]
    with pytest.raises(QueryError) as caught:
        parse_query(text, source="q.rq")
    assert caught.value.line == line
    assert caught.value.message == message
    assert str(caught.value).startswith(f"q.rq:{line}:")


def test_the_checks_leave_ordinary_queries_alone() -> None:
    parse_query(window("RANGE 5 STEP 1", " UNION ".join(["{ ?s :p ?o }"] * 50)))
    parse_query(window("RANGE 1000d STEP 1ms"))
    cast = "<http://www.w3.org/2001/XMLSchema#integer>(?o)"
    parse_query(window("RANGE 5", f"?s :p ?o FILTER({cast} > 1)"))
