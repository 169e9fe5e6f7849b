"""Spark's per-key dictionaries forget what their sessions forget (docs/engine.md,
Forgetting terms): over a stream with fresh IRIs per element the dictionary held in Spark's
state store stays within what the live window can reference, read back from the checkpoint
batch by batch (Spark's state data source), before a kill and after the restart from its
checkpoint, and the restarted run's answer is `--engine local`'s and the reference's.

The stream: element i, stamped i // 2, says `:sensor<i> :value :reading<i>` (2 fresh terms),
50 elements per file, one file per micro-batch. The window [RANGE 4 STEP 2] keeps the
elements of at most RANGE + STEP = 6 instants (12 elements, 24 terms) and the query pins
`:value`: after a collection the dictionary holds at most 25 terms; 2 x 25 < 60, the
threshold, so the next collection comes when it holds 60 again, and an advance (one
instant, 2 elements) adds at most 4 terms. So at most 64 terms are ever stored, against
the 400 fresh terms of the stream (every one of them stays without forgetting)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sepia.io.streams import read_stream
from sepia.rdf.results import jsonl_line
from sepia.runtime.inputs import load_query
from sepia.runtime.local import run
from sepia.runtime.spark.host import ENGINE_MAPS, map_entry
from sepia.runtime.spark.incremental_engine import TERMS, term_rows
from sepia.runtime.spark.run import SparkRunOptions, run_on_spark
from sepia.semantics import evaluate

from ..evaluations import evaluations
from .child_run import STREAM
from .test_spark_recovery import child, kill_after

pytestmark = [pytest.mark.spark]

QUERY = """PREFIX : <http://example.org/>
SELECT ?x ?v FROM NAMED WINDOW :w ON :s [RANGE 4 STEP 2] WHERE { WINDOW :w { ?x :value ?v } }
"""
FILES, PER_FILE = 4, 50
FORGET_TERMS = 60
BOUND = FORGET_TERMS + 4


def write_stream(folder: Path) -> None:
    folder.mkdir()
    for n in range(FILES):
        lines = ["@prefix : <http://example.org/> .",
                 "@prefix prov: <http://www.w3.org/ns/prov#> ."]  # fmt: skip
        for i in range(n * PER_FILE, (n + 1) * PER_FILE):
            lines.append(f":g{i} {{ :sensor{i} :value :reading{i} . }} "
                         f":g{i} prov:generatedAtTime {i // 2} .")  # fmt: skip
        path = folder / f"part-{n:02d}.trig"
        path.write_text("\n".join(lines) + "\n")
        os.utime(path, (1_000_000 + n, 1_000_000 + n))  # read oldest first, one a batch


def stored_terms(spark: SparkSession, checkpoint: Path, batch: int | None = None) -> list[int]:
    """The ids of the dictionary entries the state store holds after `batch` (None: the
    last batch committed)."""
    reader = spark.read.format("statestore").option("path", str(checkpoint / "job"))
    reader = reader.option("stateVarName", ENGINE_MAPS)  # every map table, by entry
    if batch is not None:
        reader = reader.option("batchId", batch)
    rows = reader.load().select("user_map_key.key", "user_map_value.value").collect()
    blocks = [(entry.split("\0", 1)[1], value) for entry, value in rows
              if entry.startswith(map_entry(TERMS, ""))]  # fmt: skip
    return [term_id for term_id, _ in term_rows(blocks)]


def expected(query: Path, folder: Path) -> list[str]:
    """`--engine local`'s lines, checked against the reference evaluator's."""
    elements = [e for p in sorted(folder.iterdir()) for e in read_stream(p, STREAM)]
    parsed = load_query(query).query
    answer = evaluate(parsed, {STREAM: elements}, name="q")
    reference = [jsonl_line(r, elements[0].kind) for r in answer]
    local = [jsonl_line(r, elements[0].kind) for r in run([("q", parsed)], {STREAM: elements})]
    assert local and sorted(local) == sorted(reference)
    return evaluations(local)


def test_a_run_killed_after_forgetting_restarts_exactly(spark, tmp_path):
    """Killed (driver and JVM) once 3 batches are written, when the state store's
    dictionary (as of the last batch committed) has gaps (terms forgotten), then restarted
    from the checkpoint in this session: the restored sessions read back the stored
    dictionary and its last id. Batch by batch, before the kill and after the restart, the
    stored dictionary stays within what the live window can reference (one run shows both:
    the bound had a run of its own, a Spark job of ~18 s)."""
    query, folder = tmp_path / "q.rq", tmp_path / "stream"
    query.write_text(QUERY)
    write_stream(folder)
    checkpoint, out = tmp_path / "checkpoint", tmp_path / "out.jsonl"
    running = child(query, folder, checkpoint, out, forget_terms=FORGET_TERMS)
    assert kill_after(running, checkpoint / "results", 3), "the run ended before the kill"
    ids = stored_terms(spark, checkpoint)  # the batch written last may not be committed
    assert 0 < len(ids) < max(ids)  # forgotten terms: gaps among the ids stored
    after = run_on_spark([load_query(query)], {STREAM: str(folder)}, checkpoint=checkpoint,
                         output=str(out), spark=spark,
                         options=SparkRunOptions(forget_terms=FORGET_TERMS))  # fmt: skip
    held = [stored_terms(spark, checkpoint, batch) for batch in range(after[-1].batch + 1)]
    assert max(map(len, held)) <= BOUND < 2 * FILES * PER_FILE / 6
    # the ids given by then (the last file's terms come with the end of input): without
    # forgetting, each would be stored
    assert max(max(ids, default=0) for ids in held) > 4 * BOUND
    assert held[-1] == []  # the end of input: the key's state is gone
    assert evaluations(out.read_text().splitlines()) == expected(query, folder)
