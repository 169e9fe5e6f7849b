"""The five worked examples of semantics.md through the reference evaluator: each must give
exactly its hand-derived ``expected.jsonl``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sepia.algebra.event import SelectionPolicy
from sepia.io.background import load_background
from sepia.io.streams import read_stream
from sepia.rdf.results import result_to_json
from sepia.rdf.time import TimeKind
from sepia.semantics import evaluate

from . import example_queries as trees

EXAMPLES = Path(__file__).parents[2] / "examples"


def load(example: str):
    """The streams and background data of an example, as its run.json describes them."""
    folder = EXAMPLES / example
    run = json.loads((folder / "run.json").read_text())
    streams = {iri: list(read_stream(folder / path, iri)) for iri, path in run["streams"].items()}
    data = [spec.rpartition("=") for spec in run["data"]]
    return streams, load_background((graph or None, folder / path) for graph, _, path in data)


def expected(example: str, query: str | None = None) -> list[dict]:
    lines = (EXAMPLES / example / "expected.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    return [r for r in rows if query is None or r["query"] == query]


def canonical(rows: list[dict]) -> list[str]:
    """Lines ordered by t (io.md); within one t the order is not significant."""
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


@pytest.mark.parametrize(
    ("example", "query", "build"),
    [
        ("e1-shops-coupons", "query", trees.e1_shops_coupons),
        ("e2-subway-delays", "query", trees.e2_subway_delays),
        ("e3-rsepql-landmark", "query", trees.e3_rsepql_landmark),
        (
            "e4-spaseq-selection",
            "seq-colon",
            lambda: trees.e4_spaseq(SelectionPolicy.SKIP_TILL_ANY),
        ),
        (
            "e4-spaseq-selection",
            "seq-semicolon",
            lambda: trees.e4_spaseq(SelectionPolicy.SKIP_TILL_NEXT),
        ),
        (
            "e4-spaseq-selection",
            "seq-comma",
            lambda: trees.e4_spaseq(SelectionPolicy.STRICT_CONTIGUITY),
        ),
        ("e5-epsparql-drop-rise", "query", trees.e5_epsparql),
    ],
)
def test_example_from_algebra(example, query, build):
    streams, background = load(example)
    results = evaluate(build(), streams, background, name=query)
    assert canonical([result_to_json(r, TimeKind.ABSTRACT) for r in results]) == canonical(
        expected(example, query)
    )
    times = [r.t for r in results]
    assert times == sorted(times)
