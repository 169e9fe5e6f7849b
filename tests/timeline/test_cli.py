"""`sepia run --timeline` and `sepia compare` from the command line, on the worked examples.

The compared answers are worked out by hand: E4's README gives each SPAseq contiguity's
matches; for E1's window w1 alone (examples/e1-shops-coupons/nearby.rq, windows (1,6],
(3,8], ... closing every 2) the present windows at the closes 6..16 hold
{diana-a, eve-b, carl-a}, {carl-a, eve-a}, {eve-a}, {diana-b}, {diana-b}, {diana-b}.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sepia.cli import app

from .worked import EXAMPLES, worked

E1 = EXAMPLES / "e1-shops-coupons"
E4 = EXAMPLES / "e4-spaseq-selection"
NEARBY = ["--stream", f"http://example.org/nearby={E1 / 'stream-nearby.trig'}"]
E4_STREAMS = [
    "--stream", f"http://example.org/power={E4 / 'stream-power.trig'}",
    "--stream", f"http://example.org/weather={E4 / 'stream-weather.trig'}",
]  # fmt: skip


def sepia(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def marks(path: Path) -> Counter:
    return Counter(re.findall(r'id="(element|window|instant|result|link)-\d+"', path.read_text()))


def test_run_draws_its_timeline_with_either_engine(tmp_path: Path) -> None:
    args = worked("e3-rsepql-landmark").cli_args()
    for engine, suffix in (("reference", ".svg"), ("local", ".html")):
        path = tmp_path / f"e3{suffix}"
        out = sepia("run", *args, "--engine", engine, "--format", "jsonl", "--timeline", str(path))
        assert out.exit_code == 0, out.output
        assert len(out.stdout.splitlines()) == 4
        assert marks(path) == Counter(element=5, window=10, instant=5, result=4, link=8)


def test_run_png_and_range(tmp_path: Path) -> None:
    path = tmp_path / "e1.png"
    out = sepia("run", *worked("e1-shops-coupons").cli_args(), "--engine", "reference",
                "--timeline", str(path), "--timeline-range", "10:16")  # fmt: skip
    assert out.exit_code == 0, out.output
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_run_timeline_errors_are_one_line(tmp_path: Path) -> None:
    args = worked("e1-shops-coupons").cli_args()
    bad = sepia("run", *args, "--engine", "reference", "--timeline", str(tmp_path / "x.gif"))
    assert bad.exit_code == 1 and "must end in .png, .svg, .html" in bad.output
    spark = sepia("run", *args, "--engine", "spark", "--timeline", str(tmp_path / "x.png"))
    assert spark.exit_code == 1 and "--engine local or reference" in spark.output
    span = sepia("run", *args, "--engine", "reference", "--timeline", str(tmp_path / "x.png"),
                 "--timeline-range", "9:3")  # fmt: skip
    assert span.exit_code == 1 and "FROM <= TO" in span.output
    assert "Traceback" not in bad.output + spark.output + span.output


def _jsonl(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]


def _who(line: dict) -> tuple:
    values = line["binding"]
    return (line["t"], line["op"], *(values[k].rsplit("/", 1)[-1][:-1] for k in sorted(values)))


def test_compare_e4_contiguities() -> None:
    out = sepia("compare", str(E4 / "seq-colon.rq"), *E4_STREAMS,
                "--contiguity", "any,next,strict", "--format", "jsonl")  # fmt: skip
    assert out.exit_code == 0, out.output
    lines = _jsonl(out.stdout)
    given = {
        (line["binding"]["h"][-3:-1], line["binding"]["w"][-3:-1], line["t"]): (
            tuple(line["settings"].values()),
            line["differs"],
        )
        for line in lines
    }
    assert given == {
        ("H1", "W1", 20): ((1, 1, 0), True),  # strict: W0 comes right after H1
        ("H2", "W1", 20): ((1, 1, 1), False),  # every strategy
        ("H1", "W2", 25): ((1, 0, 0), True),  # skip-till-next took W1 already
        ("H2", "W2", 25): ((1, 0, 0), True),
    }


def test_compare_e4_engines_agree() -> None:
    out = sepia("compare", str(E4 / "seq-semicolon.rq"), *E4_STREAMS,
                "--engine", "reference,local", "--format", "jsonl")  # fmt: skip
    lines = _jsonl(out.stdout)
    assert len(lines) == 2 and not any(line["differs"] for line in lines)


def test_compare_e1_stream_operators(tmp_path: Path) -> None:
    html = tmp_path / "ops.html"
    operators = ["--operator", "rstream,istream,dstream"]
    out = sepia("compare", str(E1 / "nearby.rq"), *NEARBY, *operators, "--format", "jsonl",
                "--timeline", str(html))  # fmt: skip
    assert out.exit_code == 0, out.output
    by = {name: set() for name in ("rstream", "istream", "dstream")}
    for line in _jsonl(out.stdout):
        for name, count in line["settings"].items():
            if count:
                by[name].add(_who(line))
    assert by["rstream"] - by["istream"] == {
        (8, "+", "a", "carl"), (10, "+", "a", "eve"), (14, "+", "b", "diana"),
        (16, "+", "b", "diana"),
    }  # fmt: skip
    assert by["istream"] < by["rstream"]
    assert by["dstream"] == {
        (8, "-", "a", "diana"), (8, "-", "b", "eve"), (10, "-", "a", "carl"),
        (12, "-", "a", "eve"),
    }  # fmt: skip
    # the timeline: a lane per setting, every result marked (none is given by all three)
    text = html.read_text()
    assert len(re.findall(r'class="mark result[^"]*differs', text)) == 9 + 5 + 4
    assert len(re.findall(r'class="mark result differs dstream"', text)) == 4
    for name in by:
        assert f">{name}</text>" in text


def test_compare_table_marks_differences() -> None:
    out = sepia("compare", str(E1 / "nearby.rq"), *NEARBY, "--operator", "rstream,istream")
    assert out.exit_code == 0, out.output
    rows = [line for line in out.stdout.splitlines() if "?shop=" in line]
    marked = [line for line in rows if "≠" in line]
    assert len(rows) == 9 and len(marked) == 4
    assert "4 of 9 result lines differ between rstream, istream" in out.stdout


def test_compare_refuses_what_does_not_apply() -> None:
    out = sepia("compare", str(E1 / "nearby.rq"), *NEARBY, "--contiguity", "any")
    assert out.exit_code == 1 and "no SPAseq sequence" in out.output
    out = sepia("compare", str(E1 / "nearby.rq"), *NEARBY)
    assert out.exit_code == 1 and "give at least one axis" in out.output
    out = sepia("compare", str(E1 / "nearby.rq"), *NEARBY, "--report", "xx")
    assert out.exit_code == 1 and "not one of cc, wc, nc" in out.output


def test_compare_e1_report_policies() -> None:
    """docs/semantics.md: content change answers bob's coupon at 15, when it enters w2;
    window close (with or without NON EMPTY) at 16, when (14, 16] closes."""
    args = worked("e1-shops-coupons").cli_args()
    out = sepia("compare", *args, "--report", "cc,wc,wc+nc", "--format", "jsonl")
    assert out.exit_code == 0, out.output
    rows = {(line["t"], _who(line)[-1]): line["settings"] for line in _jsonl(out.stdout)}
    assert rows == {
        (8, "carl"): {"cc": 1, "wc": 1, "wc+nc": 1},
        (8, "eve"): {"cc": 1, "wc": 1, "wc+nc": 1},
        (15, "diana"): {"cc": 1, "wc": 0, "wc+nc": 0},
        (16, "diana"): {"cc": 0, "wc": 1, "wc+nc": 1},
    }


def test_compare_dialect_defaults() -> None:
    """nearby.rq read with C-SPARQL's defaults (window close AND non-empty, RStream) and
    CQELS's (content change, IStream): CQELS answers at each arrival 2, 5, 7, 12 what is
    new in w1's present window ((1,6] at 2 and 5, (3,8] at 7, (7,12] at 12)."""
    out = sepia("compare", str(E1 / "nearby.rq"), *NEARBY, "--dialect", "csparql,cqels",
                "--format", "jsonl")  # fmt: skip
    assert out.exit_code == 0, out.output
    cqels = sorted(_who(line) for line in _jsonl(out.stdout) if line["settings"]["cqels"])
    assert cqels == [
        (2, "+", "a", "diana"), (2, "+", "b", "eve"), (5, "+", "a", "carl"),
        (7, "+", "a", "eve"), (12, "+", "b", "diana"),
    ]  # fmt: skip
    assert sum(line["settings"]["csparql"] for line in _jsonl(out.stdout)) == 9


