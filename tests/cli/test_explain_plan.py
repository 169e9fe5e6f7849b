"""`sepia explain` ends with the local engine's physical plan, or says why there is none."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from sepia.cli import app

EXAMPLES = Path(__file__).parents[2] / "examples"


def explain(query: Path) -> str:
    result = CliRunner().invoke(app, ["explain", str(query)], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    return result.stdout.split("physical plan (--engine local):\n", 1)[1]


def test_a_window_query_shows_windows_report_and_join_inputs() -> None:
    plan = explain(EXAMPLES / "e1-shops-coupons" / "query.rq")
    assert "S2R window <http://example.org/w1> on <http://example.org/nearby>" in plan
    assert "Sliding(width=5, slide=2, t0=1)" in plan
    assert plan.count("Scan ") == 3 and "MultiJoin" in plan


def test_a_spaseq_query_shows_its_automaton() -> None:
    plan = explain(EXAMPLES / "e4-spaseq-selection" / "seq-comma.rq")
    assert "automaton: 2 states" in plan and "take -> 2 (,)" in plan


def test_a_refused_query_names_the_construct(tmp_path: Path) -> None:
    query = tmp_path / "partitioned.rq"
    query.write_text(
        "PREFIX : <http://example.org/>\nREGISTER RSTREAM :o AS SELECT ?x\n"
        "FROM NAMED WINDOW :w ON :s [RANGE 5] PARTITION BY ?x\n"
        "WHERE { WINDOW :w { ?x :p ?y } }\n"
    )
    plan = explain(query)
    expected = "not runnable on the local engine yet: PARTITION BY on a query without an event"
    assert plan.strip() == expected + " pattern"


def test_an_event_query_shows_its_event_pattern() -> None:
    plan = explain(EXAMPLES / "e5-epsparql-drop-rise" / "query.rq")
    assert "event pattern (mappings ending at each arrival)" in plan
    assert plan.count("SEQ unrestricted") == 2 and plan.count("occurrence BGP") == 3


def test_a_query_the_engine_cannot_run_says_why(tmp_path: Path) -> None:
    query = tmp_path / "partitioned.rq"
    query.write_text(
        "PREFIX : <http://example.org/>\nSELECT * FROM NAMED WINDOW :w ON :s [RANGE 10]\n"
        "PARTITION BY ?x\nWHERE { WINDOW :w { ?x :p ?y } }"
    )
    plan = explain(query)
    assert plan.strip().startswith("not runnable on the local engine yet:")
    assert "PARTITION BY on a query without an event pattern" in plan


def test_a_consuming_query_says_it_is_evaluated_over_the_whole_windows(tmp_path: Path) -> None:
    query = tmp_path / "consuming.rq"
    query.write_text(
        "PREFIX : <http://example.org/>\nSELECT * FROM NAMED WINDOW :w ON :s [RANGE 10]\n"
        "EVENT POLICY CHRONOLOGICAL\n"
        "WHERE { WINDOW :w { SEQ({ ?x :p ?y }, { ?x :p ?z }, !{ ?x :q ?y }) } }"
    )
    plan = explain(query)
    assert "event pattern (derivations over the whole windows at each arrival, consuming)" in plan
    assert "NO_TAIL" in plan and "SEQ chronological" in plan
