"""Queries that compile but answer nothing or not what was meant: each gets one located
warning line, printed alike by `sepia explain`, `sepia run`, `sepia check` and `sepia compare`
(the last three also know the graphs --data loads and the streams' kind of time), and the
command goes on."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from sepia.cli import app
from sepia.lang import static_warnings
from sepia.rdf.time import TimeKind

P = "PREFIX : <http://example.org/>\n"
PARTITIONED = P + ("SELECT ?x WITHIN 5\nFROM STREAM S1 :s\nPARTITION BY ?company\n"
                   "WHERE { SEQ(A, B)\nDEFINE GPM A ON S1 { ?x :p ?y }\n"
                   "DEFINE GPM B ON S1 { ?x :q ?z } }")
REMOTE = P + ("REGISTER RSTREAM :q AS SELECT * FROM <http://example.org/kb>\n"
              "FROM NAMED WINDOW :w ON :s [RANGE 5 STEP 1]\n"
              "WHERE { ?s :in ?c . WINDOW :w { ?s :p ?o } }")
UNITLESS = P + ("REGISTER RSTREAM :q AS SELECT * \n"
                "FROM NAMED WINDOW :w ON :s [RANGE 40 STEP 10]\n"
                "WHERE { WINDOW :w { ?s :p ?o } }")
CASES = {
    "partition": (PARTITIONED, None, "q.rq:4:1: PARTITION BY ?company: no event pattern binds "
                  "?company, so no event joins a partition and the query never matches; "
                  "partition by a variable the event patterns bind (they bind ?x, ?y, ?z)"),
    "remote graph": (REMOTE, None, "q.rq:2:38: the graph <http://example.org/kb> is never "
                     "fetched (Sepia reads nothing over the network): unless --data loads it, "
                     "the query sees it empty; load it from a file with --data "
                     "http://example.org/kb=FILE"),
    "unitless": (UNITLESS, TimeKind.DATETIME, "q.rq:3:35: '40' has no unit: over this "
                 "xsd:dateTime stream it counts milliseconds; write a duration with its "
                 "unit: 40s, PT40S or 40 SECONDS for seconds, 40m or PT40M for minutes"),
}
DATETIME_STREAM = """@prefix : <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix prov: <http://www.w3.org/ns/prov#> .
:g1 { :a :p :b . }
:g1 prov:generatedAtTime "2026-01-01T00:00:00Z"^^xsd:dateTime .
:g2 { :c :p :d . }
:g2 prov:generatedAtTime "2026-01-01T00:00:30Z"^^xsd:dateTime .
"""


@pytest.mark.parametrize("name", CASES)
def test_each_check_is_one_located_line(name: str) -> None:
    text, kind, expected = CASES[name]
    assert [str(w) for w in static_warnings(text, source="q.rq", stream_kind=kind)] == [expected]


def test_the_checks_leave_meant_queries_alone() -> None:
    assert static_warnings(PARTITIONED.replace("?company", "?x"), stream_kind=None) == []
    assert static_warnings(REMOTE, graphs={"http://example.org/kb"}) == []
    assert static_warnings(UNITLESS, stream_kind=TimeKind.ABSTRACT) == []
    assert static_warnings(UNITLESS.replace("RANGE 40 STEP 10", "RANGE 40s STEP 10s"),
                           stream_kind=TimeKind.DATETIME) == []


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "500"})


@pytest.mark.parametrize("name", CASES)
def test_explain_and_run_print_the_same_warning(name: str, tmp_path: Path) -> None:
    text, _, expected = CASES[name]
    query = tmp_path / "q.rq"
    query.write_text(text)
    stream = tmp_path / "s.trig"
    stream.write_text(DATETIME_STREAM)
    where = f"http://example.org/s={stream}"
    line = expected.replace("q.rq", str(query))
    explained = _invoke("explain", str(query), "--stream", where)
    ran = _invoke("run", str(query), "--engine", "local", "--stream", where, "--format", "jsonl")
    assert explained.exit_code == 0, explained.output
    assert ran.exit_code == 0, ran.output
    assert f"Warning: {line}" in explained.stderr.splitlines()
    assert f"Warning: {line}" in ran.stderr.splitlines()


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("command", ["check", "compare"])
def test_check_and_compare_print_the_same_warning(name: str, command: str, tmp_path: Path) -> None:
    text, _, expected = CASES[name]
    query = tmp_path / "q.rq"
    query.write_text(text)
    stream = tmp_path / "s.trig"
    stream.write_text(DATETIME_STREAM)
    answer = tmp_path / "answer.jsonl"
    answer.write_text("")
    where = f"http://example.org/s={stream}"
    more = ["--answer", str(answer)] if command == "check" else ["--engine", "local"]
    done = _invoke(command, str(query), "--stream", where, *more)
    assert done.exit_code in (0, 1), done.output  # check: 1 when the empty answer is wrong
    assert done.stderr.splitlines().count(f"Warning: {expected.replace('q.rq', str(query))}") == 1
