"""Event patterns under a REPORT clause, with REGISTER RSTREAM / ISTREAM / DSTREAM.

Without a REPORT clause an event query is push-based: each match is reported once, when it
completes. With one, the answer at each report instant is every match over the window then
(NO_TAIL and the other operators over the window content), and the streaming operator
compares those answers: a match stays in RStream's output at every evaluation while its
events are in the window, and DStream retracts it only when it leaves (or a later event
negates it). The subway example is worked by hand for both evaluators; generated REPORT
clauses, streaming operators, query forms and event patterns (CQELS-CEP triple sequences
and event clauses, RSEP-QL SEQ / FIRST / LAST, several MATCHes, NAIVE and the consuming
policies) hold the engine to the reference evaluator's answers, snapshots included."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sepia.cli import app
from sepia.engine import Unsupported
from sepia.io.streams import read_stream
from sepia.lang import parse_query
from sepia.rdf.results import Result
from sepia.runtime.local import run
from sepia.semantics import evaluate

from ..generators import EVENTS, EX, answering, event_windows, report, streams
from ..support import assert_agrees, assert_resumes
from .test_differential_cep import (
    CHECKS,
    SPANS,
    event_clause,
    interval_streams,
    triple_sequence,
)

E2 = Path(__file__).parents[3] / "examples" / "e2-subway-delays"
SUBWAY = """PREFIX : <http://example.org/>
REGISTER OPERATOR :out AS
SELECT ?v ?s
FROM NAMED WINDOW :W ON :pt [RANGE 10 STEP 1]
REPORT ON CONTENT CHANGE
WHERE { WINDOW :W { SEQ({ ?v :delayAt ?s }, { ?v :delayAt ?s }, !{ ?v :arriveAt ?s }) } }"""


def subway(operator: str) -> str:
    return SUBWAY.replace("OPERATOR", operator)


def subway_stream(*extra) -> dict:
    elements = list(read_stream(E2 / "stream.trig", EX + "pt"))
    return {EX + "pt": sorted([*elements, *extra], key=lambda e: e.time)}


def rows(results: list[Result]) -> list[tuple[int, str, tuple[int, int] | None, str]]:
    return sorted((r.t, r.op, r.interval, r.binding["v"].value.removeprefix(EX))
                  for r in results)  # fmt: skip


def both(text: str, data: dict) -> tuple[list, list]:
    """(the reference's rows, the engine's rows)."""
    query = parse_query(text)
    return rows(evaluate(query, data, name="q")), rows(list(run([("q", query)], data)))


@pytest.mark.parametrize(("operator", "expected"), [
    ("RSTREAM", [(14, "+", (12, 14), "d1"), (16, "+", (10, 16), "a1"), (16, "+", (12, 14), "d1")]),
    ("ISTREAM", [(14, "+", (12, 14), "d1"), (16, "+", (10, 16), "a1")]),
    ("DSTREAM", []),
])  # fmt: skip
def test_the_subway_matches_as_the_report_clause_and_operator_say(operator, expected):
    """Delays: a1 at :m at 10 and 16, d1 at :h at 12 and 14; no arrival. Content changes at
    each element (10, 12, 14, 16); the RANGE 10 window holds all four at 16. The match
    (12, 14) of d1 completes at 14 and stays in the window at 16; a1's (10, 16) completes at
    16. RStream repeats d1's at 16; IStream gives each once; DStream retracts nothing (no
    match leaves the window and no arrival negates one before the input ends)."""
    reference, engine = both(subway(operator), subway_stream())
    assert reference == expected
    assert engine == expected


def test_an_arrival_in_the_window_retracts_the_match_under_dstream():
    """Adding `:d1 :arriveAt :h` at 15 negates d1's match (12, 14) from 15 on: DStream
    retracts it at 15, the next content change; RStream stops repeating it there."""
    sample = subway_stream()[EX + "pt"][0]
    arrival = ox.Triple(ox.NamedNode(EX + "d1"), ox.NamedNode(EX + "arriveAt"),
                        ox.NamedNode(EX + "h"))  # fmt: skip
    late = type(sample)(EX + "pt", EX + "e5", 15, 15, (arrival,), sample.kind)
    data = subway_stream(late)
    for evaluator in both(subway("DSTREAM"), data):
        assert [(t, op, interval) for t, op, interval, _ in evaluator] == [(15, "-", (12, 14))]
    for evaluator in both(subway("RSTREAM"), data):
        assert evaluator == [(14, "+", (12, 14), "d1"), (16, "+", (10, 16), "a1")]


def test_a_window_close_after_the_last_element_retracts_what_left():
    """RANGE 4 STEP 2, reported at each close: at 14 the window (10, 14] holds d1's two
    delays (match (12, 14)); at 16 (12, 16] holds d1's second and a1's second delay only;
    d1's match left the window, so DStream retracts it at 16 and nothing else comes."""
    text = subway("DSTREAM").replace("[RANGE 10 STEP 1]", "[RANGE 4 STEP 2]")
    text = text.replace("ON CONTENT CHANGE", "ON WINDOW CLOSE")
    reference, engine = both(text, subway_stream())
    assert reference == engine == [(16, "-", (12, 14), "d1")]


