"""Spark gives the aggregates' one answer (docs/semantics.md, "Aggregates: one answer"), as
the local engine and the reference do (tests/engine/r2r/test_one_answer.py derives it):
over :a's 1, 1.0, 1.0E0, 2.50 and 2.5E0, MIN is "1"^^xsd:decimal (the least of the tied
1s in the total order on terms), MAX "2.5"^^xsd:double (the greatest of the tied 2.5s);
over :b's doubles 0.1, 0.2 and 0.3, SUM is the exact sum rounded once, 0.6 (left to right
would give 0.6000000000000001)."""

from __future__ import annotations

import json
import os

import pyoxigraph as ox
import pytest

from sepia.runtime.spark.api import continuous_query, each_batch, run_to_end

pytestmark = pytest.mark.spark

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
QUERY = f"""PREFIX : <{EX}>
REGISTER RSTREAM :out AS SELECT ?x (MIN(?y) AS ?lo) (MAX(?y) AS ?hi) (SUM(?y) AS ?s)
FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 5]
WHERE {{ WINDOW :w {{ ?x :p ?y }} }} GROUP BY ?x"""
VALUES = [("a", "1", "integer"), ("a", "1.0", "decimal"), ("a", "1.0E0", "double"),
          ("a", "2.50", "decimal"), ("a", "2.5E0", "double"), ("b", "0.1E0", "double"),
          ("b", "0.2E0", "double"), ("b", "0.3E0", "double")]  # fmt: skip
SCHEMA = "element string, start bigint, end bigint, s string, p string, o string"


def typed(text: str, datatype: str) -> ox.Literal:
    return ox.Literal(text, datatype=ox.NamedNode(XSD + datatype))


EXPECTED = {
    f"{EX}a": {"lo": typed("1", "decimal"), "hi": typed("2.5", "double"),
               "s": typed("8", "double")},
    f"{EX}b": {"lo": typed("0.1", "double"), "hi": typed("0.3", "double"),
               "s": typed("0.6", "double")},
}  # fmt: skip


def test_spark_breaks_ties_and_rounds_double_sums_once(spark, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    rows = [{"element": f"{EX}g{n}", "start": 1 + n // 3, "end": 1 + n // 3, "s": f"<{EX}{s}>",
             "p": f"<{EX}p>", "o": str(typed(text, datatype))}
            for n, (s, text, datatype) in enumerate(VALUES)]  # fmt: skip
    path = folder / "0.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.utime(path, (1_000_000, 1_000_000))
    stream = spark.readStream.schema(SCHEMA).json(str(folder))
    end = tmp_path / "end"
    results = continuous_query(spark, QUERY, {EX + "s": stream}, end_of_input=end)
    seen: list = []
    writer = results.writeStream.foreachBatch(each_batch(lambda batch, _: seen.extend(batch)))
    run_to_end(writer.option("checkpointLocation", str(tmp_path / "ck")), end)
    assert {r.t for r in seen} == {10}
    found = {}
    for r in seen:
        values = dict(r.values)
        found[values.pop("x").value] = values
    assert found == EXPECTED
