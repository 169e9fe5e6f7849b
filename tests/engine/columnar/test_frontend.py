"""The columnar reader's shortcut: terms encoded from their own text must get exactly the
text pyoxigraph's parse and store give them, and files it does not take must read as the
row reader reads them."""

from __future__ import annotations

import threading
from pathlib import Path

import polars as pl
import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.engine.codec import Codec
from sepia.engine.columnar import ColumnBatch
from sepia.engine.columnar.frontend import (
    OutOfShape,
    _canonical_texts,
    _read_numbers,
    column_chunks,
    named_chunks,
    read_columns,
    stream_columns,
)
from sepia.engine.columnar.groups import DECIMAL, INTEGER, _from_text
from sepia.io.streams import read_stream

XSD = "http://www.w3.org/2001/XMLSchema#"
_STORE = ox.Store()


def held(text: str) -> str | None:
    """The oracle: pyoxigraph's parse of the term, then the form its store binds a variable
    to (None: pyoxigraph refuses the term)."""
    try:
        (quad,) = ox.parse(f"<x:s> <x:p> {text} .", format=ox.RdfFormat.N_TRIPLES)
    except SyntaxError:
        return None
    term = quad.object
    if isinstance(term, ox.Literal):
        (row,) = _STORE.query("SELECT ?v WHERE {}", substitutions={ox.Variable("v"): term})
        term = row["v"]
    return str(term)


IRI_CHARS = "aZ09-._~!$&'()*+,;=:@/?#%[]4fG éx{}|^`\\<\" \t"
iris = st.builds(
    lambda scheme, slashes, rest: f"<{scheme}:{slashes}{rest}>",
    st.sampled_from(["http", "urn", "a+b.c-d", "9x", "", "h"]),
    st.sampled_from(["", "/", "//", "///"]),
    st.text(IRI_CHARS, max_size=24),
)
BODY_CHARS = "ab \"'\\\t\n\x7f\x01é€1.-"
bodies = st.text(BODY_CHARS, max_size=8).map(lambda body: f'"{body}"')
numbers = st.from_regex(r"[+-]?[0-9]{0,21}(\.[0-9]{0,21})?([eE][+-]?[0-9]{1,2})?", fullmatch=True)
literals = st.one_of(
    bodies,
    st.builds(lambda b, t: f"{b}@{t}", bodies,
              st.sampled_from(["en", "EN", "en-us", "en-US", "de-419", "x", "abcd", "en-"])),
    st.builds(lambda b, d: f"{b}^^<{XSD}{d}>", bodies,
              st.sampled_from(["string", "integer", "decimal", "boolean"])),
    st.builds(lambda n, d: f'"{n}"^^<{XSD}{d}>', numbers,
              st.sampled_from(["integer", "decimal", "double", "int"])),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(iris, literals), min_size=1, max_size=40))
def test_a_term_read_from_its_text_is_what_pyoxigraph_holds(terms):
    """Where the reader takes a term's canonical text from the text itself, pyoxigraph
    takes the term and holds it with that very text."""
    texts = _canonical_texts(pl.Series(terms, dtype=pl.String)).to_list()
    for term, text in zip(terms, texts, strict=True):
        if text is not None:
            assert held(term) == text, term


@pytest.mark.parametrize(("term", "fast"), [
    ("<http://example.org/a/b?c=d#e>", True),
    ("<urn:isbn:0451450523>", True),
    ("<http://[::1]/a>", False),  # an IP literal: left to pyoxigraph
    ("<http://example.org/%zz>", False),  # bad percent-encoding: pyoxigraph refuses it
    ("<http://a:b/c>", False),  # a port that is no number
    ("<http://example.org/é>", False),  # not ASCII: left to pyoxigraph
    ("<relative/path>", False),
    ('"a\tb"', False),  # N-Triples writes the tab escaped
    ('"x"@EN', False),
    ('"01"^^<http://www.w3.org/2001/XMLSchema#integer>', False),
    ('"-0"^^<http://www.w3.org/2001/XMLSchema#decimal>', False),
    ('"25.30"^^<http://www.w3.org/2001/XMLSchema#decimal>', True),
    ('"1.5"^^<http://www.w3.org/2001/XMLSchema#double>', False),
])
def test_what_the_shortcut_takes(term, fast):
    (text,) = _canonical_texts(pl.Series([term], dtype=pl.String)).to_list()
    assert (text is not None) is fast
    if fast:
        assert text == held(term)