@pytest.mark.parametrize("operator", ["RSTREAM", "ISTREAM", "DSTREAM"])
def test_the_command_line_gives_the_reference_answer(operator: str, tmp_path: Path):
    query = tmp_path / "q.rq"
    query.write_text(subway(operator))
    args = ["run", str(query), "--stream", f"{EX}pt={E2 / 'stream.trig'}", "--format", "jsonl"]
    got = CliRunner().invoke(app, [*args, "--engine", "local"])
    want = CliRunner().invoke(app, [*args, "--engine", "reference"])
    assert got.exit_code == 0 and want.exit_code == 0, got.output + want.output
    assert sorted(got.stdout.splitlines()) == sorted(want.stdout.splitlines())
    assert len(want.stdout.splitlines()) == {"RSTREAM": 3, "ISTREAM": 2, "DSTREAM": 0}[operator]


RSEPQL = [*EVENTS, "FIRST(EVENT :w1 { ?x :p ?y })", "LAST(EVENT :w2 { ?y ?k ?z })"]


@st.composite
def event_pattern(draw) -> str:
    """A WHERE body with event patterns over the windows w1, w2 (on :s2) and w3."""
    one = st.sampled_from(RSEPQL)
    rsepql = draw(st.builds(lambda a, b: f"MATCH {{ {a} SEQ {b} }}", one, one))
    several = draw(st.sampled_from([
        f"{rsepql} MATCH {{ {draw(one)} }}", f"{rsepql} OPTIONAL {{ MATCH {{ {draw(one)} }} }}",
        f"{{ {rsepql} }} UNION {{ MATCH {{ {draw(one)} }} }}",
    ]))  # fmt: skip
    pattern = draw(st.one_of(triple_sequence(), event_clause(), st.just(rsepql), st.just(several)))
    return pattern + draw(st.sampled_from(["", "", " ?x :r ?q ."]))


@st.composite
def reported_event_queries(draw, policies=("", "", "EVENT POLICY NAIVE")) -> str:
    """An event query over windows under a generated REPORT clause, a REGISTER RSTREAM /
    ISTREAM / DSTREAM and a SELECT, ASK or CONSTRUCT form; an EVENT POLICY from
    ``policies`` (consuming policies: one MATCH only)."""
    body = draw(event_pattern())
    policy = draw(st.sampled_from(policies))
    if "CHRONOLOGICAL" in policy or "RECENT" in policy:
        body = draw(st.one_of(triple_sequence(), event_clause()))
    windows = ("w1", "w2", "w3")
    declared = "\n".join(f"FROM NAMED WINDOW :{w} ON :s{s} {draw(event_windows)}"
                         for w, s in zip(windows, (1, 2, 1), strict=True))  # fmt: skip
    clause = draw(report(list(windows)).filter(bool))
    operator = draw(st.sampled_from(["RSTREAM", "ISTREAM", "DSTREAM"]))
    form = draw(st.sampled_from(["SELECT *", "SELECT *", "ASK", "CONSTRUCT { ?x :seen ?y }"]))
    return (f"PREFIX : <{EX}>\nREGISTER {operator} :out AS\n{form}\n{declared}\n{clause}\n"
            f"{policy}\nWHERE {{ {body} }}")  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=CHECKS)
@given(answering(reported_event_queries(), aimed=True, after=16))
def test_the_engine_agrees_with_the_reference(case):
    """Streams planted from the query (aimed), so that most draws answer something."""
    assert_agrees(*case)


