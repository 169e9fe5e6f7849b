"""`sepia check` judges answers with the RSP-QL oracle."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from sepia.cli import app

E1 = Path(__file__).parents[2] / "examples" / "e1-shops-coupons"
INPUTS = [
    "--stream", f"http://example.org/nearby={E1 / 'stream-nearby.trig'}",
    "--stream", f"http://example.org/coupons={E1 / 'stream-coupons.trig'}",
    "--data", str(E1 / "background.ttl"),
]  # fmt: skip


def judge(answer: Path):
    args = ["check", str(E1 / "query.rq"), "--answer", str(answer), *INPUTS]
    return CliRunner().invoke(app, args, env={"COLUMNS": "200"})


def test_the_expected_answer_is_correct() -> None:
    result = judge(E1 / "expected.jsonl")
    assert result.exit_code == 0, result.output
    assert "correct" in result.output.lower()


def test_an_answer_missing_a_row_is_wrong_and_the_difference_is_shown(tmp_path: Path) -> None:
    lines = (E1 / "expected.jsonl").read_text().splitlines()
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text("\n".join(lines[1:]) + "\n")
    result = judge(wrong)
    assert result.exit_code == 1
    assert "carl" in result.output and "8" in result.output


def test_a_malformed_answer_names_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "query", "t": 8, "op": "+", "binding": {}}\nnot json\n')
    result = judge(bad)
    assert result.exit_code == 1
    assert "bad.jsonl" in result.output and "2" in result.output
