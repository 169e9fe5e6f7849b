"""Queries in the syntax the systems' own users write (tests/lang/published/, each file
names its source): C-SPARQL's engine puts REGISTER QUERY before the prologue, its papers
after it; CQELS puts STREAM windows inside WHERE; RSP4J / YASPER / RSP-JS write RSP-QL
with ISO durations and `ON STREAM`. Each must compile to the dialect, registration and
windows its system gives it (times in ms for unit durations)."""

from __future__ import annotations

from pathlib import Path

import pytest

import sepia.algebra as a
from sepia.lang import parse_query

PUBLISHED = Path(__file__).parent / "published"
EX = "http://example.org/"

# file -> (dialect, registration (kind, name) or None, window specs in declaration order)
EXPECTED = {
    "csparql-engine-register-first": (
        a.Dialect.CSPARQL, ("QUERY", "WhoLikesWhat"), [a.Sliding(5000, 1000, 0)]),
    "csparql-engine-aggregate-two-streams": (
        a.Dialect.CSPARQL, ("QUERY", "TrendyObjects"),
        [a.Sliding(5000, 1000, 0), a.Sliding(5000, 1000, 0)]),
    "csparql-engine-timestamp": (
        a.Dialect.CSPARQL, ("QUERY", "OpinionMakers"), [a.Sliding(10000, 5000, 0)]),
    "csparql-engine-register-stream": (
        a.Dialect.CSPARQL, ("STREAM", "UpStream"), [a.Sliding(5000, 1000, 0)]),
    "csparql-paper-prefix-first": (
        a.Dialect.CSPARQL, ("QUERY", "nearbyShoppers"), [a.Sliding(5000, 2000, 0)]),
    "cqels-now-window": (a.Dialect.CQELS, None, [a.Now()]),
    "cqels-range-and-triples": (
        a.Dialect.CQELS, None, [a.Sliding(3000, 1, 0), a.CountBased(1)]),
    "cqels-range-slide": (a.Dialect.CQELS, None, [a.Sliding(1_800_000, 60_000, 0)]),
    "yasper-rstream-named-window": (
        a.Dialect.RSPQL, ("RSTREAM", EX + "output"), [a.Sliding(5000, 2000, 0)]),
    "rsp4j-istream-construct": (
        a.Dialect.RSPQL, ("ISTREAM", EX + "below-10"), [a.Sliding(10000, 1000, 0)]),
    "rspjs-on-stream": (
        a.Dialect.RSPQL, ("RSTREAM", "https://rsp.js/output"),
        [a.Sliding(20, 20, 0), a.Sliding(20, 20, 0)]),
}  # fmt: skip


def test_every_published_query_has_an_expectation_and_names_its_source():
    files = sorted(p.stem for p in PUBLISHED.glob("*.rq"))
    assert files == sorted(EXPECTED)
    for path in PUBLISHED.glob("*.rq"):
        assert path.read_text().startswith("# "), f"{path.name} must name its source"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_published_query_compiles_as_its_system_reads_it(name: str):
    dialect, registration, specs = EXPECTED[name]
    path = PUBLISHED / f"{name}.rq"
    query = parse_query(path.read_text(), source=str(path))
    assert query.dialect is dialect
    got = query.registration and (query.registration.kind.value, query.registration.name)
    assert got == registration
    assert [w.spec for w in query.dataset.windows] == specs


def test_csparql_timestamp_through_its_library_prefix_is_the_builtin():
    """`f:timestamp` (f: the C-SPARQL engine's function library) and `timestamp` are one
    function: both filters print the same call."""
    text = (PUBLISHED / "csparql-engine-timestamp.rq").read_text()
    plain = text.replace("f:timestamp", "timestamp")
    assert a.to_sexpr(parse_query(text).pattern) == a.to_sexpr(parse_query(plain).pattern)
    assert "(call TIMESTAMP" in a.to_sexpr(parse_query(text).pattern)


def test_register_before_and_after_the_prologue_compile_alike():
    body = "SELECT ?s FROM STREAM <http://e/s> [RANGE 5s STEP 1s] WHERE { ?s ex:p ?o }"
    first = parse_query(f"REGISTER QUERY q AS PREFIX ex: <http://e/> {body}")
    after = parse_query(f"PREFIX ex: <http://e/> REGISTER QUERY q AS {body}")
    assert first == after


def test_two_registrations_are_still_an_error():
    from sepia.lang import QueryError

    with pytest.raises(QueryError, match="unexpected 'REGISTER'"):
        parse_query("REGISTER QUERY a AS PREFIX ex: <http://e/> REGISTER QUERY b AS "
                    "SELECT * WHERE { ?s ?p ?o }")
