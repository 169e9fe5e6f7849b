"""The sources' parts that need no Spark: SPEC parsing, the inbox's offsets, document cutting
and parsing, and the generator's pacing."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from sepia.runtime.spark.elements import CLOCK_GRAPH
from sepia.runtime.spark.ingest import INGEST_SCHEMA, IngestOptions
from sepia.runtime.spark.sources import SourceSpec, parse_spec
from sepia.runtime.spark.sources import generator as generator_module
from sepia.runtime.spark.sources.documents import document_batches
from sepia.runtime.spark.sources.generator import (
    ELEMENTS_PER_PARTITION,
    LEAST_SHARE,
    RANGE,
    GeneratorReader,
    ranged,
    spans,
)
from sepia.runtime.spark.sources.push import Inbox
from sepia.runtime.spark.sources.tcp import blank_line_documents

from .events import NQUADS_DOCUMENTS, TRIG_DOCUMENTS, comparable, expected_rows


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("streams/nearby.trig", None),
        ("C:/data/nearby.trig", None),
        (
            "mqtt://127.0.0.1:1884/sensors/+/temp?qos=2&format=nquads",
            SourceSpec("mqtt", {"host": "127.0.0.1", "port": "1884", "topic": "sensors/+/temp",
                                "qos": "2", "format": "nquads"}),
        ),
        (
            "mqtt://broker/home/#?client_id=sepia-1",
            SourceSpec("mqtt", {"host": "broker", "port": "1883", "topic": "home/#",
                                "clientId": "sepia-1"}),
        ),
        ("tcp://localhost:9999", SourceSpec("tcp", {"host": "localhost", "port": "9999"})),
        (
            "kafka://k1:9092,k2:9092/nearby?format=nquads&startingOffsets=earliest",
            SourceSpec("kafka", {"kafka.bootstrap.servers": "k1:9092,k2:9092",
                                 "subscribe": "nearby", "format": "nquads",
                                 "startingOffsets": "earliest"}),
        ),
        (
            "gen:W5?rate=50&seed=3&scale=100&stream=weather",
            SourceSpec("gen", {"workload": "W5", "name": "gen:W5?rate=50&seed=3&scale=100"
                               "&stream=weather", "rate": "50", "seed": "3", "scale": "100",
                               "workloadStream": "weather"}),
        ),
    ],
)
def test_specs_name_their_source_and_options(spec: str, expected: SourceSpec | None) -> None:
    assert parse_spec(spec) == expected


@pytest.mark.parametrize(
    ("spec", "complaint"),
    [
        ("mqtt://broker:1883", "no topic"),
        ("mqtt://broker/t?retain=1", "unknown parameter 'retain'"),
        ("tcp://localhost", "no port"),
        ("kafka://k1:9092", "no topic"),
        ("tcp://:9999", "no host"),
        ("gen:?rate=5", "which workload"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        parse_spec(spec)


def test_inbox_numbers_documents_from_the_offset_spark_starts_at() -> None:
    inbox = Inbox()
    for payload in (b"a", b"b", b"c"):
        inbox.put(payload)  # received before Spark asked: numbered once it does
    assert inbox.between(0, 3) == []
    assert inbox.latest(0) == 3
    assert inbox.between(0, 2) == [(0, b"a"), (1, b"b")]
    inbox.commit(2)
    inbox.put(b"d")
    assert inbox.latest(2) == 4
    assert inbox.between(0, 4) == [(2, b"c"), (3, b"d")]


def test_a_restarted_inbox_continues_the_checkpointed_numbering() -> None:
    inbox = Inbox()
    inbox.put(b"x")
    assert inbox.between(5, 10) == []  # the unfinished batch of the last run: gone
    assert inbox.latest(10) == 11
    assert inbox.between(10, 11) == [(10, b"x")]
    inbox.commit(11)
    assert inbox.latest(11) == 11


@pytest.mark.parametrize(
    ("lines", "documents"),
    [
        ([b"a\n", b"b\n", b"\n", b"  \r\n", b"c\n"], [b"a\nb\n", b"c\n"]),
        ([b"\n", b"a\n", b"\n"], [b"a\n"]),
        ([b"\n", b"\n"], []),
    ],
)
def test_blank_lines_end_documents(lines: list[bytes], documents: list[bytes]) -> None:
    assert list(blank_line_documents(lines)) == documents


@pytest.mark.parametrize(
    ("fmt", "documents", "error_line"),
    [("trig", TRIG_DOCUMENTS, 3), ("nquads", NQUADS_DOCUMENTS, 1)],
)
def test_documents_become_ingest_rows(
    fmt: str, documents: tuple[str, ...], error_line: int
) -> None:
    numbered = [(n, text.encode()) for n, text in enumerate(documents)]
    batches = document_batches("http://e/st", "tcp://h:1", numbered, fmt, IngestOptions())
    rows = [row for batch in batches for row in zip(*batch.to_pydict().values(), strict=True)]
    assert {row[0] for row in rows} == {"http://e/st"}
    assert {comparable(row) for row in rows} == expected_rows("tcp://h:1", error_line)
    assert len(rows) == 4


def generator(tmp_path: Path, **options: str) -> GeneratorReader:
    return GeneratorReader(
        {"workload": "W4", "scale": "20", "seed": "3", "stream": "http://e/s",
         "cache": str(tmp_path), **options}
    )


def test_the_generator_releases_rate_elements_per_second(tmp_path: Path) -> None:
    reader = generator(tmp_path, rate="10")
    now = [100.0]
    reader.clock = lambda: now[0]
    latest = lambda start: reader.latestOffset({"element": start}, ReadAllAvailable())  # noqa: E731
    assert latest(0) == {"element": 0}  # the query's first batch: start-up, nothing released
    now[0] = 104.0
    assert latest(0) == {"element": 0}  # the clock starts when the first batch is done
    now[0] = 104.55
    assert latest(0) == {"element": 5}
    now[0] = 105.5
    assert reader.latestOffset({"element": 5}, ReadMaxRows(3)) == {"element": 8}  # 15 due
    now[0] = 107.0
    assert latest(8) == {"element": 20}  # 30 due, the workload has 20


def test_the_generator_paces_from_a_restart_offset_and_runs_out_when_available_now(
    tmp_path: Path,
) -> None:
    reader = generator(tmp_path, rate="4")
    now = [0.0]
    reader.clock = lambda: now[0]
    assert reader.latestOffset({"element": 12}, ReadAllAvailable()) == {"element": 12}
    now[0] = 2.0
    assert reader.latestOffset({"element": 12}, ReadAllAvailable()) == {"element": 12}
    now[0] = 2.5
    assert reader.latestOffset({"element": 12}, ReadAllAvailable()) == {"element": 14}
    reader.prepareForTriggerAvailableNow()
    assert reader.latestOffset({"element": 14}, ReadAllAvailable()) == {"element": 20}


def test_generated_elements_are_read_back_by_position(tmp_path: Path) -> None:
    reader = generator(tmp_path)
    partitions = reader.partitions({"element": 5}, {"element": 8})
    rows = [row for p in partitions for batch in ranged(reader.read(p))
            for row in batch.to_pylist()]  # fmt: skip
    # W4 (stocks.write_trades): element n is event/e{n} with 5 triples, transaction "t{n}"
    assert [row["seq"] for row in rows] == [5] * 5 + [6] * 5 + [7] * 5
    assert {row["element"] for row in rows} == {
        f"http://stockmarket.org/event/e{n}" for n in (5, 6, 7)
    }
    assert sorted(row["o"] for row in rows if row["p"] == "<http://example/transaction>") == [
        '"t5"', '"t6"', '"t7"'
    ]
    assert {(row["stream"], row["file"]) for row in rows} == {
        ("http://e/s", "gen:W4?scale=20&seed=3")
    }


@pytest.mark.parametrize(
    ("low", "high", "cores", "expected"),
    [
        (0, 0, 2, []),
        (10, 1_010, 2, [(10, 1_010)]),  # under two shares of LEAST_SHARE: one task
        (0, 20_000, 1, [(0, 20_000)]),
        (0, 20_000, 2, [(0, 10_000), (10_000, 20_000)]),  # a paced second over both cores
        (5, 6_005, 4, [(5, 2_005), (2_005, 4_005), (4_005, 6_005)]),  # 3 shares for 4 cores
        (0, 50_000, 2, [(0, 16_666), (16_666, 33_333), (33_333, 50_000)]),  # <= 20,000 each
    ],
)
def test_a_batch_is_cut_over_the_cores_in_tasks_of_at_most_20000_elements(
    low: int, high: int, cores: int, expected: list[tuple[int, int]]
) -> None:
    assert LEAST_SHARE == 2_000 and ELEMENTS_PER_PARTITION == 20_000
    assert spans(low, high, cores) == expected


def test_a_cut_batch_reads_back_every_element_once_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(generator_module, "LEAST_SHARE", 5)
    parts = generator(tmp_path, cores="2").partitions({"element": 0}, {"element": 20})
    assert [p.value for p in parts] == [(0, 10), (10, 20)]
    reader = generator(tmp_path)
    read = [batch for p in parts for batch in ranged(reader.read(p))]
    seqs = [row["seq"] for batch in read for row in batch.to_pylist()]
    assert seqs == [n for n in range(20) for _ in range(5)]  # W4: 5 triples an element


def test_a_read_task_hands_spark_one_range_row_stamped_with_its_latest_end(
    tmp_path: Path,
) -> None:
    """The row Spark carries for a span, and its watermark time: the latest end of the
    span's own rows (W4's times rise with `seq`, so element 7's)."""
    reader = generator(tmp_path)
    [part] = reader.partitions({"element": 5}, {"element": 8})
    [batch] = reader.read(part)
    [row] = batch.to_pylist()
    [whole] = ranged(reader.read(part))
    assert (row["element"], row["seq"], row["line"]) == (RANGE, 5, 8)
    assert row["end"] == max(whole.column("end").to_pylist()) == whole.column("end")[-1].as_py()
    assert (row["stream"], row["file"]) == ("http://e/s", "gen:W4?scale=20&seed=3")


