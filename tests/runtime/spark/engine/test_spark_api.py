"""`continuous_query` over a user's own streaming DataFrame: a PARTITION BY query, results
emitted batch by batch as the watermark passes them, into the memory and file sinks.

Timeline (tests/semantics/test_partition.py): acme 10 @1 | beta 50 @2 | acme 12 @3 |
beta 55 @4 | news @5 (binds no ?c). SEQ(A : B) is strictly contiguous: over the whole
streamset nothing matches; per company acme 10 -> 12 matches over [1, 3] and beta 50 -> 55
over [2, 4]. One JSON file per batch (the memory sink's run); the last holds the
end-of-input marker. The file sink's run reads all four files in its first batch."""

from __future__ import annotations

import json
import os

import pytest

from sepia.runtime.spark.api import continuous_query
from sepia.runtime.spark.job import END_GRAPH, END_TIME
from sepia.runtime.spark.sinks import file_sink, memory_sink

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


def row(t: int, s: str, p: str, o: str) -> dict:
    return {"element": f"{EX}g{t}", "start": t, "end": t, "s": s, "p": p, "o": o}


def price(t: int, company: str, value: int) -> dict:
    return row(t, f"<{EX}{company}>", f"<{EX}price>", f'"{value}"{INT}')


FILES = [
    [price(1, "acme", 10), price(2, "beta", 50)],
    [price(3, "acme", 12), price(4, "beta", 55)],
    [row(5, f"<{EX}x>", f"<{EX}news>", f"<{EX}y>")],
    [{**row(END_TIME, f"<{END_GRAPH}>", f"<{EX}end>", f"<{EX}end>"), "element": END_GRAPH}],
]
SCHEMA = "element string, start bigint, end bigint, s string, p string, o string"


def test_partitioned_query_over_user_frames(spark, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    for n, rows in enumerate(FILES):  # one file per batch, in this order
        path = folder / f"{n}.json"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        os.utime(path, (1_000_000 + n, 1_000_000 + n))
    trades = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(folder))
    results = continuous_query(spark, QUERY, {EX + "s": trades}, name="rise")

    memory = memory_sink(results, "rises").trigger(availableNow=True).start()
    memory.awaitTermination()
    lines = [json.loads(r.line) for r in spark.table("rises").orderBy("t").collect()]
    found = [(r["t"], r["binding"]["c"], r["binding"]["p2"], r["from"]) for r in lines]
    assert found == [(3, f"<{EX}acme>", f'"12"{INT}', 1), (4, f"<{EX}beta>", f'"55"{INT}', 2)]
    per_batch = [p["sink"]["numOutputRows"] for p in memory.recentProgress]
    # acme's match leaves in the batch after the watermark passed 3, before the end marker
    assert per_batch[: per_batch.index(1) + 1] == [0, 0, 1]

    # The file sink over the same files read at once (one batch, then the watermark's): the
    # same two matches, whatever the batches.
    at_once = spark.readStream.schema(SCHEMA).json(str(folder))
    results = continuous_query(spark, QUERY, {EX + "s": at_once}, name="rise")
    files = file_sink(results, tmp_path / "out", tmp_path / "ck").trigger(availableNow=True).start()
    files.awaitTermination()
    lines = [r.value for r in spark.read.text(str(tmp_path / "out")).collect()]
    assert sorted(json.loads(line)["t"] for line in lines) == [3, 4]


TWO_STREAMS = """PREFIX : <http://example.org/>
SELECT ?c ?n
FROM STREAM S1 :s
FROM STREAM S2 :u
WHERE {
  SEQ(A ; B)
  DEFINE GPM A ON S1 { ?c :price ?p }
  DEFINE GPM B ON S2 { ?c :news ?n }
}
"""


def test_several_streams_are_read_and_routed_in_a_task_per_core(spark, tmp_path):
    """Two streams of three files each: six partitions, a task each if the sources' rows
    went to the route stage as they come; read in a task per core instead (`job.
    one_task_per_core`), with the same one match (acme's price @1, then its news @3)."""
    end = {**row(END_TIME, f"<{END_GRAPH}>", f"<{EX}end>", f"<{EX}end>"), "element": END_GRAPH}
    noise = lambda t: row(t, f"<{EX}x>", f"<{EX}noise>", f"<{EX}y>")  # noqa: E731
    files = {
        EX + "s": [[price(1, "acme", 10)], [noise(2)], [noise(4), end]],
        EX + "u": [[row(3, f"<{EX}acme>", f"<{EX}news>", f"<{EX}n1>")], [noise(5)], [end]],
    }
    streams = {}
    for n, (iri, batches) in enumerate(files.items()):
        folder = tmp_path / f"in{n}"
        folder.mkdir()
        for k, rows in enumerate(batches):
            (folder / f"{k}.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
        streams[iri] = spark.readStream.schema(SCHEMA).json(str(folder))
    results = continuous_query(spark, TWO_STREAMS, streams, name="news")
    query = memory_sink(results, "news").trigger(availableNow=True).start()
    query.awaitTermination()

    lines = [json.loads(r.line) for r in spark.table("news").collect()]
    assert [(r["binding"]["c"], r["binding"]["n"]) for r in lines] == [
        (f"<{EX}acme>", f"<{EX}n1>")
    ]
    tracker = spark.sparkContext.statusTracker()
    first_stages = [min(tracker.getJobInfo(job).stageIds)
                    for job in tracker.getJobIdsForGroup(str(query.runId))]  # fmt: skip
    tasks = [tracker.getStageInfo(stage).numTasks for stage in first_stages]
    assert tasks and max(tasks) <= spark.sparkContext.defaultParallelism, tasks
