"""A one-key unit's own horizon on a live run (`EngineHost._horizon`): each stream's latest
element time, kept in the host's map table, less the allowed lateness, the least of them,
less one; never below the watermark's. Hand-worked on a unit reading two streams."""

from __future__ import annotations

from collections.abc import Iterator

from sepia.lang import parse_query
from sepia.runtime.spark.host import EngineHost, job_spec
from sepia.runtime.spark.units import units_of

QUERY = """
PREFIX : <http://example.org/>
REGISTER RSTREAM :out AS
SELECT ?x
FROM NAMED WINDOW :wa ON :a [RANGE 10 STEP 10]
FROM NAMED WINDOW :wb ON :b [RANGE 10 STEP 10]
WHERE { WINDOW :wa { ?x :p ?y } WINDOW :wb { ?x :q ?z } }
"""
A, B = "http://example.org/a", "http://example.org/b"


class Ends:
    """The host's map state, in memory (the calls `_horizon` makes)."""

    def __init__(self) -> None:
        self.entries: dict[str, int] = {}

    def iterator(self) -> Iterator[tuple[tuple, tuple]]:
        return iter([((k,), (v,)) for k, v in self.entries.items()])

    def updateValue(self, key: tuple, value: tuple) -> None:
        self.entries[key[0]] = value[0]

    def clear(self) -> None:
        self.entries.clear()


def host(lateness: int) -> EngineHost:
    units = units_of([("out", parse_query(QUERY))])
    made = EngineHost(job_spec(units, streams=(A, B), stream_horizon=lateness))
    made.stream_ends = Ends()  # type: ignore[assignment]
    return made


def row(stream: str, end: int) -> tuple:
    return (stream, "f", end, "g", end, end, "abstract", "")


def test_the_horizon_follows_the_slowest_stream_seen_and_never_falls_behind_spark():
    key = host(lateness=0)
    assert key._horizon(0, [row(A, 10), row(A, 20)], -1, False) == -1  # b not seen yet
    assert key._horizon(0, [row(B, 15)], -1, False) == 14  # min(20, 15) - 1
    assert key._horizon(0, [row(A, 30)], -1, False) == 14  # b's 15 kept from before
    assert key._horizon(0, [row(B, 40), row(B, 25)], 9, False) == 29  # min(30, 40) - 1
    assert key._horizon(0, [], 35, False) == 35  # the watermark's horizon is ahead
    assert key.stream_ends.entries == {A: 30, B: 40}  # type: ignore[attr-defined]
    assert key._horizon(0, [], 99, True) == 99  # the end of input forgets the streams
    assert key.stream_ends.entries == {}  # type: ignore[attr-defined]


def test_the_allowed_lateness_holds_the_horizon_back():
    key = host(lateness=5)
    assert key._horizon(0, [row(A, 20), row(B, 30)], -1, False) == 14  # min(20, 30) - 5 - 1
