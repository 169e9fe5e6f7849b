"""The Spark options of `sepia run`: `--conf`, `--packages`, `--debug`, errors in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from sepia.cli import app
from sepia.cli.run import spark_settings

E1 = Path(__file__).parents[4] / "examples" / "e1-shops-coupons"
KAFKA_ARGS = [
    "run", str(E1 / "query.rq"), "--data", str(E1 / "background.ttl"), "--no-progress",
    "--stream", "http://example.org/nearby=kafka://127.0.0.1:1/nearby",
    "--stream", f"http://example.org/coupons={E1 / 'stream-coupons.trig'}",
]  # fmt: skip


def test_conf_and_packages_become_session_settings() -> None:
    settings = spark_settings(
        ["spark.sql.shuffle.partitions=3", "spark.executor.extraJavaOptions=-Da=b=c"],
        "org.apache.spark:spark-sql-kafka-0-10_2.13:4.3.0",
    )
    assert settings == {
        "spark.sql.shuffle.partitions": "3",
        "spark.executor.extraJavaOptions": "-Da=b=c",  # the first '=' splits
        "spark.jars.packages": "org.apache.spark:spark-sql-kafka-0-10_2.13:4.3.0",
    }


def test_a_conf_without_a_value_is_a_usage_error() -> None:
    with pytest.raises(typer.BadParameter, match="KEY=VALUE"):
        spark_settings(["spark.sql.shuffle.partitions"], None)
    result = CliRunner().invoke(app, [*KAFKA_ARGS, "--conf", "nonsense"])
    assert result.exit_code == 2 and "KEY=VALUE" in result.output


@pytest.mark.spark
def test_a_missing_connector_is_one_line_and_debug_adds_the_trace(spark) -> None:
    result = CliRunner().invoke(app, KAFKA_ARGS)
    assert result.exit_code == 1
    told = " ".join(result.stderr.split())  # the message is wrapped to the terminal
    assert told.startswith("Error: Spark's Kafka connector is not on the classpath")
    assert "--packages org.apache.spark:spark-sql-kafka-0-10_2.13:4." in told
    assert "Traceback" not in told

    debugged = CliRunner().invoke(app, [*KAFKA_ARGS, "--debug"])
    assert debugged.exit_code == 1
    assert "Traceback" in debugged.stderr and "AnalysisException" in debugged.stderr


@pytest.mark.spark
def test_a_bad_element_is_one_located_line_from_a_fresh_jvm(tmp_path: Path) -> None:
    """A user's own run (a JVM of its own, Sepia's logging): the located error alone, not
    the executor's and the scheduler's log of each of the task's four attempts before it."""
    bad = tmp_path / "bad.trig"
    bad.write_text('<http://e/g1> { <http://e/s> <http://e/p> "1" . }\n'
                   '<http://e/g2> { <http://e/s> <http://e/p> "x\n')  # fmt: skip
    query = tmp_path / "q.rq"
    query.write_text("SELECT ?s FROM STREAM <http://e/st> [RANGE 4 STEP 2] WHERE { ?s ?p ?o }")
    done = subprocess.run(
        [sys.executable, "-m", "sepia", "run", str(query), "--stream", f"http://e/st={bad}",
         "--engine", "spark", "--no-progress"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1
    told = " ".join(done.stderr.split())  # the message is wrapped to the terminal
    assert told == (f"Error: Spark: {bad}:2 (element http://e/g2): syntax error: Unexpected "
                    "end of file --debug prints Spark's full trace")  # fmt: skip
