"""The smart-city example (examples/e6-smart-city-rdfs): its hand-derived expected.jsonl is
what the reference evaluator answers with RDFS entailment, and nothing without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sepia.io.background import load_background
from sepia.io.streams import read_stream
from sepia.lang import parse_query
from sepia.rdf.results import result_to_json
from sepia.rdf.time import TimeKind
from sepia.semantics import evaluate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "e6-smart-city-rdfs"
RUN = json.loads((EXAMPLE / "run.json").read_text())


def answers(query_file: str, rdfs: bool) -> list[str]:
    """The reference answer; the query declares ENTAILMENT rdfs, removed to see without."""
    streams = {i: list(read_stream(EXAMPLE / p, i)) for i, p in RUN["streams"].items()}
    background = load_background((None, EXAMPLE / path) for path in RUN["data"])
    text = (EXAMPLE / query_file).read_text()
    assert "ENTAILMENT rdfs\n" in text
    query = parse_query(text if rdfs else text.replace("ENTAILMENT rdfs\n", ""))
    results = evaluate(query, streams, background, name=query_file[:-3])
    return sorted(json.dumps(result_to_json(r, TimeKind.ABSTRACT), sort_keys=True)
                  for r in results)


def expected(query_file: str) -> list[str]:
    rows = map(json.loads, (EXAMPLE / "expected.jsonl").read_text().splitlines())
    return sorted(json.dumps(r, sort_keys=True) for r in rows if r["query"] == query_file[:-3])


@pytest.mark.parametrize("query_file", RUN["queries"])
def test_expected_answers_need_entailment(query_file):
    assert RUN["entailment"] == "rdfs"
    assert len(expected(query_file)) == 2
    assert answers(query_file, rdfs=True) == expected(query_file)
    assert answers(query_file, rdfs=False) == []