canonical_numbers = st.builds(
    lambda n, d: f'"{n}"^^<{XSD}{d}>',
    st.one_of(st.integers(-(10**19), 10**19).map(str),
              st.decimals(allow_nan=False, allow_infinity=False, places=4).map(str),
              st.from_regex(r"-?(0|[1-9][0-9]{0,19})\.[0-9]{0,19}[1-9]", fullmatch=True)),
    st.sampled_from(["integer", "decimal"]),
)


def _numbers_read(terms: list[str]) -> dict[int, tuple[int, int, int]]:
    """The reader's numbers of ``terms``, by position."""
    at, kind, digits, mantissa = _read_numbers(_canonical_texts(pl.Series(terms,
                                                                          dtype=pl.String)))
    return {a: (k, d, m) for a, k, d, m in zip(at.tolist(), kind.tolist(), digits.tolist(),
                                                mantissa.tolist(), strict=True)}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(iris, literals, canonical_numbers), min_size=1, max_size=40))
def test_numbers_read_with_the_terms_are_those_filters_learn(terms):
    """Where the reader works out a term's number, it is what ``groups.NumericIds``
    learns from the term's canonical text (``_from_text``: kind, digits, mantissa); and
    it works out every integer and decimal whose digits are at most 18."""
    texts = _canonical_texts(pl.Series(terms, dtype=pl.String)).to_list()
    learnt = {n: _from_text(t) for n, t in enumerate(texts) if t is not None}
    numeric = {n: f for n, f in learnt.items()
               if f is not None and f[0] in (INTEGER, DECIMAL) and abs(f[2]) < 10**18}
    assert _numbers_read(terms) == numeric


@pytest.mark.parametrize(("term", "number"), [
    (f'"27.40"^^<{XSD}decimal>', (DECIMAL, 1, 274)),
    (f'"-0.5"^^<{XSD}decimal>', (DECIMAL, 1, -5)),
    (f'"-7"^^<{XSD}decimal>', (DECIMAL, 0, -7)),
    (f'"0"^^<{XSD}integer>', (INTEGER, 0, 0)),
    (f'"-0"^^<{XSD}integer>', None),  # not its canonical text: pyoxigraph encodes it
    (f'"123456789012345678"^^<{XSD}integer>', (INTEGER, 0, 123456789012345678)),
    (f'"-12345678901234567.8"^^<{XSD}decimal>', (DECIMAL, 1, -123456789012345678)),
    (f'"1234567890123456789"^^<{XSD}integer>', None),  # 19 digits: learnt by the engine
    (f'"0.00000000000000001"^^<{XSD}decimal>', (DECIMAL, 17, 1)),
    (f'"0.000000000000000001"^^<{XSD}decimal>', None),  # 19 digits written
    (f'"1.5"^^<{XSD}double>', None),
    ('"15"', None),
    ("<http://e/15>", None),
])
def test_numbers_read_by_hand(term, number):
    assert _numbers_read([term]) == ({} if number is None else {0: number})


def _texts(batch: ColumnBatch, codec: Codec) -> list[tuple]:
    spo = zip(batch.s.tolist(), batch.p.tolist(), batch.o.tolist(), strict=True)
    return [
        (e, *(codec.decode_text(i) for i in ids))
        for e, ids in zip(batch.element.tolist(), spo, strict=True)
    ]


HEAD = "@prefix prov: <http://www.w3.org/ns/prov#> .\n@prefix xsd: <{XSD}> .\n".replace(
    "{XSD}", XSD)


