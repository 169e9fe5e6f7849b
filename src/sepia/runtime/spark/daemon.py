"""Warm Python workers: PySpark's worker daemon, with Sepia imported before it forks.

Spark forks each Python worker from one daemon process per executor. The stock daemon has
imported only PySpark, so every new worker (one per concurrent task, again in each stage
that needs more) imports pyoxigraph, lark, pandas and Sepia's engine itself before its
first row: about a second of CPU each. This daemon imports them once; forked workers
inherit them (`spark.python.daemon.module`, set by `session.spark_session`). The compiled
plans are then kept per worker, in bounded caches (`warm.py`: per-worker warm state).
"""

from __future__ import annotations

import pandas  # noqa: F401  (PySpark's Arrow stages import it in each worker: ~1 s of CPU)
import pyspark.daemon

import sepia.runtime.spark.job  # noqa: F401  (the route stage, the host and the engine)

if __name__ == "__main__":
    pyspark.daemon.manager()
