"""The columnar reader's text kernels feeding the row engine: files of interval-stamped
(or point-stamped) elements must give exactly the row reader's elements, and a file or a
part of one out of shape must be read by the row reader, errors and all."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.engine.codec import Codec
from sepia.engine.columnar.frontend import (
    OutOfShape,
    column_chunks,
    element_chunks,
    stream_elements,
)
from sepia.io.errors import StreamError
from sepia.io.streams import read_stream

XSD = "http://www.w3.org/2001/XMLSchema#"
HEAD = f"@prefix prov: <http://www.w3.org/ns/prov#> .\n@prefix xsd: <{XSD}> .\n"
PLAIN = "<http://e/s> <http://e/p> <http://e/o> ."
NEW_YEAR = 1_767_225_600_000
"""2026-01-01T00:00:00Z in epoch milliseconds."""


def _stamp(second: int) -> str:
    return f'"2026-01-01T00:{second // 60:02d}:{second % 60:02d}.5Z"^^xsd:dateTime'


def _interval(n: int, start: int, end: int, content: str = PLAIN) -> str:
    graph = f"<http://e/g{n}>"
    return (f"{graph} prov:startedAtTime {_stamp(start)} .\n"
            f"{graph} prov:endedAtTime {_stamp(end)} .\n{graph} {{ {content} }}\n")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.trig"
    path.write_text(HEAD + text, encoding="utf-8")
    return path


def test_intervals_read_as_the_row_reader_reads_them(tmp_path: Path):
    """Intervals of different lengths, ends in order (starts not), terms of every kind the
    reader takes: the row reader's elements, start and end 00:00:01.5 = 1,500 ms etc."""
    contents = [
        PLAIN,
        '<http://e/s> <http://e/p> "01"^^<http://www.w3.org/2001/XMLSchema#integer> .',
        '<http://e/s> <http://e/p> "x"@EN-gb . <http://e/s> <http://e/q> "a b" .',
        '<HTTP://E/%7e> <http://e/p> <http://e/o%41> . <HTTP://E/%7e> <http://e/p> <http://e/o%41>',
    ]
    spans = [(1, 1), (0, 2), (2, 5), (5, 5)]
    path = _write(tmp_path, "".join(
        _interval(n, a, b, c) for n, ((a, b), c) in enumerate(zip(spans, contents, strict=True))
    ))
    got = list(stream_elements(path, "s"))
    assert got == list(read_stream(path, "s"))
    assert [(e.start - NEW_YEAR, e.end - NEW_YEAR) for e in got] == [
        (1500, 1500), (500, 2500), (2500, 5500), (5500, 5500)]
    assert [len(e.triples) for e in got] == [1, 1, 2, 2]  # a triple twice is kept twice
    assert sum(len(c) for c in element_chunks(path, "s")) == 4  # all read as columns


def test_points_read_as_the_row_reader_reads_them(tmp_path: Path):
    """The point form (one prov:generatedAtTime line) through the same path."""
    path = _write(tmp_path, "".join(
        f"<http://e/g{n}> prov:generatedAtTime {_stamp(n)} .\n<http://e/g{n}> {{ {PLAIN} }}\n"
        for n in range(3)
    ))
    assert [(e.start - NEW_YEAR, e.end - NEW_YEAR) for e in stream_elements(path, "s")] == [
        (500, 500), (1500, 1500), (2500, 2500)]
    assert list(stream_elements(path, "s")) == list(read_stream(path, "s"))


def test_the_columnar_core_still_leaves_intervals_to_the_row_reader(tmp_path: Path):
    """Batches of columns hold points only: an interval file is out of their shape."""
    path = _write(tmp_path, _interval(0, 1, 2))
    with pytest.raises(OutOfShape) as stopped:
        list(column_chunks(path, "s", Codec()))
    assert stopped.value.done == 0


ONE_ELEMENT = len(HEAD)
"""A block size that reads the prefix lines, then one element (three lines), at a time."""


@pytest.mark.parametrize(("odd", "columns"), [
    (_interval(3, 4, 3), 3),  # ends before it starts
    (_interval(3, 1, 1), 3),  # ends back in time: the row reader rejects it
    (_interval(3, 3, 4, "prov:s prov:p prov:o ."), 3),  # prefixed names in the graph
    (_interval(3, 3, 4, "<http://e/s> <http://e/p> \"\\u0041\" ."), 3),  # an escape
    (_interval(3, 3, 4).replace("<http://e/g3>", "<http://e/g\u00e9>"), 3),  # a non-ASCII name
    (_interval(3, 3, 4).replace("startedAtTime", "generatedAtTime", 1), 3),
    (_interval(3, 3, 4).replace("prov:endedAtTime", "prov:startedAtTime"), 3),
])
def test_a_part_out_of_shape_is_read_by_the_row_reader(tmp_path: Path, odd: str, columns: int):
    """Six elements read one a block, the fourth out of shape (or, once read, out of
    order): those before it come as columns, the rest from the row reader, which gives the
    same elements, or raises the same error at the same place."""
    text = "".join(_interval(n, n, n) for n in range(3)) + odd
    path = _write(tmp_path, text + "".join(_interval(n, n, n) for n in range(4, 6)))
    taken = []
    with pytest.raises(OutOfShape) as stopped:
        taken.extend(element_chunks(path, "s", block=ONE_ELEMENT))
    assert stopped.value.done == columns
    try:
        expected = list(read_stream(path, "s"))
    except StreamError as error:
        with pytest.raises(StreamError) as raised:
            list(stream_elements(path, "s"))
        assert str(raised.value) == str(error)
        return
    assert list(stream_elements(path, "s")) == expected


spans = st.lists(st.tuples(st.integers(0, 3), st.sampled_from([PLAIN, PLAIN + " " + PLAIN,
                                                                '<http://e/s> <http://e/p> "."'])),
                 min_size=1, max_size=12)


@settings(max_examples=40, deadline=None)
@given(spans, st.sampled_from([ONE_ELEMENT, 300, 1 << 22]))
def test_any_block_size_reads_the_row_readers_elements(tmp_path_factory, elements, block):
    """Elements whose ends step forward and whose intervals reach back 0-3 seconds, cut
    into blocks of ``block`` bytes (whole lines): the row reader's elements."""
    text = "".join(_interval(n, 3 + n - back, 3 + n, content)
                   for n, (back, content) in enumerate(elements))
    path = _write(tmp_path_factory.mktemp("intervals"), text)
    got = [e for chunk in element_chunks(path, "s", block=block) for e in chunk]
    assert got == list(read_stream(path, "s"))