def test_compare_an_example_folder_across_engines() -> None:
    """E6 given as its folder (run.json: RDFS entailment): both engines give its 4 rows."""
    out = sepia("compare", str(EXAMPLES / "e6-smart-city-rdfs"), "--engine", "reference,local",
                "--format", "jsonl")  # fmt: skip
    assert out.exit_code == 0, out.output
    lines = _jsonl(out.stdout)
    assert len(lines) == 4 and not any(line["differs"] for line in lines)


def test_without_matplotlib_png_says_how_to_install(tmp_path: Path, monkeypatch) -> None:
    """matplotlib is a dependency, but a broken environment gets one line, not a traceback;
    the HTML form needs nothing."""
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import fails
    args = [*worked("e1-shops-coupons").cli_args(), "--engine", "reference"]
    out = sepia("run", *args, "--timeline", str(tmp_path / "x.png"))
    assert out.exit_code == 1 and "pip install 'matplotlib" in out.output
    assert "Traceback" not in out.output
    html = sepia("run", *args, "--timeline", str(tmp_path / "x.html"))
    assert html.exit_code == 0 and (tmp_path / "x.html").exists()


def test_timeline_refuses_standard_input(tmp_path: Path) -> None:
    out = sepia("run", str(E1 / "nearby.rq"), "--stream", "http://example.org/nearby=-",
                "--engine", "local", "--timeline", str(tmp_path / "x.html"))  # fmt: skip
    assert out.exit_code == 1 and "standard input" in out.output


def test_compare_spark_refuses_what_its_api_cannot_take() -> None:
    """The Spark API takes a query's text as written and runs to the end of the input:
    checked before any Spark starts, one located line each."""
    args = worked("e1-shops-coupons").cli_args()
    combined = sepia("compare", *args, "--engine", "local,spark", "--operator", "istream")
    assert combined.exit_code == 1 and "combines with no other axis" in combined.output
    until = sepia("compare", *args, "--engine", "local,spark", "--until", "10")
    assert until.exit_code == 1 and "drop --until" in until.output
    assert "Traceback" not in combined.output + until.output


@pytest.mark.spark
def test_compare_e1_on_reference_local_and_spark(spark) -> None:
    """E1 (RSP-QL Example 10): carl and eve at 8, diana at 16, from all three engines."""
    args = worked("e1-shops-coupons").cli_args()
    out = sepia("compare", *args, "--engine", "reference,local,spark", "--format", "jsonl")
    assert out.exit_code == 0, out.output
    rows = {(line["t"], _who(line)[-1]): line["settings"] for line in _jsonl(out.stdout)}
    every = {"reference": 1, "local": 1, "spark": 1}
    assert rows == {(8, "carl"): every, (8, "eve"): every, (16, "diana"): every}
    assert not any(line["differs"] for line in _jsonl(out.stdout))
