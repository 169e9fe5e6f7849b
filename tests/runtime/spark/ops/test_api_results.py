"""The Python API for PySpark users: a finite input ends by itself, results as a typed table
and batch by batch.

The stream is test_spark_api's, without the end-of-input element the user once had to add:
acme 10 @1 | beta 50 @2 | acme 12 @3 | beta 55 @4 | news @5. The PARTITION BY sequence
matches acme 10 -> 12 over [1, 3] and beta 50 -> 55 over [2, 4] (by hand, and the
reference's answer in test_spark_api). The watermark never passes 4, the last element's
time: beta's match left only with the end-of-input element; `run_to_end` now drops it.
"""

from __future__ import annotations

import json
import os

import pytest

from sepia.runtime.spark.api import _idle, continuous_query, each_batch, result_table, run_to_end
from sepia.runtime.spark.sinks import memory_sink

pytestmark = pytest.mark.spark

EX = "http://example.org/"
QUERY = """PREFIX : <http://example.org/>
SELECT ?c ?p2
FROM STREAM S1 :s
PARTITION BY ?c
WHERE {
  SEQ(A : B)
  DEFINE GPM A ON S1 { ?c :price ?p1 }
  DEFINE GPM B ON S1 { ?c :price ?p2 FILTER(?p2 > ?p1) }
}
"""
INT = "^^<http://www.w3.org/2001/XMLSchema#integer>"
SCHEMA = "element string, start bigint, end bigint, s string, p string, o string"


def price(t: int, company: str, value: int) -> dict:
    return {"element": f"{EX}g{t}", "start": t, "end": t, "s": f"<{EX}{company}>",
            "p": f"<{EX}price>", "o": f'"{value}"{INT}'}  # fmt: skip


FILES = [
    [price(1, "acme", 10), price(2, "beta", 50)],
    [price(3, "acme", 12), price(4, "beta", 55)],
]
TYPED = [(3, "query", "+", 1, 3, f"{EX}acme", 12), (4, "query", "+", 2, 4, f"{EX}beta", 55)]


def trades(spark, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    for n, rows in enumerate(FILES):
        path = folder / f"{n}.json"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        os.utime(path, (1_000_000 + n, 1_000_000 + n))
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(folder))


def test_a_finite_input_ends_by_itself_into_a_typed_table(spark, tmp_path):
    end = tmp_path / "end"
    results = continuous_query(spark, QUERY, {EX + "s": trades(spark, tmp_path)}, end_of_input=end)
    table = result_table(results, {"c": "string", "p2": "bigint"})
    assert dict(table.dtypes) == {"t": "bigint", "query": "string", "op": "string",
                                  "from": "bigint", "to": "bigint", "c": "string",
                                  "p2": "bigint"}  # fmt: skip
    writer = memory_sink(table, "typed").option("checkpointLocation", str(tmp_path / "ck"))
    run_to_end(writer, end)
    rows = [tuple(r) for r in spark.table("typed").orderBy("t").collect()]
    assert rows == TYPED


def test_each_batch_hands_over_results_in_the_reference_order(spark, tmp_path):
    end = tmp_path / "end"
    results = continuous_query(spark, QUERY, {EX + "s": trades(spark, tmp_path)}, end_of_input=end)
    seen: list[tuple[int, int, str]] = []

    def handle(batch: list, batch_id: int) -> None:
        seen.extend((batch_id, r.t, str(dict(r.binding)["c"])) for r in batch)

    writer = results.writeStream.foreachBatch(each_batch(handle))
    run_to_end(writer.option("checkpointLocation", str(tmp_path / "ck")), end)
    assert [(t, c) for _, t, c in seen] == [(3, f"<{EX}acme>"), (4, f"<{EX}beta>")]
    assert [b for b, _, _ in seen] == sorted(b for b, _, _ in seen)


class Status:
    """A query whose `status` is Spark's StreamingQueryStatus as a dict."""

    def __init__(self, message: str, data: bool, active: bool) -> None:
        self.status = {"message": message, "isDataAvailable": data, "isTriggerActive": active}


@pytest.mark.parametrize(
    ("message", "data", "active", "idle"),
    [
        ("Initializing sources", False, False, False),  # before the first trigger
        ("Processing new data", True, True, False),
        ("Waiting for next trigger", True, False, False),  # a batch ran: there may be more
        ("Waiting for data to arrive", False, False, True),  # the 10 ms after an empty trigger
        ("Waiting for next trigger", False, False, True),  # the rest of the interval
        ("No new data but cleaning up state", False, True, False),  # the timers' batch
    ],
)
def test_a_query_is_idle_from_an_empty_trigger_to_the_next(message, data, active, idle):
    assert _idle(Status(message, data, active)) is idle
