"""`--on-error skip --dead-letter FILE` on the Spark job: good elements evaluated, the rejected
text in FILE exactly as the local reader writes it; a restarted run rebuilds FILE."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sepia.io.streams import read_stream
from sepia.runtime.inputs import load_query
from sepia.runtime.spark.ingest import DEAD_LETTER_SUFFIX
from sepia.runtime.spark.job import END_TIME
from sepia.runtime.spark.run import SparkRunOptions, run_on_spark
from sepia.runtime.spark.sinks import DeadLetterFile

E1 = Path(__file__).parents[2] / "examples" / "e1-shops-coupons"
NEARBY, COUPONS = "http://example.org/nearby", "http://example.org/coupons"
# E1's nearby stream with two bad elements: b1 has no time, b2 a syntax error (line 11).
BAD_NEARBY = """@prefix : <http://example.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .

:n1 { :diana :isNearby :a . }
:n1 prov:generatedAtTime 2 .
:n2 { :eve :isNearby :b . }
:n2 prov:generatedAtTime 2 .
:b1 { :x :isNearby :a . }
:n3 { :carl :isNearby :a . }
:n3 prov:generatedAtTime 5 .
:b2 { :y :isNearby <bad iri> . } :b2 prov:generatedAtTime 6 .
:n4 { :eve :isNearby :a . }
:n4 prov:generatedAtTime 7 .
:n5 { :diana :isNearby :b . }
:n5 prov:generatedAtTime 12 .
"""


@pytest.mark.spark
def test_bad_elements_go_to_the_dead_letter_file_and_the_rest_is_evaluated(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tmp_path = tmp_path.resolve()  # the workers name files by their resolved path
    nearby = tmp_path / "nearby.trig"
    nearby.write_text(BAD_NEARBY)
    out, dead, metrics = tmp_path / "out.jsonl", tmp_path / "dead.trig", tmp_path / "m.jsonl"
    options = SparkRunOptions(on_error="skip", dead_letter=dead, progress=True, metrics=metrics)
    run_on_spark(
        [load_query(E1 / "query.rq")],
        {NEARBY: str(nearby), COUPONS: str(E1 / "stream-coupons.trig")},
        [(None, E1 / "background.ttl")], options, output=str(out), spark=spark,
    )  # fmt: skip

    # The good elements are E1's stream: E1's hand-derived answer.
    expected = (E1 / "expected.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in out.read_text().splitlines()] == [
        json.loads(line) for line in expected
    ]
    # The same dead letters as the local reader's, for the same file.
    local = tmp_path / "local-dead.trig"
    list(read_stream(nearby, NEARBY, on_error="skip", errors=[].append, dead_letter=local))
    assert dead.read_text() == local.read_text()
    letters = dead.read_text()
    assert f"# {nearby}:8: element <http://example.org/b1>: no time" in letters
    assert ":b2 { :y :isNearby <bad iri> . }" in letters

    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert sum(r["results"] for r in records) == 3
    assert [r["batch"] for r in records] == sorted({r["batch"] for r in records})
    assert records[-1]["watermark_ms"] == END_TIME
    terminal = capsys.readouterr().err
    assert "Spark UI: " in terminal
    assert "watermark end of input" in terminal.splitlines()[-1]


def test_a_restarted_run_rebuilds_the_dead_letter_file_then_extends_it(tmp_path: Path) -> None:
    parts, target = tmp_path / "parts", tmp_path / "dead.trig"
    letters = DeadLetterFile(parts, target)
    (parts / f"a{DEAD_LETTER_SUFFIX}").write_text("# first\nx\n\n")
    letters.gather()
    (parts / f"b{DEAD_LETTER_SUFFIX}").write_text("# second\ny\n\n")  # written, not gathered
    letters.close()
    assert target.read_text() == "# first\nx\n\n"

    again = DeadLetterFile(parts, target)  # the restart: the file as the index says
    assert target.read_text() == "# first\nx\n\n"
    again.gather()
    again.gather()
    again.close()
    assert target.read_text() == "# first\nx\n\n# second\ny\n\n"
