"""The worked examples (examples/*) read as a run: queries, streams, background, and the
results of the reference evaluator (which the example tests check against expected.jsonl)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

from sepia.io.background import load_background
from sepia.io.streams import read_stream
from sepia.rdf.results import Result, read_results_jsonl
from sepia.rdf.stream import StreamElement
from sepia.runtime.inputs import NamedQuery, load_query
from sepia.semantics.network import evaluate_network
from sepia.timeline import Run

EXAMPLES = Path(__file__).parents[2] / "examples"
NAMES = sorted(p.name for p in EXAMPLES.glob("e*-*") if (p / "run.json").exists())


@dataclass
class Worked:
    folder: Path
    queries: list[NamedQuery]
    streams: dict[str, list[StreamElement]]
    background: ox.Store | None
    results: list[Result]
    expected: list[Result]

    @property
    def runs(self) -> list[Run]:
        return [Run(q.name, q.query, self.results) for q in self.queries]

    def cli_args(self) -> list[str]:
        run = json.loads((self.folder / "run.json").read_text())
        args = [str(self.folder / q) for q in run["queries"]]
        for iri, path in run["streams"].items():
            args += ["--stream", f"{iri}={self.folder / path}"]
        for data in run["data"]:
            name, _, path = data.rpartition("=")
            args += ["--data", f"{name}={self.folder / path}" if name else str(self.folder / path)]
        if run.get("entailment"):
            args += ["--entailment", run["entailment"]]
        return args


def worked(name: str) -> Worked:
    folder = EXAMPLES / name
    run = json.loads((folder / "run.json").read_text())
    entailment = run.get("entailment")
    from sepia.algebra.query import Entailment

    regime = Entailment(entailment) if entailment else None
    queries = [load_query(folder / q, entailment=regime) for q in run["queries"]]
    streams = {iri: list(read_stream(folder / p, iri)) for iri, p in run["streams"].items()}
    data = []
    for text in run["data"]:
        graph, _, path = text.rpartition("=")
        data.append((graph or None, folder / path))
    background = load_background(data) if data else None
    results = evaluate_network([(q.name, q.query) for q in queries], streams, background)
    expected = read_results_jsonl(folder / "expected.jsonl")
    return Worked(folder, queries, streams, background, results, expected)
