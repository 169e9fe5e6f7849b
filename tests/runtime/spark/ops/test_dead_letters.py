"""`--on-error skip --dead-letter FILE` on the Spark job: good elements evaluated, the rejected
text in FILE exactly as the local reader writes it; a restarted run rebuilds FILE."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from sepia.io.streams import read_stream
from sepia.runtime.inputs import load_query
from sepia.runtime.spark.ingest import DEAD_LETTER_SUFFIX
from sepia.runtime.spark.run import SparkRunOptions, run_on_spark
from sepia.runtime.spark.sinks import DeadLetterFile

from ..evaluations import evaluations

E1 = Path(__file__).parents[4] / "examples" / "e1-shops-coupons"
E1_EXPECTED = (E1 / "expected.jsonl").read_text().splitlines()
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
    assert evaluations(out.read_text().splitlines()) == evaluations(E1_EXPECTED)
    # The same dead letters as the local reader's, for the same file.
    local = tmp_path / "local-dead.trig"
    list(read_stream(nearby, NEARBY, on_error="skip", errors=[].append, dead_letter=local))
    assert dead.read_text() == local.read_text()
    letters = dead.read_text()
    assert f"# {nearby}:8: element <http://example.org/b1>: no time" in letters
    assert ":b2 { :y :isNearby <bad iri> . }" in letters

    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert sum(r["results"] for r in records) == 3
    # one pass: the batch that reads the files and their end of input evaluates everything
    assert [(r["batch"], r["results"], r["state_rows"]) for r in records] == [(0, 3, 0)]
    terminal = capsys.readouterr().err
    assert "Spark UI: " in terminal
    assert terminal.splitlines()[-1].startswith("batch 0: ")


def cut_inside_last_line(text: bytes) -> bytes:
    """gzip of `text`, cut so that what can be read of it ends inside its last line."""
    packed = gzip.compress(text)
    last_line = text.rstrip(b"\n").rfind(b"\n") + 1
    for size in range(len(packed) - 8, 0, -1):
        readable = zlib.decompressobj(31).decompress(packed[:size])
        if last_line < len(readable) < len(text) - 1:
            return packed[:size]
    raise AssertionError("no cut lands in the last line")


@pytest.mark.spark
def test_a_garbage_line_and_a_truncated_gzip_lose_no_good_element(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A line of garbage before n3's time statement, and the gzip data cut inside a last
    element n6 (it would add a result at 16): E1's answer, both errors located."""
    tmp_path = tmp_path.resolve()
    lines = (E1 / "stream-nearby.trig").read_text().splitlines(keepends=True)
    lines.insert(8, "this is not rdf\n")  # line 9, before `:n3 prov:generatedAtTime 5 .`
    lines.append(":n6 { :carl :isNearby :b . } :n6 prov:generatedAtTime 13 .\n")  # line 15
    nearby = tmp_path / "nearby.trig.gz"
    nearby.write_bytes(cut_inside_last_line("".join(lines).encode()))
    out, dead = tmp_path / "out.jsonl", tmp_path / "dead.trig"
    options = SparkRunOptions(on_error="skip", dead_letter=dead, progress=False)
    run_on_spark(
        [load_query(E1 / "query.rq")],
        {NEARBY: str(nearby), COUPONS: str(E1 / "stream-coupons.trig")},
        [(None, E1 / "background.ttl")], options, output=str(out), spark=spark,
    )  # fmt: skip
    assert evaluations(out.read_text().splitlines()) == evaluations(E1_EXPECTED)
    letters = dead.read_text()
    assert f"# {nearby}:9: syntax error: " in letters
    assert f"# {nearby}:15: the gzip data ends early (a truncated file); " in letters


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
