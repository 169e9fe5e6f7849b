"""The Flink SQL job of the ``flink`` peer: runs in ``.venv-flink`` (PyFlink), not in Sepia's
environment, so it imports nothing from Sepia.

Usage: ``.venv-flink/bin/python flink_job.py JOB.json``. JOB: {"tables": [{"name", "path",
"columns": [[name, SQL type]], "rowtime": column of epoch ms or null}], "query": a SELECT that
yields one row with the match count}. The CSV tables are declared with the filesystem
connector (a bounded source: at its end the watermark reaches +inf and every pending match
is emitted); a ``rowtime`` column becomes the event-time attribute ``rowtime``. Prints one
JSON line: the count, the seconds from submitting the job to its result (the JVM's start is
not in it), and the Flink version.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.version import __version__ as flink_version


def table_ddl(table: dict) -> str:
    """CREATE TABLE for one CSV file, with an event-time attribute when it has a rowtime."""
    columns = [f"`{name}` {kind}" for name, kind in table["columns"]]
    if table.get("rowtime"):
        columns.append(f"rowtime AS TO_TIMESTAMP_LTZ(`{table['rowtime']}`, 3)")
        columns.append("WATERMARK FOR rowtime AS rowtime")
    return (f"CREATE TABLE `{table['name']}` ({', '.join(columns)}) WITH ("
            f"'connector' = 'filesystem', 'path' = '{table['path']}', 'format' = 'csv')")


def run(job: dict) -> dict:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = env.get_config()
    config.set("table.local-time-zone", "UTC")
    # the count is a streaming aggregate: without mini-batches it emits (and the collect
    # carries to Python) a retraction and an update per match
    config.set("table.exec.mini-batch.enabled", "true")
    config.set("table.exec.mini-batch.allow-latency", "1 s")
    config.set("table.exec.mini-batch.size", "10000")
    for table in job["tables"]:
        env.execute_sql(table_ddl(table))
    started = time.perf_counter()
    count = 0
    with env.execute_sql(job["query"]).collect() as rows:
        for row in rows:  # a running count: insertions and retractions; the last one stands
            count = row[0] or 0
    return {"results": int(count), "seconds": time.perf_counter() - started,
            "flink": flink_version}


if __name__ == "__main__":
    print(json.dumps(run(json.loads(Path(sys.argv[1]).read_text()))))
