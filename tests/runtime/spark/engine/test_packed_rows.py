"""A chunk's element rows of one key and stream cross the shuffle packed into one row
(`job.packed_rows`, `elements.pack`), and the host unpacks them (`elements.unpack`):
the rows a key is handed are the rows routed to it, end, mark and stand-in rows pass
as they are, and a packed row is stamped with its rows' latest end (the watermark's)."""

from __future__ import annotations

from sepia.runtime.spark.elements import (
    END_GRAPH,
    MARK_GRAPH,
    PACKED,
    STAND_INS,
    end_row,
    mark_row,
    pack_stand_ins,
    unpack,
)
from sepia.runtime.spark.job import packed_rows

A, B = "http://e/a", "http://e/b"


TRIPLE = '<http://e/s> <http://e/p> "x\\n" .'


def row(stream: str, seq: int, end: int, text: str = TRIPLE) -> tuple:
    return (stream, "f.trig", seq, f"http://e/g{seq}", end - 1, end, "abstract", text)


def test_each_key_and_stream_gets_one_packed_row_and_unpacks_to_its_rows():
    routed = [
        (0, None, row(A, 0, 5)), (0, None, row(A, 1, 9)), (0, None, row(B, 2, 7)),
        (1, "0/2", row(A, 0, 5)), (1, "1/2", row(A, 1, 9, "<a>\x1f<b>\x1f<c>")),
        (1, "1/2", row(A, 3, 3)),
        (1, "0/2", pack_stand_ins([row(A, 1, 9, "")])), (1, "0/2", mark_row(A, 9, "abstract")),
        (0, None, end_row(A, "abstract")),
    ]  # fmt: skip
    out = list(packed_rows(routed))
    assert len(out) == 7  # 3 passed as they are, (0, A) and (1/2, A) packed, 2 single rows
    assert sorted(r[3] for _, _, r in out).count(PACKED) == 2
    assert [r[3] for _, _, r in out[:3]] == [STAND_INS, MARK_GRAPH, END_GRAPH]
    packed = {(u, k): r for u, k, r in out if r[3] == PACKED}
    assert packed[(0, None)][4:6] == (9, 9) and packed[(1, "1/2")][4:6] == (9, 9)
    for unit, key in {(u, k) for u, k, _ in routed}:
        sent = [r for u, k, r in routed if (u, k) == (unit, key)]
        got = [r for u, k, r in out if (u, k) == (unit, key)]
        assert sorted(unpack(got)[0]) == sorted(unpack(sent)[0])
        assert unpack(got)[1:] == unpack(sent)[1:]
