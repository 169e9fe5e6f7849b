"""The worked examples (examples/*/run.json) and the reference evaluator's jsonl for them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sepia.engine import Unsupported
from sepia.io.background import load_background
from sepia.io.streams import read_stream
from sepia.rdf.results import jsonl_line
from sepia.runtime.inputs import NamedQuery, load_query
from sepia.runtime.local import run
from sepia.semantics import evaluate, evaluate_network, time_kind

EXAMPLES = Path(__file__).parents[2] / "examples"
NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "run.json").exists())


@dataclass(frozen=True)
class Example:
    folder: Path
    queries: list[NamedQuery]
    bindings: dict[str, str]
    data: list[tuple[str | None, Path]]
    rdfs: bool

    def reference_lines(self) -> list[str]:
        """What `sepia run --engine reference --format jsonl` prints (RDFS: per query, by t)."""
        streams = {iri: list(read_stream(Path(p), iri)) for iri, p in self.bindings.items()}
        store = load_background(self.data) if self.data else None
        if self.rdfs:
            answers = [
                r for q in self.queries
                for r in evaluate(q.query, streams, store, name=q.name, rdfs=True)
            ]  # fmt: skip
            results = sorted(answers, key=lambda r: r.t)
        else:
            pairs = [(q.name, q.query) for q in self.queries]
            results = evaluate_network(pairs, streams, store)
        return [jsonl_line(r, time_kind(streams)) for r in results]

    def local_lines(self, query: NamedQuery) -> list[str]:
        """What `sepia run --engine local --format jsonl` prints for one query of this run
        (the same streams and background data); the reference's lines where the engine
        refuses the query (the Spark job then runs it on the reference adapter)."""
        streams = {iri: list(read_stream(Path(p), iri)) for iri, p in self.bindings.items()}
        store = load_background(self.data) if self.data else None
        try:
            results = list(run([(query.name, query.query)], streams, store, rdfs=self.rdfs))
        except Unsupported:
            prefix = json.dumps({"query": query.name})[:-1] + ","
            return [line for line in self.reference_lines() if line.startswith(prefix)]
        return [jsonl_line(r, time_kind(streams)) for r in results]

    def expected(self) -> list[dict]:
        """The hand-derived answer (expected.jsonl)."""
        lines = (self.folder / "expected.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines]


def example(name: str) -> Example:
    folder = EXAMPLES / name
    spec = json.loads((folder / "run.json").read_text())
    data = [d.rpartition("=") for d in spec["data"]]
    return Example(
        folder,
        [load_query(folder / q) for q in spec["queries"]],
        {iri: str(folder / path) for iri, path in spec["streams"].items()},
        [(graph or None, folder / path) for graph, _, path in data],
        spec.get("entailment") == "rdfs",
    )


def canonical(rows: list[dict]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in rows)
