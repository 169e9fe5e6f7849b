"""The Spark ingest pipeline and `sepia validate`, on small hand-written stream files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from sepia.cli import app
from sepia.rdf.time import TimeKind
from sepia.runtime.spark.ingest import IngestOptions, StreamSource
from sepia.runtime.spark.validate import validate_streams

pytestmark = pytest.mark.spark

PREFIXES = "@prefix : <http://example.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
POINTS = (
    PREFIXES
    + """
:e1 { :diana :isNearby :a . }   :e1 prov:generatedAtTime 2 .
:e2 { :eve :isNearby :b . :eve :age 30 . }     :e2 prov:generatedAtTime 2 .
:e3 { :carl :isNearby :a . }    :e3 prov:generatedAtTime 5 .
"""
)
INTERVALS = (
    PREFIXES
    + """
:i1 { :a1 :delayAt :m . }
:i1 prov:startedAtTime 10 ; prov:endedAtTime 12 .
:i2 { :d1 :delayAt :h . }
:i2 prov:startedAtTime 11 ; prov:endedAtTime 14 .
"""
)
DATETIME_NQ = (
    '<http://e/s> <http://e/p> "1" <http://e/g1> .\n'
    "<http://e/g1> <http://www.w3.org/ns/prov#generatedAtTime> "
    '"2024-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .\n'
    '<http://e/s> <http://e/p> "2" <http://e/g2> .\n'
    "<http://e/g2> <http://www.w3.org/ns/prov#generatedAtTime> "
    '"2024-01-01T00:00:10Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .\n'
)
# Line 6 has an element with no time and line 8 one out of order: both reported, e4 and e6 kept.
WITH_ERRORS = (
    PREFIXES
    + """:e3 { :a :p 1 . } :e3 prov:generatedAtTime 3 .
:e4 { :a :p 2 . } :e4 prov:generatedAtTime 4 .
:e5 { :a :p 3 . }
:e6 { :a :p 4 . } :e6 prov:generatedAtTime 6 .
:e7 { :a :p 5 . } :e7 prov:generatedAtTime 1 .
"""
)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_counts_time_ranges_and_kinds_per_stream(spark: SparkSession, tmp_path: Path) -> None:
    points = write(tmp_path / "points.trig", POINTS)
    intervals = write(tmp_path / "intervals.trig", INTERVALS)
    dated = tmp_path / "dated.nq.gz"
    dated.write_bytes(gzip.compress(DATETIME_NQ.encode()))
    report = validate_streams(
        spark,
        [
            StreamSource("http://e/nearby", points),
            StreamSource("http://e/transport", intervals),
            StreamSource("http://e/dated", dated),
        ],
    )
    got = {
        s.stream: (s.elements, s.triples, s.first, s.last, s.kind) for s in report.streams.values()
    }
    assert got == {
        "http://e/nearby": (3, 4, 2, 5, TimeKind.ABSTRACT),
        "http://e/transport": (2, 2, 10, 14, TimeKind.ABSTRACT),
        "http://e/dated": (2, 2, 1_704_067_200_000, 1_704_067_210_000, TimeKind.DATETIME),
    }
    assert report.errors == []


def test_every_error_is_reported_and_no_good_element_lost(
    spark: SparkSession, tmp_path: Path
) -> None:
    bad = write(tmp_path / "bad.trig", WITH_ERRORS)
    report = validate_streams(spark, [StreamSource("http://e/s", bad)])
    stream = report.streams["http://e/s"]
    assert (stream.elements, stream.triples) == (3, 3)
    assert sorted((e.line, e.element) for e in report.errors) == [
        (5, "http://example.org/e5"),
        (7, "http://example.org/e7"),
    ]
    assert all(e.file.endswith("bad.trig") for e in report.errors)


def test_lateness_puts_a_late_element_back(spark: SparkSession, tmp_path: Path) -> None:
    late = write(
        tmp_path / "late.trig",
        PREFIXES
        + """
:a { :x :p 1 . } :a prov:generatedAtTime 5 .
:b { :x :p 2 . } :b prov:generatedAtTime 3 .
""",
    )
    strict = validate_streams(spark, [StreamSource("http://e/s", late)])
    lenient = validate_streams(spark, [StreamSource("http://e/s", late)], IngestOptions(2))
    assert len(strict.errors) == 1
    assert (lenient.errors, lenient.streams["http://e/s"].elements) == ([], 2)


def test_a_watched_folder_reads_every_stream_file_in_it(
    spark: SparkSession, tmp_path: Path
) -> None:
    folder = tmp_path / "incoming"
    folder.mkdir()
    write(folder / "part1.trig", POINTS)
    write(folder / "part2.trig", POINTS.replace(":e", ":f"))
    write(folder / "notes.txt", "not a stream file")
    report = validate_streams(spark, [StreamSource("http://e/s", folder)])
    assert (report.elements, report.triples) == (6, 8)


def test_validate_command_prints_jsonl_and_fails_on_errors(
    spark: SparkSession, tmp_path: Path
) -> None:
    good = write(tmp_path / "good.trig", POINTS)
    bad = write(tmp_path / "bad.trig", WITH_ERRORS)
    ok = CliRunner().invoke(app, ["validate", f"http://e/a={good}", "--format", "jsonl"])
    assert ok.exit_code == 0, ok.output
    summary = json.loads(ok.stdout.splitlines()[0])
    assert (summary["stream"], summary["elements"], summary["from"], summary["to"]) == (
        "http://e/a",
        3,
        2,
        5,
    )
    failed = CliRunner().invoke(app, ["validate", str(bad), "--format", "jsonl"])
    assert failed.exit_code == 1
    errors = [json.loads(line) for line in failed.stdout.splitlines() if '"error"' in line]
    assert [e["line"] for e in sorted(errors, key=lambda e: e["line"])] == [5, 7]


def test_missing_stream_file_is_a_clear_usage_error(tmp_path: Path) -> None:
    """A missing stream file is an input error in the command line's one style (exit 1)."""
    result = CliRunner().invoke(
        app, ["validate", str(tmp_path / "nope.trig")], env={"COLUMNS": "500"}
    )
    assert result.exit_code == 1
    assert "no such file" in result.output


def test_examples_validate(spark: SparkSession) -> None:
    examples = sorted(Path(__file__).parents[3].glob("examples/*/stream*.trig"))
    assert len(examples) >= 5
    report = validate_streams(spark, [StreamSource(p.as_uri(), p) for p in examples])
    assert report.errors == []
    assert all(s.elements > 0 for s in report.streams.values())
