"""The worked examples from their query text: ``sepia.lang.parse_query`` then the reference
evaluator must give exactly each example's ``expected.jsonl``."""

from __future__ import annotations

import json

import pytest

from sepia.lang import parse_query
from sepia.rdf.results import result_to_json
from sepia.rdf.time import TimeKind
from sepia.semantics import evaluate

from .test_examples import EXAMPLES, canonical, expected, load

CASES = [
    (folder.name, query)
    for folder in sorted(EXAMPLES.iterdir())
    if folder.is_dir()
    for query in json.loads((folder / "run.json").read_text())["queries"]
]


@pytest.mark.parametrize(("example", "query_file"), CASES)
def test_example_from_query_text(example, query_file):
    streams, background = load(example)
    query = parse_query((EXAMPLES / example / query_file).read_text())
    name = query_file.removesuffix(".rq")
    run = json.loads((EXAMPLES / example / "run.json").read_text())
    rdfs = run.get("entailment") == "rdfs"  # `--entailment rdfs` (semantics.md)
    results = evaluate(query, streams, background, name=name, rdfs=rdfs)
    got = [result_to_json(r, TimeKind.ABSTRACT) for r in results]
    assert canonical(got) == canonical(expected(example, name))
