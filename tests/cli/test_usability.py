"""What a new user trips over on the command line: a folder as the query, options the
chosen engine does not read, a --stream no query reads, a mistyped stream IRI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sepia.cli import app

EXAMPLES = Path(__file__).parents[2] / "examples"
E1 = EXAMPLES / "e1-shops-coupons"
NEARBY = f"http://example.org/nearby={E1 / 'stream-nearby.trig'}"
COUPONS = f"http://example.org/coupons={E1 / 'stream-coupons.trig'}"


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})


def multiset(text: str) -> list[str]:
    return sorted(json.dumps(json.loads(line), sort_keys=True) for line in text.splitlines())


@pytest.mark.parametrize("example", ["e1-shops-coupons", "e6-smart-city-rdfs"])
def test_a_folder_runs_as_its_run_json_describes(example: str):
    """e6's run.json also sets the RDFS entailment; the expected answers need it."""
    folder = EXAMPLES / example
    result = invoke("run", str(folder), "--engine", "local", "--format", "jsonl")
    assert result.exit_code == 0, result.output
    assert multiset(result.stdout) == multiset((folder / "expected.jsonl").read_text())


def test_a_folder_without_run_json_says_what_to_give(tmp_path: Path):
    result = invoke("run", str(tmp_path), "--engine", "local")
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "is a folder with no run.json give query files (.rq)" in text


@pytest.mark.parametrize(
    ("engine", "option", "reader"),
    [("local", ["--metrics", "m.jsonl"], "spark"), ("local", ["--checkpoint", "cp"], "spark"),
     ("local", ["--master", "spark://h:7077"], "spark"),
     ("reference", ["--snapshot", "s"], "local"), ("spark", ["--wall-clock"], "local"),
     ("reference", ["--follow"], "local or --engine spark")],
)  # fmt: skip
def test_an_option_the_engine_does_not_read_is_an_error(engine, option, reader):
    result = invoke("run", str(E1), "--engine", engine, *option)
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert f"--engine {engine} does not read {option[0]}" in text
    assert f"run with --engine {reader}" in text


def test_a_stream_no_query_reads_is_an_error():
    extra = f"http://example.org/offers={E1 / 'stream-coupons.trig'}"
    result = invoke("run", str(E1), "--engine", "reference", "--stream", NEARBY,
                    "--stream", COUPONS, "--stream", extra)
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "no query reads the stream <http://example.org/offers>" in text
    assert "the queries read <http://example.org/nearby>, <http://example.org/coupons>" in text


def test_a_mistyped_stream_iri_is_matched_to_the_missing_one():
    typo = f"http://example.org/cuopons={E1 / 'stream-coupons.trig'}"
    result = invoke("run", str(E1), "--engine", "local", "--stream", NEARBY, "--stream", typo)
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "no --stream given for <http://example.org/coupons>" in text
    assert "--stream http://example.org/cuopons is read by no query: did you mean " \
        "http://example.org/coupons?" in text


def test_a_missing_stream_without_a_near_miss_says_how_to_give_it():
    result = invoke("run", str(E1), "--engine", "local", "--stream", NEARBY)
    assert result.exit_code == 1
    assert "add --stream http://example.org/coupons=PATH" in " ".join(result.output.split())


def test_the_table_shortens_iris_with_the_query_prefixes():
    result = invoke("run", str(E1), "--engine", "reference", "--format", "table")
    assert result.exit_code == 0, result.output
    assert "│ :carl " in result.stdout and "│ :alice " in result.stdout
    assert "example.o" not in result.stdout
