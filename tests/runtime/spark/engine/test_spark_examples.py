"""Every worked example through the Spark job (`run_on_spark`, the incremental engine): the
jsonl lines of each query must be `--engine local`'s, in its order (the reference's for the
queries the engine refuses, which the job runs on the reference adapter), and match the
reference evaluator's answer and the hand-derived expected.jsonl.

Each streaming run costs seconds, so the examples without entailment run together as one run
(their streams and background graphs are disjoint; E5 names no stream and so reads all of
them, which only adds events without :price), and E6 (RDFS) runs alone. Query names are
prefixed with the example's, so every line says which example it answers."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from sepia.runtime.spark.run import SparkRunError, SparkRunOptions, run_on_spark

from .examples import NAMES, Example, canonical, example

pytestmark = pytest.mark.spark


def combined(names: list[str]) -> Example:
    parts = [example(name) for name in names]
    return Example(
        parts[0].folder,
        [replace(q, name=f"{p.folder.name}/{q.name}") for p in parts for q in p.queries],
        {iri: path for p in parts for iri, path in p.bindings.items()},
        [d for p in parts for d in p.data],
        parts[0].rdfs,
    )


RUNS = [[n for n in NAMES if not example(n).rdfs], [n for n in NAMES if example(n).rdfs]]


@pytest.mark.parametrize("names", RUNS, ids=["+".join(n[:2] for n in r) for r in RUNS])
def test_examples_give_the_local_jsonl(spark, tmp_path, names):
    run = combined(names)
    out = tmp_path / "results.jsonl"
    options = SparkRunOptions(rdfs=run.rdfs)
    run_on_spark(run.queries, run.bindings, run.data, options, output=str(out), spark=spark)
    lines = out.read_text().splitlines()
    assert sorted(lines) == sorted(run.reference_lines())
    for query in run.queries:
        mine = [line for line in lines if line.startswith(f'{{"query": "{query.name}",')]
        assert mine == run.local_lines(query), query.name
    got = [json.loads(line) for line in lines]
    for name in names:
        mine = [{**r, "query": r["query"].split("/")[1]} for r in got
                if r["query"].startswith(name + "/")]  # fmt: skip
        assert canonical(mine) == canonical(example(name).expected()), name


def test_a_bad_element_stops_the_run_with_its_place(spark, tmp_path):
    run = example("e3-rsepql-landmark")
    bad = tmp_path / "bad.trig"
    bad.write_text(
        "@prefix : <http://example.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
        ":G1 { :a1 :p :b1 . } :G1 prov:generatedAtTime 2 .\n:G2 { :b1 :q :c1 . }\n"
    )
    with pytest.raises(SparkRunError, match=r"bad\.trig:4 \(element .*G2\): no time"):
        run_on_spark(run.queries, {"http://example.org/s": str(bad)}, spark=spark,
                     output=str(tmp_path / "out.jsonl"))  # fmt: skip


def test_a_checkpoint_keeps_the_bucket_count_it_started_with(spark, tmp_path):
    """A checkpoint folder that does not exist yet (as `sepia bench` passes it) is made, and
    the run's bucket count is saved there: a restart with another count keys elements as
    the first run did, so the state it resumes is found."""
    ex = example("e1-shops-coupons")
    checkpoint = tmp_path / "not-yet" / "checkpoint"
    out = tmp_path / "out.jsonl"  # the checkpoint's output: a restart appends to it
    for asked in (3, 5):
        run_on_spark(ex.queries, ex.bindings, ex.data, SparkRunOptions(buckets=asked),
                     checkpoint=checkpoint, output=str(out), spark=spark)  # fmt: skip
        assert (checkpoint / "buckets").read_text() == "3"
        assert out.read_text().splitlines() == ex.local_lines(ex.queries[0])


def test_a_run_given_no_bucket_count_takes_one_per_core_and_at_least_two(spark, tmp_path):
    """Two buckets on two cores ran W6 and W4 faster than four; one core keeps two, since one
    bucket would put a PARTITION BY unit on a single key (`job.default_buckets`)."""
    ex = example("e1-shops-coupons")
    checkpoint = tmp_path / "checkpoint"
    run_on_spark(ex.queries, ex.bindings, ex.data, checkpoint=checkpoint,
                 output=str(tmp_path / "out.jsonl"), spark=spark)  # fmt: skip
    cores = spark.sparkContext.defaultParallelism
    assert (checkpoint / "buckets").read_text() == str(max(2, cores))
    assert (tmp_path / "out.jsonl").read_text().splitlines() == ex.local_lines(ex.queries[0])
