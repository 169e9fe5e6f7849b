"""A Spark run in its own process, for the recovery and cluster tests to kill:
QUERY FOLDER CHECKPOINT OUT [MASTER [FORGET_TERMS]]."""

from __future__ import annotations

import sys
from pathlib import Path

from sepia.engine.forgetting import MIN_TERMS
from sepia.runtime.inputs import load_query
from sepia.runtime.spark.run import SparkRunOptions, run_on_spark
from sepia.runtime.spark.session import SparkConfig, spark_session

STREAM = "http://example.org/s"

if __name__ == "__main__":
    query, folder, checkpoint, out = sys.argv[1:5]
    master = sys.argv[5] if len(sys.argv) > 5 else "local[2]"
    forget_terms = int(sys.argv[6]) if len(sys.argv) > 6 else MIN_TERMS
    # the suite's session's JVM (tests/conftest.py): C1 only, serial collector, no web UI
    spark = spark_session(SparkConfig(master=master, shuffle_partitions=2, short=True))
    options = SparkRunOptions(forget_terms=forget_terms)
    run_on_spark([load_query(Path(query))], {STREAM: folder}, checkpoint=Path(checkpoint),
                 output=out, spark=spark, options=options)  # fmt: skip