@settings(max_examples=80, deadline=None, suppress_health_check=CHECKS)
@given(answering(reported_event_queries(("EVENT POLICY CHRONOLOGICAL", "EVENT POLICY RECENT")),
                 aimed=True, after=16))
def test_consuming_policies_agree_with_the_reference(case):
    """Consumption is a side effect of each evaluation: at the report instants only.
    Streams planted from the query (aimed)."""
    assert_agrees(*case)


@settings(max_examples=60, deadline=None, suppress_health_check=CHECKS)
@given(answering(reported_event_queries(), interval_streams(), aimed=True, spans=SPANS,
                 after=16))  # past the widest window (RANGE 15): DSTREAM retracts
def test_interval_stamped_events_agree_with_the_reference(case):
    """A window shows an element by its end; its matches carry its interval. Streams
    planted from the query (aimed), the planted elements stamped as the noise's are."""
    assert_agrees(*case)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=CHECKS)
@given(reported_event_queries(("", "EVENT POLICY NAIVE", "EVENT POLICY CHRONOLOGICAL")),
       streams())  # fmt: skip
def test_the_engine_agrees_with_the_reference_long(text, data):
    assert_agrees(text, data)


@settings(max_examples=40, deadline=None, suppress_health_check=CHECKS)
@given(answering(reported_event_queries(("", "EVENT POLICY RECENT")), aimed=True, after=16),
       st.data())
def test_a_reported_event_query_resumes_from_a_snapshot(case, split):
    """The windows, the elements' starts and the consumed occurrences are state rows.
    Streams planted from the query (aimed)."""
    text, data = case
    assert_resumes(text, data, split.draw(st.integers(0, sum(len(es) for es in data.values()))))


@pytest.mark.parametrize(("body", "cause"), [
    ("{ SEQ(A) DEFINE GPM A ON :s1 { ?x :p ?y } } MATCH { EVENT :w1 { ?y ?k ?z } }",
     "an EVENT over a stream (not a window) under a REPORT clause"),
    ("{ SEQ(A; B) DEFINE GPM A ON :s1 { ?x :p ?y } DEFINE GPM B ON :s1 { ?y ?k ?z } }",
     "a SPAseq sequence under a REPORT clause"),
])  # fmt: skip
def test_what_the_engine_still_refuses_under_a_report_clause(body: str, cause: str):
    text = (f"PREFIX : <{EX}>\nSELECT *\nFROM STREAM S1 :s1\n"
            f"FROM NAMED WINDOW :w1 ON :s1 [RANGE 5]\nREPORT ON WINDOW CLOSE\n"
            f"WHERE {{ {body} }}")  # fmt: skip
    with pytest.raises(Unsupported, match=re.escape(cause)):
        list(run([("q", parse_query(text))], {EX + "s1": []}))


@pytest.mark.spark
def test_spark_gives_the_reference_answer(tmp_path: Path, spark):
    """RStream and DStream in one Spark run (one job: the suite's Spark tests share one
    worker), over the subway stream with d1's arrival at 15, so that DStream retracts d1's
    match (12, 14) there and RStream stops repeating it (as worked out above)."""
    stream = tmp_path / "stream.trig"
    text = (E2 / "stream.trig").read_text()
    arrival = ":e5 { :d1 :arriveAt :h . }\n:e5 prov:startedAtTime 15 ; prov:endedAtTime 15 .\n"
    stream.write_text(text.replace(":e4 {", arrival + ":e4 {"))
    queries = []
    for operator in ("RSTREAM", "DSTREAM"):
        queries.append(tmp_path / f"{operator.lower()}.rq")
        queries[-1].write_text(subway(operator))
    args = ["run", *map(str, queries), "--stream", f"{EX}pt={stream}", "--format", "jsonl"]
    got = CliRunner().invoke(app, [*args, "--engine", "spark", "--no-progress"])
    want = CliRunner().invoke(app, [*args, "--engine", "reference"])
    assert got.exit_code == 0 and want.exit_code == 0, got.output + want.output
    assert sorted(got.stdout.splitlines()) == sorted(want.stdout.splitlines())
    printed = [json.loads(line) for line in want.stdout.splitlines()]
    answers = [(row["query"], row["t"], row["op"]) for row in printed]
    assert sorted(answers) == [("dstream", 15, "-"), ("rstream", 14, "+"), ("rstream", 16, "+")]
