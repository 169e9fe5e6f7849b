"""A chunk's element rows of one key and stream cross the shuffle packed into one row
(`job.packed_rows`, `elements.pack`), and the host unpacks them (`elements.unpack`):
the rows a key is handed are the rows routed to it, end, mark and stand-in rows pass
as they are, and a packed row is stamped with its rows' latest end (the watermark's)."""

from __future__ import annotations

import pyoxigraph as ox

from sepia.engine.codec import Codec
from sepia.rdf.stream import StreamElement
from sepia.runtime.spark import elements
from sepia.runtime.spark.columns import triple_ids
from sepia.runtime.spark.element_batches import unpack
from sepia.runtime.spark.elements import (
    END_GRAPH,
    MARK_GRAPH,
    PACKED,
    PACKED_TERMS,
    STAND_INS,
    TermTexts,
    end_row,
    mark_row,
    pack,
    pack_stand_ins,
    to_element,
    unpacked_text,
)
from sepia.runtime.spark.host import packed as packed_state
from sepia.runtime.spark.host import unpacked
from sepia.runtime.spark.job import packed_rows

from .term_rows import term_row

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


S1, S2 = "<http://e/s1>", "<http://e/s2>"
P, V = "<http://e/p>", '"5"^^<http://www.w3.org/2001/XMLSchema#integer>'
TERM_ROWS = [
    row(A, 0, 5, "\x1f".join([S1, P, V, S1, P, S2])),
    row(A, 1, 6, ""),
    row(A, 2, 8, "\x1f".join([S2, P, V])),
]
"""Term text (s p o of each triple, joined by U+001F) of three elements, one without
triples: 9 terms met, 4 distinct (S1, P, V, S2)."""


def test_packed_terms_with_a_line_break_unpack_to_the_same_terms():
    """Terms travel one a line; a literal written with a raw line break (N-Triples escapes
    it, a hand-made row may not) sends the block's terms as a JSON list instead."""
    broken = '"two\nlines"'
    rows = [row(A, 0, 5, "\x1f".join([S1, P, broken])), row(A, 1, 6, "\x1f".join([S2, P, V]))]
    terms, _, _ = unpacked_text(pack(rows)[7])
    assert terms == [S1, P, broken, S2, V]
    assert [str(r[7]) for r in unpack([pack(rows)])[0]] == [r[7] for r in rows]
    assert unpacked_text(pack(TERM_ROWS)[7])[0] == [S1, P, V, S2]


def test_term_text_rows_pack_as_their_distinct_terms_and_unpack_to_the_same_rows():
    packed = pack(TERM_ROWS)
    assert packed[3] == PACKED_TERMS and packed[4:6] == (8, 8)
    terms, _, (shared, graphs, _) = unpacked_text(packed[7])
    assert terms == [S1, P, V, S2]  # each once, in order of first use
    assert [values for values, _ in shared] == [[A], ["f.trig"], ["abstract"]]  # once each
    assert graphs == [r[3] for r in TERM_ROWS]
    rows = unpack([packed])[0]
    assert [r[7].stop - r[7].start for r in rows] == [6, 0, 3]
    assert [r[:7] for r in rows] == [r[:7] for r in TERM_ROWS]
    assert [str(r[7]) for r in rows] == [r[7] for r in TERM_ROWS]
    assert [bool(r[7]) for r in rows] == [True, False, True]
    # held in the state store (host.packed) they are their term text again
    assert unpacked(packed_state(rows)) == TERM_ROWS
    # the row engine and the reference parse them as the text
    assert to_element(rows[2]).triples == to_element(TERM_ROWS[2]).triples


def test_packed_and_loose_term_text_encode_to_each_element_s_own_terms():
    # two packed rows' tables and a loose row (a chunk's single row of a key crosses
    # unpacked): each element's ids decode to its own terms, whatever table held them
    other = [row(B, 3, 7, "\x1f".join([S2, P, S1])), row(B, 4, 9, "\x1f".join([S1, P, V]))]
    loose = row(B, 5, 9, "\x1f".join([S1, P, S2, S2, P, V]))
    rows = [*unpack([pack(TERM_ROWS)])[0], *unpack([pack(other)])[0], loose]
    codec = Codec()
    s, p, o, element = triple_ids([r[7] for r in rows], codec)
    decoded: list[list[str]] = [[] for _ in rows]
    for si, pi, oi, e in zip(s.tolist(), p.tolist(), o.tolist(), element.tolist(), strict=True):
        decoded[e] += [codec.decode_text(i) for i in (si, pi, oi)]
    texts = [*(r[7] for r in TERM_ROWS), *(r[7] for r in other), loose[7]]
    assert decoded == [text.split("\x1f") if text else [] for text in texts]
    assert len({codec.decode_text(i) for i in s.tolist() + p.tolist() + o.tolist()}) == 4


def test_the_route_stage_s_term_refs_pack_as_their_distinct_terms(monkeypatch):
    # TermTexts' rows refer to a table of a chunk's terms; a key's rows of two tables (a
    # table every 2 elements here) pack to each row's own terms, each distinct term of a
    # table once; another key's single row crosses as its term text
    monkeypatch.setattr(elements, "TABLE_ELEMENTS", 2)
    s1, s2, p = (ox.NamedNode(f"http://e/{n}") for n in ("s1", "s2", "p"))
    five = ox.Literal("05", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer"))
    triples = [(ox.Triple(s1, p, five), ox.Triple(s1, p, s2)), (), (ox.Triple(s2, p, five),),
               (ox.Triple(s1, p, s1),)]  # fmt: skip
    texts = TermTexts()
    rows = [texts("f.trig", n, StreamElement(A, f"http://e/g{n}", n, n, t))
            for n, t in enumerate(triples)]  # fmt: skip
    assert {id(r[7].table) for r in rows[:2]} != {id(r[7].table) for r in rows[2:]}
    out = list(packed_rows([(0, None, r) for r in rows[:3]] + [(1, None, rows[3])]))
    packed, single = out[0][2], out[1][2]
    assert (
        packed[3] == PACKED_TERMS and single[7] == "<http://e/s1>\x1f<http://e/p>\x1f<http://e/s1>"
    )
    terms, _, _ = unpacked_text(packed[7])
    assert sorted(terms) == sorted([S1, P, V, S2, S2, P, V])  # each table's once
    expected = [term_row("f.trig", n, StreamElement(A, f"http://e/g{n}", n, n, t))[7]
                for n, t in enumerate(triples)]  # fmt: skip
    assert [str(r[7]) for r in unpack([packed])[0]] == expected[:3]
    assert expected[0] == "\x1f".join([S1, P, V, S1, P, S2])


def test_rows_of_several_files_and_kinds_unpack_to_their_own():
    # a key's packed rows may come from several files (and, in principle, kinds): each
    # row's stream, file and kind are its own again, with its seq, times and graph
    mixed = [
        ("http://e/a", "one.trig", 7, "http://e/g7", 1, 2, "abstract", "\x1f".join([S1, P, V])),
        ("http://e/a", "two.trig", 1 << 33, "http://e/x", 3, 4, "dateTime", ""),
        ("http://e/a", "one.trig", 8, "http://e/g8", 5, 5, "abstract", "\x1f".join([S2, P, S1])),
    ]
    rows = unpack([pack(mixed)])[0]
    assert [r[:7] for r in rows] == [r[:7] for r in mixed]
    assert [str(r[7]) for r in rows] == [r[7] for r in mixed]
