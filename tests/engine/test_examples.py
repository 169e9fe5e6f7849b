"""The worked examples through the local runtime: the supported ones must give exactly their
hand-derived ``expected.jsonl``; any other is refused with a reason until the engine has
it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sepia.engine.plan.planner import Unsupported
from sepia.io.background import load_background
from sepia.io.streams import read_stream
from sepia.lang import parse_query
from sepia.rdf.results import result_to_json
from sepia.rdf.time import TimeKind
from sepia.runtime.local import run

EXAMPLES = Path(__file__).parents[2] / "examples"
SUPPORTED = {
    ("e1-shops-coupons", "query.rq"),
    ("e4-spaseq-selection", "seq-colon.rq"),
    ("e4-spaseq-selection", "seq-comma.rq"),
    ("e4-spaseq-selection", "seq-semicolon.rq"),
    ("e6-smart-city-rdfs", "query.rq"),
    ("e6-smart-city-rdfs", "alarm-then-traffic.rq"),
    ("e3-rsepql-landmark", "query.rq"),
    ("e2-subway-delays", "query.rq"),
    ("e5-epsparql-drop-rise", "query.rq"),
}
CASES = [
    (folder.name, query)
    for folder in sorted(EXAMPLES.iterdir())
    if folder.is_dir()
    for query in json.loads((folder / "run.json").read_text())["queries"]
]


def run_example(example: str, query_file: str) -> list[dict]:
    folder = EXAMPLES / example
    spec = json.loads((folder / "run.json").read_text())
    streams = {iri: list(read_stream(folder / path, iri)) for iri, path in spec["streams"].items()}
    data = [d.rpartition("=") for d in spec["data"]]
    background = load_background((graph or None, folder / path) for graph, _, path in data)
    query = parse_query((folder / query_file).read_text())
    rdfs = spec.get("entailment") == "rdfs"
    results = run([(query_file.removesuffix(".rq"), query)], streams, background, rdfs=rdfs)
    return [result_to_json(r, TimeKind.ABSTRACT) for r in results]


def expected(example: str, query_file: str) -> list[dict]:
    lines = (EXAMPLES / example / "expected.jsonl").read_text().splitlines()
    name = query_file.removesuffix(".rq")
    return [row for row in map(json.loads, lines) if row["query"] == name]


@pytest.mark.parametrize(("example", "query_file"), CASES)
def test_example(example, query_file):
    if (example, query_file) not in SUPPORTED:
        with pytest.raises(Unsupported):
            run_example(example, query_file)
        return
    got = run_example(example, query_file)
    canonical = lambda rows: sorted(json.dumps(r, sort_keys=True) for r in rows)  # noqa: E731
    assert canonical(got) == canonical(expected(example, query_file))
    assert [r["t"] for r in got] == sorted(r["t"] for r in got)
