"""The worked examples through the local runtime: the supported ones must give exactly their
hand-derived ``expected.jsonl``; any other is refused with a reason until the engine has
it."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from sepia.algebra.query import Unsupported
from sepia.engine.background import loaded_for
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
    if (folder / "run.json").exists()  # not examples/notebooks
    for query in json.loads((folder / "run.json").read_text())["queries"]
]


def run_example(
    example: str, query_file: str, background: ox.Store | None = None
) -> list[dict]:
    folder = EXAMPLES / example
    spec = json.loads((folder / "run.json").read_text())
    streams = {iri: list(read_stream(folder / path, iri)) for iri, path in spec["streams"].items()}
    background = background if background is not None else load_background(data_of(example))
    query = parse_query((folder / query_file).read_text())
    rdfs = spec.get("entailment") == "rdfs"
    results = run([(query_file.removesuffix(".rq"), query)], streams, background, rdfs=rdfs)
    return [result_to_json(r, TimeKind.ABSTRACT) for r in results]


def data_of(example: str) -> list[tuple[str | None, Path]]:
    """The example's background files, each with its graph (None: the default graph)."""
    folder = EXAMPLES / example
    data = [d.rpartition("=") for d in json.loads((folder / "run.json").read_text())["data"]]
    return [(graph or None, folder / path) for graph, _, path in data]


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


UNREAD = "http://example.org/unread-by-any-query"


@pytest.mark.parametrize(("example", "query_file"), sorted(c for c in SUPPORTED if data_of(c[0])))
def test_example_on_the_background_its_query_reads(
    example: str, query_file: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each background file written again as N-Triples, a triple of a predicate no query
    reads after each of its own, loaded for the query's predicates (``loaded_for``) with
    every file's lines of other predicates blanked: the same hand-derived results. Under
    RDFS entailment (e6) nothing may be left out."""
    import sepia.io.background as background

    monkeypatch.setattr(background, "SKIPPING_FROM", 0)
    monkeypatch.setattr(background, "SKIP_BLOCK", 256)
    rewritten = []
    for n, (graph, path) in enumerate(data_of(example)):
        triples = [q.triple for q in load_background(path)]
        lines = [f"{t} .\n{t.subject} <{UNREAD}> {t.object} .\n" for t in triples]
        (tmp_path / f"{n}.nt").write_text("".join(lines))
        rewritten.append((graph, tmp_path / f"{n}.nt"))
    spec = json.loads((EXAMPLES / example / "run.json").read_text())
    query = parse_query((EXAMPLES / example / query_file).read_text())
    store = load_background(rewritten, loaded_for([query], spec.get("entailment") == "rdfs"))
    unread = sum(q.predicate.value == UNREAD for q in store)
    assert unread == (len(store) // 2 if spec.get("entailment") == "rdfs" else 0)
    got = run_example(example, query_file, store)
    canonical = lambda rows: sorted(json.dumps(r, sort_keys=True) for r in rows)  # noqa: E731
    assert canonical(got) == canonical(expected(example, query_file))
