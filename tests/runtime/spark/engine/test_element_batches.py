"""A key's rows of a batch held as columns (`element_batches.ElementBatch`): whatever
mix of packed rows, stand-ins and loose rows a key is handed, the batch is the element
rows they stand for, in the order they came; ordered, it is the local runtime's merge
order (time, the stream's place in the unit, file, position), as a sort of the rows by
that key gives; cut and joined, it keeps each row; and its columns hold each element's
own triples."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sepia.engine.codec import Codec
from sepia.runtime.spark.columns import element_columns
from sepia.runtime.spark.element_batches import ElementBatch, unpack
from sepia.runtime.spark.elements import PACKED, is_term_text, ntriples, pack, pack_stand_ins

STREAMS = ["http://e/s1", "http://e/s2", "http://e/s3"]
IRIS = ["<http://e/a>", "<http://e/p>", "<http://e/b>"]
TERMS = [*IRIS, '"5"^^<http://www.w3.org/2001/XMLSchema#integer>', '"x"@en']


@st.composite
def element_rows(draw: st.DrawFn, stream: str) -> list[tuple]:
    """A few element rows of one stream, their triples as term text (some with none)."""
    count = draw(st.integers(1, 5))
    rows = []
    for _ in range(count):
        triple = st.tuples(st.sampled_from(IRIS), st.sampled_from(IRIS), st.sampled_from(TERMS))
        triples = draw(st.lists(triple, max_size=3))
        end = draw(st.integers(0, 6))
        rows.append((stream, draw(st.sampled_from(["b.trig", "a.trig"])), draw(st.integers(0, 9)),
                     f"http://e/g{draw(st.integers(0, 99))}", end, end, "abstract",
                     "\x1f".join(term for triple in triples for term in triple)))  # fmt: skip
    return rows


@st.composite
def handed(draw: st.DrawFn) -> tuple[list[tuple], list[tuple]]:
    """(rows a key is handed, the element rows they stand for, in that order): groups of
    rows packed as term text, as JSON (`PACKED`), as stand-ins, or loose, some loose
    ones as N-Triples (the row reader's)."""
    sent, meant = [], []
    for _ in range(draw(st.integers(0, 5))):
        rows = draw(element_rows(draw(st.sampled_from(STREAMS))))
        how = draw(st.sampled_from(["terms", "json", "stand-ins", "loose", "n-triples"]))
        if how == "n-triples":
            rows = [(*row[:7], ntriples(row[7])) for row in rows]
            sent += rows
        elif how == "terms":
            sent.append(pack(rows))
        elif how == "json":
            sent.append((*pack(rows)[:3], PACKED, 0, 0, "abstract", json.dumps(rows)))
        elif how == "stand-ins":
            rows = [(*row[:7], "") for row in rows]
            sent.append(pack_stand_ins(rows))
        else:
            sent += rows
        meant += rows
    return sent, meant


def terms(text: str) -> list[str]:
    """The terms of a row's triples, s p o of each in turn, from term text or N-Triples."""
    if not text or is_term_text(text):
        return text.split("\x1f") if text else []
    return [term for line in text.splitlines() for term in line.removesuffix(" .").split(" ")]


def as_text(rows: list) -> list[tuple]:
    return [(*row[:7], str(row[7])) for row in rows]


@settings(max_examples=150, deadline=None)
@given(handed())
def test_a_batch_is_the_rows_it_was_handed_in_order(case: tuple[list, list]) -> None:
    sent, meant = case
    batch = unpack(sent)[0]
    assert as_text(list(batch)) == meant
    assert len(batch) == len(meant)
    if meant:
        assert as_text([batch[-1]]) == meant[-1:]
        assert as_text(batch[1:3]) == meant[1:3]


@settings(max_examples=150, deadline=None)
@given(handed(), handed(), st.permutations(STREAMS[:2]))
def test_ordered_batches_follow_the_merge_order_and_keep_every_row(
    first: tuple[list, list], second: tuple[list, list], unit_streams: list[str]
) -> None:
    rank = {stream: n for n, stream in enumerate(unit_streams)}

    def merge_order(row: tuple) -> tuple:
        return (row[5], rank.get(row[0], len(rank)), row[1], row[2])

    held, batch = first[1], unpack(second[0])[0]
    joined = ElementBatch.of(held, batch)
    ordered = joined.in_arrival_order(unit_streams)
    assert as_text(list(ordered)) == sorted([*held, *second[1]], key=merge_order)
    assert ordered.in_arrival_order(unit_streams) is ordered  # in order: not gathered again
    cut = len(ordered) // 2
    assert as_text(ordered.rows(np.arange(cut, len(ordered)))) == as_text(list(ordered))[cut:]
    assert as_text(list(ordered.between(1, cut))) == as_text(list(ordered))[1:cut]
    assert ordered.between(0, len(ordered)) is ordered
    latest: dict[str, int] = {}
    for row in [*held, *second[1]]:
        latest[row[0]] = max(latest.get(row[0], row[5]), row[5])
    assert joined.latest() == latest


@settings(max_examples=100, deadline=None)
@given(handed())
def test_a_batch_s_columns_hold_each_element_s_own_triples(case: tuple[list, list]) -> None:
    sent, meant = case
    codec = Codec()
    columns = element_columns(unpack(sent)[0], codec)
    decoded: list[list[str]] = [[] for _ in meant]
    for s, p, o, e in zip(columns.s.tolist(), columns.p.tolist(), columns.o.tolist(),
                          columns.element.tolist(), strict=True):  # fmt: skip
        decoded[e] += [codec.decode_text(i) for i in (s, p, o)]
    assert decoded == [terms(row[7]) for row in meant]
    assert columns.times.tolist() == [row[5] for row in meant]
    assert [columns.streams[n] for n in columns.stream.tolist()] == [row[0] for row in meant]


@settings(max_examples=150, deadline=None)
@given(handed(), st.data())
def test_a_batch_packed_from_its_columns_unpacks_to_its_rows(
    case: tuple[list, list], data: st.DataObject
) -> None:
    """Any part of a batch (a key's held elements are parts of its batches) packs into one
    row that reads back as that part's rows, in order (a block is never empty)."""
    sent, meant = case
    assume(meant)
    batch = unpack(sent)[0]
    at = np.array(data.draw(st.lists(st.integers(0, len(meant) - 1), min_size=1, max_size=8)))
    part = batch.take(at)
    assert as_text(list(unpack([part.packed()])[0])) == [meant[i] for i in at.tolist()]
