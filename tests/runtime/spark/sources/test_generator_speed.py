"""The generator paced by event time (`speed`), with fake clocks and hand-made rows, no Spark.

An element is released once the clock has passed `began + (end - origin) / speed`: `began`
is the source's second offset request, `origin` the earliest end time over every stream of
the workload, `speed` event-time milliseconds per wall-clock millisecond. Each test's stream
times are written out below, with their release times worked out by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable

from sepia.runtime.spark.elements import CLOCK_GRAPH
from sepia.runtime.spark.ingest import INGEST_SCHEMA
from sepia.runtime.spark.sources import generator as generator_module
from sepia.runtime.spark.sources import parse_spec
from sepia.runtime.spark.sources.generator import GeneratorReader, released_by, workload_origin
from sepia.workloads.manifest import Manifest, StreamFile

NEARBY = [1_000, 1_000, 1_400, 2_000, 2_600, 5_000]
COUPONS = [1_600, 2_000, 3_000]
"""The end times (ms) of two streams of one workload: their shared origin is 1,000."""


def write_rows(path: Path, ends: list[int], statistics: bool = True) -> None:
    """One ingest row per element, two rows per row group (so the search crosses groups)."""
    rows = [{"stream": "http://e/s", "file": "f", "seq": n, "element": f"_:e{n}", "start": end,
             "end": end, "kind": "dateTime", "s": "http://e/x", "p": "http://e/p",
             "o": "1", "line": None, "error": None} for n, end in enumerate(ends)]  # fmt: skip
    table = pa.Table.from_pylist(rows, schema=INGEST_SCHEMA)
    pq.write_table(table, path, row_group_size=2, write_statistics=statistics)


@pytest.fixture
def workload(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request) -> Path:
    """W1's generated data replaced by the two streams above (`statistics`: whether the
    Parquet files keep their row groups' statistics, by the test's parameter, else yes)."""
    statistics = getattr(request, "param", True)
    streams = []
    for name, ends in (("nearby", NEARBY), ("coupons", COUPONS)):
        streams.append(StreamFile(name, f"http://e/{name}", f"{name}.trig", len(ends), 0, 0))
        write_rows(tmp_path / f"rows-{name}.parquet", ends, statistics)
    manifest = Manifest("W1", 9, 3, tuple(streams), (), ())
    monkeypatch.setattr(generator_module, "generated", lambda *_: (manifest, tmp_path))
    workload_origin.cache_clear()
    generator_module._END_BOUNDS._entries.clear()
    generator_module._ROW_GROUPS._entries.clear()
    return tmp_path


def reader_of(stream: str, now: list[float], **options: str) -> GeneratorReader:
    reader = GeneratorReader({"workload": "W1", "scale": "9", "seed": "3",
                              "stream": f"http://e/{stream}", **options})  # fmt: skip
    reader.clock = lambda: now[0]
    if reader.idle is not None:
        reader.idle.clock = reader.clock
    return reader


def latest(reader: GeneratorReader) -> Callable[[dict], dict]:
    return lambda start: reader.latestOffset(start, ReadAllAvailable())


@pytest.mark.parametrize("workload", [True, False], indirect=True, ids=["stats", "no-stats"])
def test_two_streams_of_a_workload_are_released_by_event_time_from_one_origin(
    workload: Path,
) -> None:
    # speed 2: two event-time ms a wall-clock ms; origin 1,000 (nearby's first element);
    # both sources begin at clock 100.0. Release times, 100 + (end - 1,000) / 2 / 1,000:
    #   nearby 1,000 1,000 1,400 2,000 2,600 5,000 -> 100.0 100.0 100.2 100.5 100.8 102.0
    #   coupons 1,600 2,000 3,000                  -> 100.3 100.5 101.0
    # (by its own first time, 1,600, the coupons' first element would be out at 100.0)
    now = [90.0]
    nearby, coupons = reader_of("nearby", now, speed="2"), reader_of("coupons", now, speed="2")
    assert latest(nearby)({"element": 0}) == {"element": 0}  # the query's start-up
    assert latest(coupons)({"element": 0}) == {"element": 0}
    now[0] = 100.0  # the second offset requests: pacing begins
    assert latest(nearby)({"element": 0}) == {"element": 2}  # both elements at 1,000
    assert latest(coupons)({"element": 0}) == {"element": 0}
    now[0] = 100.25  # event time 1,000 + 250 x 2 = 1,500
    assert latest(nearby)({"element": 2}) == {"element": 3}
    assert latest(coupons)({"element": 0}) == {"element": 0}
    now[0] = 100.5  # 2,000: the elements at 2,000 of both streams
    assert latest(nearby)({"element": 3}) == {"element": 4}
    assert latest(coupons)({"element": 0}) == {"element": 2}
    now[0] = 101.0  # 3,000
    assert latest(nearby)({"element": 4}) == {"element": 5}
    assert latest(coupons)({"element": 2}) == {"element": 3}  # all of the coupons
    now[0] = 101.999  # 4,998
    assert latest(nearby)({"element": 5}) == {"element": 5}
    now[0] = 102.0  # 5,000
    assert latest(nearby)({"element": 5}) == {"element": 6}
    now[0] = 500.0
    assert latest(coupons)({"element": 3}) == {"element": 3}


def test_the_released_position_is_searched_over_the_end_times(workload: Path) -> None:
    path = workload / "rows-nearby.parquet"  # row groups [1,000 1,000] [1,400 2,000] [2,600 5,000]
    expected = {999: 0, 1_000: 2, 1_399: 2, 1_400: 3, 2_000: 4, 2_599: 4, 4_999: 5, 5_000: 6}
    assert {bound: released_by(path, bound) for bound in expected} == expected
    paths = (workload / "rows-coupons.parquet", path)
    assert workload_origin(paths) == 1_000


def test_a_restarted_query_paces_on_from_its_last_element(workload: Path) -> None:
    # Restarted at element 3 of nearby: its last element read, element 2, is at 1,400, and
    # the pace goes on from there at clock 50.0: 2,000 is out at 50.3, 2,600 at 50.6.
    now = [40.0]
    nearby = latest(reader_of("nearby", now, speed="2"))
    assert nearby({"element": 3}) == {"element": 3}
    now[0] = 50.0
    assert nearby({"element": 3}) == {"element": 3}
    now[0] = 50.25  # 1,400 + 500 = 1,900
    assert nearby({"element": 3}) == {"element": 3}
    now[0] = 50.5  # 2,400
    assert nearby({"element": 3}) == {"element": 4}
    now[0] = 50.75  # 2,900
    assert nearby({"element": 4}) == {"element": 5}


def test_an_idle_stream_paced_by_event_time_moves_time_at_its_speed(workload: Path) -> None:
    # speed 2, idleTimeout 0.5 s, no lateness; nearby as above, pacing from clock 100.0.
    now = [90.0]
    reader = reader_of("nearby", now, speed="2", idleTimeout="0.5")
    nearby = latest(reader)
    assert nearby({"element": 0}) == {"element": 0}
    now[0] = 100.0
    assert nearby({"element": 0}) == {"element": 2}  # the latest time: 1,000
    now[0] = 101.0  # 3,000: out to 2,600 (element 4), which arrived now
    assert nearby({"element": 2}) == {"element": 5}
    # 101.75: 4,500 is due, no element is: quiet for 0.75 - 0.5 = 0.25 s, time moves
    # 2,600 + 250 x 2 = 3,100 (never past 4,500, so the element at 5,000 is not late)
    now[0] = 101.75
    ticked = nearby({"element": 5})
    assert ticked == {"element": 5, "clock": 3_100}
    [row] = [r for p in reader.partitions({"element": 5}, ticked) for b in reader.read(p)
             for r in b.to_pylist()]  # fmt: skip
    assert (row["element"], row["end"]) == (CLOCK_GRAPH, 3_100)
    now[0] = 102.0  # 5,000: the last element
    assert nearby(ticked) == {"element": 6}
    now[0] = 103.0  # quiet for 1.0 - 0.5 s: 5,000 + 500 x 2
    assert nearby({"element": 6}) == {"element": 6, "clock": 6_000}


@pytest.mark.parametrize(
    ("query", "complaint"),
    [
        ("speed=2&rate=10", "rate .* and speed .* give one of them, not both"),
        ("speed=0", "speed is event-time milliseconds per wall-clock millisecond and must"),
        ("speed=-1", "speed is .* positive number, not '-1'"),
        ("speed=fast", "speed is .* positive number, not 'fast'"),
        ("speed=inf", "speed is .* positive number"),
        ("rate=0", "rate is elements per second and must be a positive number, not '0'"),
        ("rate=many", "rate is elements per second"),
    ],
)
def test_bad_paces_are_refused_naming_the_option(query: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        parse_spec(f"gen:W1?{query}")
    options = dict(pair.split("=") for pair in query.split("&"))
    with pytest.raises(ValueError, match=complaint):
        GeneratorReader({"workload": "W1", "stream": "http://e/s", **options})


def test_speed_is_a_gen_parameter() -> None:
    spec = parse_spec("gen:W1?stream=coupons&speed=12.5&scale=100")
    assert spec is not None and spec.options["speed"] == "12.5"
