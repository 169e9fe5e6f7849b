"""The results journal keeps only what exactly-once needs: a ledger of the last batch.

Before, every batch's lines stayed in `results/<batch>.jsonl` for ever and were replayed into
the output file on every restart. Here 40 batches leave one small ledger; a restarted sink
writes nothing at start, skips the batches the ledger holds, and cuts off what a batch cut
short by a crash had written, so the output equals an uninterrupted run's in jsonl, CSV
(one header) and TriG (graph numbers continue).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sepia.runtime.spark.sinks import ResultJournal, sorted_lines

pytestmark = pytest.mark.spark

RESULT_DDL = "t bigint, query_index int, partition string, seq int, query string, line string"


def select_line(t: int) -> str:
    return json.dumps({"query": "q", "t": t, "op": "+", "binding": {"x": f"<http://e/{t}>"}})


def construct_line(t: int) -> str:
    triple = f'<http://e/{t}> <http://e/p> "v" .'
    return json.dumps({"query": "q", "t": t, "op": "+", "triples": [triple]})


def batch(spark, lines: list[str]):
    rows = [(json.loads(line)["t"], 0, None, n, "q", line) for n, line in enumerate(lines)]
    return spark.createDataFrame(rows, RESULT_DDL)


def run(spark, journal: Path, output: Path, fmt: str, batches: list[list[str]], ids) -> None:
    sink = ResultJournal(journal, str(output), fmt)
    try:
        for batch_id in ids:
            sink(batch(spark, batches[batch_id]), batch_id)
    finally:
        sink.close()


def test_the_journal_stays_one_ledger_and_a_restart_replays_nothing(spark, tmp_path):
    batches = [[select_line(t)] for t in range(40)]
    journal, output = tmp_path / "results", tmp_path / "out.jsonl"
    run(spark, journal, output, "jsonl", batches, range(40))
    assert [p.name for p in journal.iterdir()] == ["ledger.json"]
    assert (journal / "ledger.json").stat().st_size < 200
    assert output.read_text().splitlines() == [lines[0] for lines in batches]

    # restarted: nothing rewritten at start; batch 39 replayed by Spark is skipped
    before = output.stat().st_mtime_ns
    run(spark, journal, output, "jsonl", [*batches, [select_line(40)]], [39, 40])
    assert output.read_text().splitlines() == [select_line(t) for t in range(41)]
    assert output.stat().st_mtime_ns >= before


@pytest.mark.parametrize(("fmt", "line"), [("csv", select_line), ("trig", construct_line)])
def test_a_batch_cut_short_by_a_crash_is_written_once(spark, tmp_path, fmt, line):
    batches = [[line(1), line(2)], [line(3)], [line(4), line(5)]]
    whole = tmp_path / f"whole.{fmt}"
    run(spark, tmp_path / "whole", whole, fmt, batches, range(3))

    journal, output = tmp_path / "results", tmp_path / f"out.{fmt}"
    run(spark, journal, output, fmt, batches, range(2))
    with output.open("a") as torn:  # the driver died while batch 2 was being written
        torn.write(whole.read_text()[output.stat().st_size :][:7])
    run(spark, journal, output, fmt, batches, [1, 2])  # Spark replays 1, then runs 2
    assert output.read_text() == whole.read_text()
    if fmt == "csv":
        assert output.read_text().count("query,t,op") == 1
    else:
        assert "urn:sepia:result:q:5" in output.read_text()


def test_a_table_shortens_iris_by_the_queries_prefixes(spark, tmp_path):
    """As a local run's table: `:5` under the query's `PREFIX : <http://e/>`."""
    output = tmp_path / "out.txt"
    sink = ResultJournal(tmp_path / "results", str(output), "table", ["x"], {"": "http://e/"})
    try:
        sink(batch(spark, [select_line(5)]), 0)
    finally:
        sink.close()
    assert ":5 " in output.read_text() and "<http://e/5>" not in output.read_text()


def test_an_output_shorter_than_the_ledger_says_is_refused(spark, tmp_path):
    journal, output = tmp_path / "results", tmp_path / "out.jsonl"
    run(spark, journal, output, "jsonl", [[select_line(1)]], [0])
    output.write_text("")
    with pytest.raises(ValueError, match=r"shorter than the \d+ bytes it wrote"):
        ResultJournal(journal, str(output), "jsonl")


def test_a_batch_is_written_in_result_order_null_partitions_first(spark, tmp_path):
    # (t, query_index, partition, seq): the order worked out by hand, null partition first
    rows = [(2, 0, "b", 0), (1, 1, None, 0), (1, 0, "a", 1), (1, 0, None, 3), (1, 0, "a", 0)]
    lines = [select_line(100 * t + 10 * q + n) for n, (t, q, _, _) in enumerate(rows)]
    frame = spark.createDataFrame(
        [(*row[:3], row[3], "q", line) for row, line in zip(rows, lines, strict=True)],
        RESULT_DDL,
    )
    assert sorted_lines(frame) == [lines[3], lines[4], lines[2], lines[1], lines[0]]


def test_a_jsonl_batch_mixing_kinds_of_time_is_written_in_the_first_kind(spark, tmp_path):
    later = json.dumps({"query": 'a ", "t": "', "t": "1970-01-01T00:00:00.005Z", "op": "+",
                        "binding": {"x": '"é"@fr'}}, ensure_ascii=False)  # fmt: skip
    output = tmp_path / "out.jsonl"
    sink = ResultJournal(tmp_path / "results", str(output), "jsonl")
    try:
        sink(batch(spark, [select_line(3)]), 0)
        sink(spark.createDataFrame([(5, 0, None, 0, "a", later)], RESULT_DDL), 1)
    finally:
        sink.close()
    written = output.read_text(encoding="utf-8").splitlines()
    assert written[0] == select_line(3)
    assert json.loads(written[1]) == {**json.loads(later), "t": 5}  # in the writer's kind
