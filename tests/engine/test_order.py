"""ORDER BY, LIMIT and OFFSET per evaluation: within one evaluation, rows come in the
query's order, on the reference, the local engine and Spark, in every output format.

Worked example: five elements in a [RANGE 2 STEP 1] window; it closes at 2 holding
a 3, a 1, a 2 (time 1) and b 5, b 4 (time 2), then at 3 holding b 5, b 4 only."""

from __future__ import annotations

import csv
import io
import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sepia.cli import app
from sepia.lang import parse_query
from sepia.rdf.order import term_key
from sepia.runtime.local import run
from sepia.semantics import evaluate

from .generators import EX, paired_streams, window_specs
from .shares import judge
from .support import background

STREAM = """@prefix : <http://example.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
:g1 { :a :p 3 . :a :p 1 . :a :p 2 . } :g1 prov:generatedAtTime 1 .
:g2 { :b :p 5 . :b :p 4 . } :g2 prov:generatedAtTime 2 .
"""
QUERY = """PREFIX : <http://example.org/>
REGISTER RSTREAM :out AS SELECT ?y ?x
FROM NAMED WINDOW :w ON :s [RANGE 2 STEP 1]
WHERE { WINDOW :w { ?x :p ?y } } """
CASES = {  # modifiers -> the ?y column, evaluation after evaluation
    "ORDER BY DESC(?y)": [(2, [5, 4, 3, 2, 1]), (3, [5, 4])],
    "ORDER BY ?y": [(2, [1, 2, 3, 4, 5]), (3, [4, 5])],
    "ORDER BY ?x DESC(?y)": [(2, [3, 2, 1, 5, 4]), (3, [5, 4])],
    "ORDER BY DESC(?y) LIMIT 2": [(2, [5, 4]), (3, [5, 4])],
    "ORDER BY DESC(?y) LIMIT 3 OFFSET 1": [(2, [4, 3, 2]), (3, [4])],
}


def written(tmp_path, modifiers: str, engine: str, fmt: str) -> list[tuple[int, int]]:
    """(t, ?y) of each row `sepia run` writes, in the order written."""
    (tmp_path / "q.rq").write_text(QUERY + modifiers)
    (tmp_path / "s.trig").write_text(STREAM)
    done = CliRunner().invoke(app, [
        "run", str(tmp_path / "q.rq"), "--stream", f"{EX}s={tmp_path / 's.trig'}",
        "--engine", engine, "--format", fmt,
    ], env={"COLUMNS": "500"})
    assert done.exit_code == 0, done.output
    if fmt == "jsonl":
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        return [(line["t"], int(line["binding"]["y"].split('"')[1])) for line in lines]
    if fmt == "csv":
        return [(int(r["t"]), int(r["y"])) for r in csv.DictReader(io.StringIO(done.stdout))]
    rows, t = [], None  # the table: a "q  t=2  +" line, then one boxed table per evaluation
    for line in done.stdout.splitlines():
        if line.startswith("q  t="):
            t = int(line.split("t=")[1].split()[0])
        elif line.startswith("│"):
            rows.append((t, int(line.split("│")[1])))
    return rows


@pytest.mark.parametrize("engine", ["reference", "local"])
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "table"])
@pytest.mark.parametrize("modifiers", CASES)
def test_each_evaluation_is_written_in_the_query_order(tmp_path, modifiers, engine, fmt):
    expected = [(t, y) for t, ys in CASES[modifiers] for y in ys]
    assert written(tmp_path, modifiers, engine, fmt) == expected


@pytest.mark.spark
def test_spark_writes_each_evaluation_in_the_query_order(spark, tmp_path):
    from sepia.rdf.results import read_results_jsonl
    from sepia.runtime.inputs import load_query
    from sepia.runtime.spark.run import run_on_spark

    (tmp_path / "q.rq").write_text(QUERY + "ORDER BY DESC(?y)")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "s.trig").write_text(STREAM)
    out = tmp_path / "out.jsonl"
    run_on_spark([load_query(tmp_path / "q.rq")], {f"{EX}s": str(tmp_path / "in" / "s.trig")},
                 checkpoint=tmp_path / "ck", output=str(out), spark=spark)  # fmt: skip
    got = [(r.t, int(r.values["y"].value)) for r in read_results_jsonl(out)]
    assert got == [(t, y) for t, ys in CASES["ORDER BY DESC(?y)"] for y in ys]


KEYS = ["?y", "DESC(?y)", "?x DESC(?y)", "DESC(?x) ?y"]
CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


@st.composite
def ordered_queries(draw) -> str:
    """A window query whose SELECT is ordered, with LIMIT / OFFSET sometimes."""
    where = draw(st.sampled_from([
        "WINDOW :w1 { ?x :p ?y }", "WINDOW :w1 { ?x ?k ?y } ?x :r ?z",
        "WINDOW :w1 { ?x :p ?y } WINDOW :w2 { ?x :q ?z }",
    ]))
    operator = draw(st.sampled_from(["RSTREAM", "ISTREAM", "DSTREAM"]))
    slice_ = draw(st.sampled_from(["", "", "LIMIT 2", "LIMIT 3 OFFSET 1", "OFFSET 1"]))
    windows = "\n".join(f"FROM NAMED WINDOW :w{i} ON :s{i} {draw(window_specs)}" for i in (1, 2))
    return (f"PREFIX : <{EX}>\nREGISTER {operator} :out AS SELECT ?x ?y\n{windows}\n"
            f"WHERE {{ {where} }} ORDER BY {draw(st.sampled_from(KEYS))} {slice_}")


@settings(max_examples=100, deadline=None, suppress_health_check=CHECKS)
@given(ordered_queries(), paired_streams())
def test_engine_gives_the_reference_rows_in_the_reference_order(text, data):
    """Lists, not bags: the engine's rows are the reference's in the same order, and each
    evaluation's rows are sorted by the query's keys."""
    query = parse_query(text)
    expected = evaluate(query, data, background(), name="q")
    judge(text, data, expected)
    assert list(run([("q", query)], data, background())) == expected, text
    keys = query.order
    for t in {r.t for r in expected}:
        rows = [r for r in expected if r.t == t]
        for before, after in itertools.pairwise(rows):
            pairs = [(term_key(before.values.get(n)), term_key(after.values.get(n)), d)
                     for n, d in keys]
            first = next(((b, a, d) for b, a, d in pairs if b != a), None)
            assert first is None or (first[0] > first[1] if first[2] else first[0] < first[1])