def _element(n: int, content: str) -> str:
    stamp = f'"2026-01-01T00:00:{n:02d}Z"^^xsd:dateTime'
    return f"<http://e/g{n}> prov:generatedAtTime {stamp} .\n<http://e/g{n}> {{ {content} }}\n"


@pytest.mark.parametrize(("content", "columns"), [
    ('<http://e/s> <http://e/p> "01"^^<http://www.w3.org/2001/XMLSchema#integer> .', True),
    ('<http://e/s> <http://e/p> "1.50"^^<http://www.w3.org/2001/XMLSchema#decimal> .', True),
    ('<http://e/s> <http://e/p> "-0.0"^^<http://www.w3.org/2001/XMLSchema#decimal> .', True),
    ('<http://e/s> <http://e/p> "1e0"^^<http://www.w3.org/2001/XMLSchema#double> .', True),
    ('<http://e/s> <http://e/p> "x"@EN-gb . <http://e/s> <http://e/p> "x"@en-gb .', True),
    ('<http://e/s> <http://e/p> "x"^^<http://www.w3.org/2001/XMLSchema#string> .', True),
    ('<HTTP://E/%7e> <http://e/p> <http://e/o%41> .', True),
    ('<http://e/s> <http://e/p> "y"^^xsd:string .', False),
    ('<http://e/\\u0041> <http://e/p> <http://e/o> .', False),
    ('<http://e/s> <http://e/p> "\\u0041\\t" .', False),
    ('<rel> <http://e/p> <http://e/o> .', False),
    ('prov:s prov:p prov:o .', False),
])
def test_files_read_as_the_row_reader_reads_them(tmp_path: Path, content: str, columns: bool):
    """Each line's terms, in one element among plain ones (after an @base for the
    relative IRI): the reader's ids decode to the row reader's terms, read as columns
    (``columns``) or handed to the row reader."""
    plain = '<http://e/s> <http://e/p> "25.30"^^<http://www.w3.org/2001/XMLSchema#decimal> .'
    text = ("@base <http://base.org/x/> .\n" if "<rel>" in content else "") + HEAD
    text += "".join(_element(n, content if n == 1 else plain) for n in range(3))
    path = tmp_path / "s.trig"
    path.write_text(text, encoding="utf-8")
    assert (read_columns(path, "s", Codec()) is not None) is columns
    mine, theirs = Codec(), Codec()
    got = ColumnBatch.merged(list(stream_columns(path, "s", mine)))
    expected = ColumnBatch.from_elements(list(read_stream(path, "s")), theirs)
    assert got.times.tolist() == expected.times.tolist()
    assert _texts(got, mine) == _texts(expected, theirs)


objects = st.sampled_from([
    "<http://e/o>", '"a b"', '"a . b"', '"x"@en', '"x y"@en-gb', '"1.50"^^<{XSD}decimal>',
    '" "', '""', '"."^^<{XSD}string>',
]).map(lambda o: o.replace("{XSD}", XSD))
triples_text = st.builds(
    lambda o, gaps, dot: f"<http://e/s>{gaps[0]}<http://e/p>{gaps[1]}{o}{dot}",
    objects, st.tuples(*[st.sampled_from([" ", " ", "  ", "\t"])] * 2),
    st.sampled_from([" .", " .", "\t.", ""]),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(triples_text, min_size=1, max_size=3), min_size=1, max_size=12),
       st.sampled_from([1, 200, 1 << 22]))
