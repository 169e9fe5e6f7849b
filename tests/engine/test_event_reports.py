"""Event patterns under a REPORT clause, with REGISTER RSTREAM / ISTREAM / DSTREAM.

Without a REPORT clause an event query is push-based: each match is reported once, when it
completes. With one, the answer at each report instant is every match over the window then
(NO_TAIL and the other operators over the window content), and the streaming operator
compares those answers: a match stays in RStream's output at every evaluation while its
events are in the window, and DStream retracts it only when it leaves (or a later event
negates it). The reference evaluator does this; the incremental engine pushes matches as
they complete, so it refuses such a query (`Unsupported`: `--engine local` says so and
names `--engine reference`, `--engine spark` runs it on its reference adapter). These tests
hold the engine to "agree with the reference, or refuse", over generated REPORT clauses."""

from __future__ import annotations

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
from sepia.runtime.local import run
from sepia.semantics import evaluate

from .generators import EX, report, streams
from .support import background
from .test_differential_cep import CHECKS, event_clause, triple_sequence

E2 = Path(__file__).parents[2] / "examples" / "e2-subway-delays"
SUBWAY = """PREFIX : <http://example.org/>
REGISTER OPERATOR :out AS
SELECT ?v ?s
FROM NAMED WINDOW :W ON :pt [RANGE 10 STEP 1]
REPORT ON CONTENT CHANGE
WHERE { WINDOW :W { SEQ({ ?v :delayAt ?s }, { ?v :delayAt ?s }, !{ ?v :arriveAt ?s }) } }"""


def subway(operator: str) -> str:
    return SUBWAY.replace("OPERATOR", operator)


def answer(operator: str) -> list[tuple[int, str, tuple[int, int], str]]:
    """The reference's rows over the subway stream of examples/e2-subway-delays."""
    elements = list(read_stream(E2 / "stream.trig", EX + "pt"))
    rows = evaluate(parse_query(subway(operator)), {EX + "pt": elements}, name="q")
    return sorted((r.t, r.op, r.interval, r.binding["v"].value.removeprefix(EX)) for r in rows)


def test_the_subway_matches_as_the_report_clause_and_operator_say():
    """Delays: a1 at :m at 10 and 16, d1 at :h at 12 and 14; no arrival. Content changes at
    each element (10, 12, 14, 16); the RANGE 10 window holds all four at 16. The match
    (12, 14) of d1 completes at 14 and stays in the window at 16; a1's (10, 16) completes at
    16. RStream repeats d1's at 16; IStream gives each once; DStream retracts nothing (no
    match leaves the window and no arrival negates one before the input ends)."""
    assert answer("RSTREAM") == [(14, "+", (12, 14), "d1"), (16, "+", (10, 16), "a1"),
                                 (16, "+", (12, 14), "d1")]  # fmt: skip
    assert answer("ISTREAM") == [(14, "+", (12, 14), "d1"), (16, "+", (10, 16), "a1")]
    assert answer("DSTREAM") == []


def test_an_arrival_in_the_window_retracts_the_match_under_dstream():
    """Adding `:d1 :arriveAt :h` at 15 negates d1's match (12, 14) from 15 on: DStream
    retracts it at 15, the next content change."""
    elements = list(read_stream(E2 / "stream.trig", EX + "pt"))
    arrival = ox.Triple(ox.NamedNode(EX + "d1"), ox.NamedNode(EX + "arriveAt"),
                        ox.NamedNode(EX + "h"))  # fmt: skip
    late = type(elements[0])(EX + "pt", EX + "e5", 15, 15, (arrival,), elements[0].kind)
    data = {EX + "pt": sorted([*elements, late], key=lambda e: e.time)}
    rows = evaluate(parse_query(subway("DSTREAM")), data, name="q")
    assert [(r.t, r.op, r.interval) for r in rows] == [(15, "-", (12, 14))]


@pytest.mark.parametrize("operator", ["RSTREAM", "ISTREAM", "DSTREAM"])
def test_the_local_engine_refuses_and_names_the_reference(operator: str, tmp_path: Path):
    query = tmp_path / "q.rq"
    query.write_text(subway(operator))
    result = CliRunner().invoke(app, ["run", str(query), "--engine", "local",
                                      "--stream", f"{EX}pt={E2 / 'stream.trig'}"])  # fmt: skip
    assert result.exit_code == 3, result.output
    assert "an event pattern under a REPORT clause" in result.output
    assert "--engine reference" in result.output


@st.composite
def reported_event_queries(draw) -> str:
    """A CQELS-CEP event pattern over windows, under a generated REPORT clause and a
    REGISTER RSTREAM / ISTREAM / DSTREAM."""
    pattern = draw(st.one_of(triple_sequence(), event_clause()))
    windows = ("w1", "w2", "w3")
    declared = "\n".join(f"FROM NAMED WINDOW :{w} ON :s{s} [RANGE {draw(st.integers(2, 8))}]"
                         for w, s in zip(windows, (1, 2, 1), strict=True))  # fmt: skip
    clause = draw(report(list(windows)).filter(bool))
    operator = draw(st.sampled_from(["RSTREAM", "ISTREAM", "DSTREAM"]))
    return (f"PREFIX : <{EX}>\nREGISTER {operator} :out AS\nSELECT *\n{declared}\n{clause}\n"
            f"WHERE {{ {pattern} }}")  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=CHECKS)
@given(reported_event_queries(), streams())
def test_the_engine_agrees_with_the_reference_or_refuses(text, data):
    query = parse_query(text)
    expected = evaluate(query, data, background(), name="q")
    try:
        got = list(run([("q", query)], data, background()))
    except Unsupported as error:
        assert "REPORT clause" in str(error), text
        return
    assert sorted(got, key=repr) == sorted(expected, key=repr), text


@pytest.mark.spark
@pytest.mark.parametrize("operator", ["RSTREAM", "DSTREAM"])
def test_spark_gives_the_reference_answer(operator: str, tmp_path: Path, spark):
    query = tmp_path / "q.rq"
    query.write_text(subway(operator))
    args = ["run", str(query), "--stream", f"{EX}pt={E2 / 'stream.trig'}", "--format", "jsonl"]
    got = CliRunner().invoke(app, [*args, "--engine", "spark", "--no-progress"])
    want = CliRunner().invoke(app, [*args, "--engine", "reference"])
    assert got.exit_code == 0 and want.exit_code == 0, got.output + want.output
    assert sorted(got.stdout.splitlines()) == sorted(want.stdout.splitlines())
