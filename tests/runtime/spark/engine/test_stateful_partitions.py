"""The stateful stage's partitions (`job.stateful_partitions`): Spark puts each key on the
partition its hash gives, and with as many partitions as keys two buckets often share one
(buckets 0/4 to 3/4 of unit 0 do on four partitions) while another idles. The count chosen
spreads the keys so that no partition holds more than its share, checked by Spark's own
hash partitioning of the keys (`repartition` on the grouping columns), apart from the
hash the count was chosen by (`key_hash.spark_hash`, itself checked against Spark's
`hash` function)."""

from __future__ import annotations

from collections import Counter

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from sepia.lang import parse_query
from sepia.runtime.spark.host import job_spec
from sepia.runtime.spark.job import all_keys, stateful_partitions
from sepia.runtime.spark.key_hash import spark_hash
from sepia.runtime.spark.units import units_of

from .test_route_columns import STRICT

pytestmark = pytest.mark.spark

ONE_KEY = """PREFIX : <http://example.org/>
SELECT ?s ?p WHERE { STREAM <http://example.org/stocks> [RANGE 10 STEP 10] { ?s :price ?p } }"""


def _spec(text: str, buckets: int):
    units = units_of([("q", parse_query(text))])
    return job_spec(units, streams=("http://example.org/stocks",), buckets=buckets)


def _loads(spark: SparkSession, keys: list, count: int) -> list[int]:
    """Keys per partition, as Spark's hash partitioning over (unit, partition) puts them."""
    frame = spark.createDataFrame(keys, "unit int, partition string")
    placed = frame.repartition(count, "unit", "partition").select(F.spark_partition_id())
    return sorted(Counter(row[0] for row in placed.collect()).values(), reverse=True)


@pytest.fixture(autouse=True)
def columnar(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEPIA_ENGINE_PATH", "columnar")


def test_four_buckets_collide_on_four_partitions_and_get_one_each(spark: SparkSession) -> None:
    spec = _spec(STRICT, 4)
    keys = all_keys(spec)
    assert keys == [(0, "0/4"), (0, "1/4"), (0, "2/4"), (0, "3/4")]
    assert _loads(spark, keys, 4)[0] == 2  # why: two buckets share a task
    count = stateful_partitions(spec, 4)
    assert count is not None and count > 4
    assert _loads(spark, keys, count) == [1, 1, 1, 1]


@pytest.mark.parametrize(("buckets", "asked"), [(4, 2), (8, 4), (5, 8)])
def test_no_partition_holds_more_than_its_share(spark, buckets: int, asked: int) -> None:
    spec = _spec(STRICT, buckets)
    keys = all_keys(spec)
    count = stateful_partitions(spec, asked)
    assert count is not None and count >= min(buckets, asked)
    assert _loads(spark, keys, count)[0] <= -(-buckets // min(buckets, asked))


def test_a_query_on_one_key_runs_one_task(spark: SparkSession) -> None:
    spec = _spec(ONE_KEY, 4)
    assert all_keys(spec) == [(0, None)]
    assert stateful_partitions(spec, 4) == 1


def test_the_key_hash_is_sparks_own(spark: SparkSession) -> None:
    """Ints of both signs, a null, ASCII and multi-byte strings of every length modulo 4
    (the bytes past the last word are Spark's own case), bucket keys as the job names them."""
    texts = [None, "", "a", "ab", "abc", "abcd", "0/4", "13/16", "é", "€x", "日本語", "b\x7f\x80z"]
    keys = [(unit, text) for unit in (0, 1, 7, -3, 2**31 - 1) for text in texts]
    frame = spark.createDataFrame(keys, "unit int, partition string")
    expected = [row[0] for row in frame.select(F.hash("unit", "partition")).collect()]
    assert [spark_hash(unit, text) for unit, text in keys] == expected


HELD = """PREFIX : <http://example.org/>
SELECT ?c ?p1 FROM STREAM S1 <http://example.org/stocks> PARTITION BY ?c
WHERE { SEQ(A, !B) DEFINE GPM A ON S1 { ?c :price ?p1 }
  DEFINE GPM B ON S1 { ?c :price ?p2 FILTER(?p2 > ?p1) } }"""


def test_a_partition_by_query_with_a_strict_negation_stays_on_one_key() -> None:
    """A `, !B` match waits for its partition's next event and holds back every
    partition's later results, so the unit keeps one key; without the `!` it is spread
    over the buckets. Both are read from the plan, with no background data encoded."""
    assert all_keys(_spec(HELD, 4)) == [(0, None)]
    spread = HELD.replace("SEQ(A, !B)", "SEQ(A, B)")
    assert all_keys(_spec(spread, 4)) == [(0, f"{b}/4") for b in range(4)]