def test_range_rows_are_read_in_place_among_other_rows(tmp_path: Path) -> None:
    """A batch as the route stage gets it (with Spark's `event_time` past the ingest
    columns): a clock row, a range row, two more rows; the range becomes its elements'
    rows where it stood, the other rows stay as they were."""
    reader = generator(tmp_path)
    [part] = reader.partitions({"element": 2}, {"element": 4})
    [span] = reader.read(part)
    clock = {**span.to_pylist()[0], "element": CLOCK_GRAPH, "s": None, "line": None}
    rows = [clock, span.to_pylist()[0], clock, clock]
    batch = pa.RecordBatch.from_pylist(rows, schema=INGEST_SCHEMA)
    batch = batch.append_column("event_time", pa.array([0] * 4, pa.timestamp("ms")))
    out = pa.Table.from_batches(list(ranged([batch])))
    assert out.schema == INGEST_SCHEMA
    events = [f"http://stockmarket.org/event/e{n}" for n in (2, 3) for _ in range(5)]
    assert out.column("element").to_pylist() == [CLOCK_GRAPH, *events, CLOCK_GRAPH, CLOCK_GRAPH]
    assert out.column("seq").to_pylist()[1:11] == [2] * 5 + [3] * 5


def test_a_workload_with_several_streams_needs_a_choice(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="choose one of workload W7's streams"):
        GeneratorReader({"workload": "W7", "scale": "10", "stream": "http://e/s",
                         "cache": str(tmp_path)}).rows()


def test_an_element_range_reads_the_row_groups_holding_it(tmp_path):
    """Elements of 1-3 rows each in row groups of 5 rows: every range, within a group or
    across several, empty or past the end, gives exactly the rows a filter over the whole
    file gives, in file order."""
    seq = [n for n in range(40) for _ in range(1 + n % 3)]
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"seq": seq, "row": list(range(len(seq)))}), path, row_group_size=5)
    for low, high in [(0, 1), (3, 9), (0, 40), (17, 17), (39, 60), (50, 60)]:
        expected = [row for s, row in zip(seq, range(len(seq)), strict=True) if low <= s < high]
        assert generator_module.seq_range(path, low, high).column("row").to_pylist() == expected