def test_blanks_and_spaces_in_literals_read_as_the_row_reader_reads_them(tmp_path_factory,
                                                                          elements, block):
    """Elements whose triples are cut by single spaces (split at the spaces) or by other
    blanks, or hold literals with spaces or dots (cut by the terms' regular expression),
    in blocks of ``block`` bytes (whole lines) that mix both: the same terms as the row reader's."""
    path = tmp_path_factory.mktemp("blanks") / "s.trig"
    text = HEAD + "".join(
        _element(n, " . ".join(t.removesuffix(" .").removesuffix("\t.") for t in triples[:-1])
                 + (" . " if len(triples) > 1 else "") + triples[-1])
        for n, triples in enumerate(elements)
    )
    path.write_text(text, encoding="utf-8")
    assert read_columns(path, "s", Codec()) is not None
    mine, theirs = Codec(), Codec()
    got = ColumnBatch.merged(list(stream_columns(path, "s", mine, block=block)))
    expected = ColumnBatch.from_elements(list(read_stream(path, "s")), theirs)
    assert got.element.tolist() == expected.element.tolist()
    assert _texts(got, mine) == _texts(expected, theirs)


ONE_ELEMENT = len(HEAD)
"""A block size that reads the prefix lines, then one element, at a time."""


def _six_elements(tmp_path: Path, odd: int | None) -> Path:
    """Six elements, element ``odd`` (if any) out of the columnar reader's shape."""
    plain = "<http://e/s> <http://e/p> <http://e/o> ."
    path = tmp_path / "s.trig"
    path.write_text(HEAD + "".join(
        _element(n, "prov:s prov:p prov:o ." if n == odd else plain) for n in range(6)
    ), encoding="utf-8")
    return path


def test_a_block_out_of_shape_stops_the_columns_where_it_starts(tmp_path: Path):
    """Blocks of one element each, read ahead on the reader's thread: the four before the
    odd one come as columns, then ``OutOfShape`` says four were taken, and
    ``stream_columns`` reads the rest as the row reader does."""
    path = _six_elements(tmp_path, odd=4)
    taken = []
    with pytest.raises(OutOfShape) as stopped:
        taken.extend(column_chunks(path, "s", Codec(), block=ONE_ELEMENT))
    assert (stopped.value.done, sum(len(b) for b in taken)) == (4, 4)
    mine, theirs = Codec(), Codec()
    got = ColumnBatch.merged(list(stream_columns(path, "s", mine, block=ONE_ELEMENT)))
    expected = ColumnBatch.from_elements(list(read_stream(path, "s")), theirs)
    assert got.times.tolist() == expected.times.tolist()
    assert _texts(got, mine) == _texts(expected, theirs)


def test_the_reading_thread_raises_in_the_callers_place_and_stops_when_closed(tmp_path: Path):
    """A missing file's error reaches the caller; a reader closed after its first batch
    leaves no reading thread behind."""
    with pytest.raises(FileNotFoundError):
        next(column_chunks(tmp_path / "missing.trig", "s", Codec()))
    batches = column_chunks(_six_elements(tmp_path, odd=None), "s", Codec(), block=ONE_ELEMENT)
    assert len(next(batches)) == 1
    batches.close()
    for thread in threading.enumerate():
        if thread.name == "sepia-columnar-reader":
            thread.join(timeout=5)
            assert not thread.is_alive()


@pytest.mark.parametrize("ahead", [True, False])
def test_named_chunks_read_ahead_on_a_thread_only_when_asked(tmp_path: Path, ahead: bool):
    """Without ``ahead`` (a Spark task granted one core) the blocks are cut on the
    caller's thread, and they are the same blocks, names and terms."""
    path = _six_elements(tmp_path, odd=None)
    seen: list[bool] = []

    def opened():
        seen.append(threading.current_thread().name == "sepia-columnar-reader")
        return path.open(encoding="utf-8")

    codec = Codec()
    read = list(named_chunks(opened, "s", codec, block=ONE_ELEMENT, ahead=ahead))
    assert seen == [ahead]
    expected = Codec()
    batches = list(column_chunks(path, "s", expected, block=ONE_ELEMENT))
    assert [len(b) for b, _ in read] == [len(b) for b in batches] == [1] * 6
    assert [_texts(b, codec) for b, _ in read] == [_texts(b, expected) for b in batches]
    assert [names.to_list() for _, names in read] == [[f"<http://e/g{n}>"] for n in range(6)]
