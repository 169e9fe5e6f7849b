"""Stream files in (io.md "Stream data"): formats, time, order, and every error case."""

from __future__ import annotations

import gzip
import io
import re
import zlib
from pathlib import Path

import pyoxigraph as ox
import pytest

from sepia.io import chunks, trig_split
from sepia.io.streams import StreamError, StreamReader, read_stream, read_stream_rows
from sepia.rdf.time import TimeKind

S = "http://example.org/stream"
E = "http://example.org/"
PREFIXES = "@prefix : <http://example.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"

# the example of io.md, and the same data as N-Quads
IO_MD_TRIG = PREFIXES + (
    ":e1 { :diana :isNearby :a . }   :e1 prov:generatedAtTime 2 .\n"
    ":e2 { :eve :isNearby :b . }     :e2 prov:generatedAtTime 2 .\n"
)
GEN = "<http://www.w3.org/ns/prov#generatedAtTime>"
INT = "<http://www.w3.org/2001/XMLSchema#integer>"
IO_MD_NQUADS = (
    f"<{E}diana> <{E}isNearby> <{E}a> <{E}e1> .\n"
    f'<{E}e1> {GEN} "2"^^{INT} .\n'
    f"<{E}eve> <{E}isNearby> <{E}b> <{E}e2> .\n"
    f'<{E}e2> {GEN} "2"^^{INT} .\n'
)
EXPECTED_IO_MD = [
    (f"{E}e1", 2, 2, [(f"{E}diana", f"{E}isNearby", f"{E}a")]),
    (f"{E}e2", 2, 2, [(f"{E}eve", f"{E}isNearby", f"{E}b")]),
]


def summary(elements) -> list[tuple[str, int, int, list[tuple[str, str, str]]]]:
    return [
        (e.graph, e.start, e.end, [(t.subject.value, t.predicate.value, t.object.value)
                                   for t in e.triples])
        for e in elements
    ]


def read_text(text: str, name: str = "s.trig", **options) -> list:
    return list(read_stream(io.BytesIO(text.encode()), S, name=name, **options))


def first_error(text: str, name: str = "s.trig", **options) -> StreamError:
    with pytest.raises(StreamError) as caught:
        read_text(text, name, **options)
    return caught.value


def skip(text: str, name: str = "s.trig", **options) -> tuple[list, list[StreamError]]:
    errors: list[StreamError] = []
    elements = read_text(text, name, on_error="skip", errors=errors.append, **options)
    return elements, errors


# --- formats ---------------------------------------------------------------------------

def test_trig_example_of_io_md() -> None:
    elements = read_text(IO_MD_TRIG)
    assert summary(elements) == EXPECTED_IO_MD
    assert all(e.stream == S for e in elements)


def test_nquads_gives_the_same_elements(tmp_path: Path) -> None:
    for suffix in ("nq", "nquads"):
        path = tmp_path / f"s.{suffix}"
        path.write_text(IO_MD_NQUADS)
        assert summary(read_stream(path, S)) == EXPECTED_IO_MD


def test_gzip_by_suffix_and_by_magic_bytes(tmp_path: Path) -> None:
    path = tmp_path / "s.trig.gz"
    path.write_bytes(gzip.compress(IO_MD_TRIG.encode()))
    assert summary(read_stream(path, S)) == EXPECTED_IO_MD
    packed = io.BytesIO(gzip.compress(IO_MD_NQUADS.encode()))
    assert summary(read_stream(packed, S, name="part-0", fmt="nquads")) == EXPECTED_IO_MD
    assert not packed.closed  # the caller's file object is the caller's to close


def test_byte_order_mark_empty_files_and_crlf() -> None:
    bom = "\ufeff" + IO_MD_TRIG.replace("\n", "\r\n")
    assert summary(read_text(bom)) == EXPECTED_IO_MD
    assert read_text("") == read_text("", name="s.nq") == read_text(PREFIXES + "# end") == []


def test_format_override_and_unknown_format() -> None:
    assert summary(read_text(IO_MD_NQUADS, name="data.txt", fmt="nq")) == EXPECTED_IO_MD
    with pytest.raises(ValueError, match="not a stream format"):
        read_text(IO_MD_TRIG, name="data.ttl")


def test_rows_carry_n_triples_text() -> None:
    rows = list(read_stream_rows(io.BytesIO(IO_MD_TRIG.encode()), S, name="s.trig"))
    assert rows == [
        (f"{E}e1", 2, 2, f"<{E}diana>", f"<{E}isNearby>", f"<{E}a>"),
        (f"{E}e2", 2, 2, f"<{E}eve>", f"<{E}isNearby>", f"<{E}b>"),
    ]


def test_multi_triple_graphs_and_tricky_tokens() -> None:
    """Braces and dots inside strings, IRIs, comments, names and numbers do not cut."""
    text = PREFIXES + (
        "# a comment with { braces } and a dot .\n"
        ':e1 { :a.b :p """long { } . "string"\nover lines""" ; :q 1.5, .5, 1.e3 .\n'
        "  <http://example.org/x#y> :p 'it\\'s . }' . }\n"
        ":e1 prov:generatedAtTime 1 .\n"
        "GRAPH :e2 { :c :p :d } :e2 prov:generatedAtTime 3 .\n"
    )
    elements = read_text(text)
    assert [(e.graph, e.start, len(e.triples)) for e in elements] == [
        (f"{E}e1", 1, 5), (f"{E}e2", 3, 1)
    ]
    objects = {t.object for t in elements[0].triples}
    assert ox.Literal('long { } . "string"\nover lines') in objects
    assert ox.Literal("it's . }") in objects
    assert elements[0].triples[0].subject == ox.NamedNode(f"{E}a.b")


# --- time ------------------------------------------------------------------------------

def test_integer_and_datetime_time() -> None:
    text = PREFIXES + (
        ':e1 { :a :p :b . } :e1 prov:generatedAtTime "2024-01-01T00:00:00Z"^^'
        "<http://www.w3.org/2001/XMLSchema#dateTime> .\n"
    )
    reader = StreamReader(io.BytesIO(text.encode()), S, name="s.trig")
    assert [(e.start, e.end, e.kind) for e in reader.elements()] == [
        (1704067200000, 1704067200000, TimeKind.DATETIME)
    ]
    assert reader.time_kind is TimeKind.DATETIME
    reader = StreamReader(io.BytesIO(IO_MD_TRIG.encode()), S, name="s.trig")
    assert {e.kind for e in reader.elements()} == {TimeKind.ABSTRACT}
    assert reader.time_kind is TimeKind.ABSTRACT


def test_interval_time() -> None:
    text = PREFIXES + (
        ":e1 { :a :p :b . } :e1 prov:startedAtTime 3 ; prov:endedAtTime 7 .\n"
        ":e2 prov:endedAtTime 9 . :e2 prov:startedAtTime 9 . :e2 { :a :p :c . }\n"
    )
    assert [(e.graph, e.start, e.end, e.is_point) for e in read_text(text)] == [
        (f"{E}e1", 3, 7, False), (f"{E}e2", 9, 9, True)
    ]


def test_time_statement_before_or_after_the_graph_and_blank_graphs() -> None:
    text = PREFIXES + (
        ":e1 prov:generatedAtTime 1 .\n"
        ":e2 prov:generatedAtTime 2 .\n"
        ":e1 { :a :p :b . }\n"
        ":e2 { :a :p :c . }\n"
        "_:g { :a :p :d . } _:g prov:generatedAtTime 3 .\n"
    )
    assert [(e.graph, e.end) for e in read_text(text)] == [
        (f"{E}e1", 1), (f"{E}e2", 2), ("_:g", 3)
    ]


def test_late_element_within_lateness_is_put_back_in_order() -> None:
    text = PREFIXES + "".join(
        f":e{n} {{ :a :p :b . }} :e{n} prov:generatedAtTime {t} .\n"
        for n, t in enumerate([1, 5, 3, 4, 9, 6], start=1)
    )
    # watermark = latest - 2: 3 and 4 arrive after 5 (within 2), 6 after 9 is too late
    elements, errors = skip(text, allowed_lateness=2)
    assert [e.end for e in elements] == [1, 3, 4, 5, 9]
    assert [str(error) for error in errors] == [
        f"s.trig:8: element <{E}e6>: too late: time 6 is more than the allowed lateness (2) "
        "before time 9"
    ]


def test_late_beyond_lateness_stops_by_default() -> None:
    text = PREFIXES + (
        ":e1 { :a :p :b . } :e1 prov:generatedAtTime 10 .\n"
        ":e2 { :a :p :b . } :e2 prov:generatedAtTime 6 .\n"
    )
    error = first_error(text, allowed_lateness=3)
    assert (error.file, error.line, error.element) == ("s.trig", 4, f"{E}e2")
    assert "too late: time 6" in error.reason


# --- errors ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("body", "line", "element", "reason"),
    [
        (":e1 { :a :p :b . }\n:e2 { :a :p :c . } :e2 prov:generatedAtTime 1 .\n",
         3, "e1", "no time: no prov:generatedAtTime"),
        (':e1 { :a :p :b . } :e1 prov:generatedAtTime "soon" .\n',
         3, "e1", 'time "soon" must be an xsd:integer or an xsd:dateTime'),
        (":e1 { :a :p :b . } :e1 prov:generatedAtTime :now .\n",
         3, "e1", "time must be a literal"),
        (":e1 { :a :p :b . } :e1 prov:generatedAtTime 1 .\n"
         ":e2 { :a :p :b . } :e2 prov:generatedAtTime 5 .\n"
         ":e3 { :a :p :b . } :e3 prov:generatedAtTime 4 .\n",
         5, "e3", "out of order: time 4 comes after time 5"),
        (":e1 { :a :p :b . }\n:e1 prov:generatedAtTime 1 .\n:e1 prov:generatedAtTime 2 .\n",
         3, "e1", "two different times for one graph"),
        (":e1 { :a :p :b . } :e1 prov:startedAtTime 4 .\n",
         3, "e1", "interval time without prov:endedAtTime"),
        (":e1 { :a :p :b . } :e1 prov:startedAtTime 4 ; prov:endedAtTime 2 .\n",
         3, "e1", "interval starts after it ends"),
        (":e1 { :a :p :b . } :e1 prov:generatedAtTime 1 .\n"
         ':e2 { :a :p :b . } :e2 prov:generatedAtTime "2024-01-01T00:00:00Z"^^'
         "<http://www.w3.org/2001/XMLSchema#dateTime> .\n",
         4, "e2", "time is an xsd:dateTime but earlier elements of this stream have integer"),
        ("\n\n:e1 { :a :p :b . } :e1 prov:generatedAtTime 1 .\n:e2 { :a :p <no scheme> . }\n",
         6, "e2", "syntax error:"),
        (":e1 prov:generatedAtTime 1 .\n",
         3, "e1", "time statement for a graph that has no triples after it"),
    ],
)
def test_each_error_names_file_line_element_and_reason(
    body: str, line: int, element: str, reason: str
) -> None:
    error = first_error(PREFIXES + body)
    assert (error.file, error.line, error.element) == ("s.trig", line, E + element)
    assert error.reason.startswith(reason), error.reason
    assert str(error) == f"s.trig:{line}: element <{E}{element}>: {error.reason}"


def test_default_graph_triple_that_is_not_time_is_an_error() -> None:
    error = first_error(PREFIXES + ":a :p :b .\n")
    assert (error.line, error.element) == (3, None)
    assert str(error).startswith("s.trig:3: default-graph triple that is not a time statement")


def test_syntax_error_line_in_nquads() -> None:
    text = IO_MD_NQUADS + f"<{E}x> <{E}p> <oops> <{E}e3> .\n"
    error = first_error(text, name="s.nq")
    assert (error.file, error.line, error.element) == ("s.nq", 5, f"{E}e3")
    assert error.reason.startswith("syntax error:")


# --- skip mode keeps every good element ------------------------------------------------

BAD_TRIG = PREFIXES + (
    ":g1 { :a :p :b . } :g1 prov:generatedAtTime 1 .\n"                  # 3 good
    ':b1 { :a :p "unterminated . } :b1 prov:generatedAtTime 2 .\n'       # 4 syntax
    ":g2 { :a :p :c . :a :p :d . } :g2 prov:generatedAtTime 2 .\n"       # 5 good
    ":b2 { :a :p :c  :x :y . } :b2 prov:generatedAtTime 3 .\n"           # 6 syntax
    ":b3 { :a :p :c .\n"                                                 # 7 missing }
    ":g3 { :a :p :c . }\n"                                               # 8 good
    ":g3 prov:generatedAtTime 4 .\n"                                     # 9
    ":b4 { :a :p :c . }\n"                                               # 10 no time
    ":g4 prov:generatedAtTime 5 .\n"                                     # 11
    ":g4 { :a :p :c . }\n"                                               # 12 good
    ":b5 { :a :p :c . } :b5 prov:generatedAtTime 1 .\n"                  # 13 out of order
    ':b6 { :a :p :c . } :b6 prov:generatedAtTime "x" .\n'                # 14 bad time
    ":b7 { :a :p <bad iri> . } :b7 prov:generatedAtTime 6 .\n"           # 15 syntax
    ":g5 { :a :p :c . } :g5 prov:generatedAtTime 6 .\n"                  # 16 good
    "} junk\n"                                                           # 17 syntax
    ":g6 { :a :p :c . } :g6 prov:generatedAtTime 7 .\n"                  # 18 good
)
BAD_TRIG_ERRORS = {
    (4, "b1"), (6, "b2"), (7, "b3"), (10, "b4"), (13, "b5"), (14, "b6"), (15, "b7"), (17, None)
}


def test_skip_mode_keeps_every_good_trig_element(tmp_path: Path) -> None:
    dead = tmp_path / "dead.txt"
    elements, errors = skip(BAD_TRIG, dead_letter=dead)
    assert [(e.graph, e.end) for e in elements] == [
        (E + "g1", 1), (E + "g2", 2), (E + "g3", 4), (E + "g4", 5), (E + "g5", 6), (E + "g6", 7)
    ]
    assert {(e.line, e.element and e.element.removeprefix(E)) for e in errors} == BAD_TRIG_ERRORS
    letters = dead.read_text()
    assert ':b1 { :a :p "unterminated . } :b1 prov:generatedAtTime 2 .' in letters
    assert ":b7 { :a :p <bad iri> . }" in letters
    assert f"# s.trig:13: element <{E}b5>: out of order: time 1 comes after time 5" in letters
    assert f'<{E}b6> <http://www.w3.org/ns/prov#generatedAtTime> "x" .' in letters
    for line, _ in BAD_TRIG_ERRORS:
        assert f"# s.trig:{line}: " in letters


def test_skip_mode_keeps_every_good_nquads_element(tmp_path: Path) -> None:
    def element(name: str, time: str) -> str:
        return f"<{E}s> <{E}p> <{E}o> <{E}{name}> .\n<{E}{name}> {GEN} {time} .\n"

    text = (
        element("g1", f'"1"^^{INT}')
        + f"<{E}s> <{E}p> <{E}o> <{E}b1> .\n<{E}s> <{E}p> <broken> <{E}b1> .\n"  # 3-4
        + f'<{E}b1> {GEN} "2"^^{INT} .\n'
        + element("g2", f'"2"^^{INT}')
        + "this is not a quad\n"                                                 # 8
        + element("b2", '"late"')                                                # 9-10
        + element("g3", f'"3"^^{INT}')
    )
    dead = tmp_path / "dead.nq"
    errors: list[StreamError] = []
    elements = list(read_stream(io.BytesIO(text.encode()), S, name="s.nq", on_error="skip",
                                errors=errors.append, dead_letter=dead))
    assert [(e.graph, e.end) for e in elements] == [(E + "g1", 1), (E + "g2", 2), (E + "g3", 3)]
    assert [(e.line, e.element) for e in errors] == [(4, E + "b1"), (8, None), (9, E + "b2")]
    letters = dead.read_text()
    assert f"<{E}s> <{E}p> <broken> <{E}b1> ." in letters
    assert f"<{E}s> <{E}p> <{E}o> <{E}b1> ." in letters  # the rest of b1 goes with it
    assert "this is not a quad" in letters


def test_skip_mode_needs_somewhere_to_put_errors() -> None:
    with pytest.raises(ValueError, match="skip"):
        read_text(IO_MD_TRIG, on_error="skip")


# --- chunking: small blocks give the same answers ---------------------------------------

def generated(count: int, syntax: str) -> str:
    """`count` elements of 1-3 triples with awkward literals, then one out-of-order element.

    "trig-lines" writes each graph over several lines, with a long string whose lines end
    in `.` and `}` (where a cut would look like a statement boundary but is not).
    """
    lines = [] if syntax == "nq" else [PREFIXES]
    times = [(f"e{n}", n // 2, n % 3 + 1) for n in range(count)] + [("late", 0, 1)]
    for name, time, size in times:
        if syntax == "trig":
            triples = " ".join(f':s :p{k} "v {{{k}}} .\\n" .' for k in range(size))
            lines.append(f":{name} {{ {triples} }}\n:{name} prov:generatedAtTime {time} .\n")
        elif syntax == "trig-lines":
            rest = "".join(f'  :s :p{k} "v {{{k}}} .\\n" .\n' for k in range(1, size))
            lines.append(f':{name} {{\n  :s :p0 """a .\n}} .\n""" .\n{rest}}}\n'
                         f":{name} prov:generatedAtTime {time} .\n")
        else:
            lines += [f'<{E}s> <{E}p{k}> "v {{{k}}} .\\n" <{E}{name}> .\n' for k in range(size)]
            lines.append(f'<{E}{name}> {GEN} "{time}"^^{INT} .\n')
    return "".join(lines)


@pytest.mark.parametrize(
    ("syntax", "late_line", "first"),
    [
        ("trig", 3 + 2 * 300, "v {0} .\n"),
        ("trig-lines", 3 + 300 * 5 + 600, "a .\n} .\n"),  # 5 lines + 1 per triple
        ("nq", 901, "v {0} .\n"),
    ],
)
def test_tiny_blocks_read_the_same_as_large_ones(
    syntax: str, late_line: int, first: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = generated(300, syntax)
    name = "s.nq" if syntax == "nq" else "s.trig"
    expected, expected_errors = skip(text, name)
    assert len(expected) == 300
    assert expected[0].triples[0].object == ox.Literal(first)
    assert [(e.line, e.element, e.reason[:12]) for e in expected_errors] == [
        (late_line, E + "late", "out of order")
    ]
    for size in (7, 64, 1000):
        monkeypatch.setattr(chunks, "BLOCK_SIZE", size)
        monkeypatch.setattr(trig_split, "BLOCK_SIZE", size)
        elements, errors = skip(text, name)
        assert summary(elements) == summary(expected)
        assert [str(e) for e in errors] == [str(e) for e in expected_errors]


# --- bounded memory, and errors that cross process boundaries ----------------------------

class _Generated(io.RawIOBase):
    """A stream file made on the fly, so the test holds no copy of it either."""

    def __init__(self, count: int, syntax: str) -> None:
        self._lines = iter(generated(count, syntax).splitlines(keepends=True))
        self._rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        while len(self._rest) < len(buffer):
            line = next(self._lines, None)
            if line is None:
                break
            self._rest += line.encode()
        size = min(len(buffer), len(self._rest))
        buffer[:size], self._rest = self._rest[:size], self._rest[size:]
        return size


@pytest.mark.parametrize("syntax", ["trig", "nq"])
def test_memory_stays_bounded_as_the_file_grows(
    syntax: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tracemalloc

    monkeypatch.setattr(chunks, "BLOCK_SIZE", 1 << 16)
    monkeypatch.setattr(trig_split, "BLOCK_SIZE", 1 << 16)

    def peak(count: int) -> int:
        source = _Generated(count, syntax)  # made before measuring
        tracemalloc.start()
        errors: list[StreamError] = []
        seen = sum(1 for _ in read_stream(source, S, name=f"big.{syntax}", on_error="skip",
                                          errors=errors.append))
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert (seen, len(errors)) == (count, 1)
        return top

    small, large = peak(2000), peak(8000)
    assert large < 1.5 * small, (small, large)


def test_stream_errors_pickle_with_their_fields() -> None:
    import pickle

    error = StreamError("f.trig", 7, E + "e1", "no time")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.file, copy.line, copy.element, copy.reason) == ("f.trig", 7, E + "e1", "no time")
    assert str(copy) == str(error) == f"f.trig:7: element <{E}e1>: no time"


# --- corruption anywhere: every untouched element survives -------------------------------

CORRUPTIONS = [
    lambda text: text.replace("}", "", 1),                      # a graph block left open
    lambda text: text.replace("{", "", 1),                      # no block at all
    lambda text: text.replace(":s ", ":s^ ", 1),                # an illegal character
    lambda text: text.replace(":s ", "<no scheme> ", 1),        # a bad IRI
    lambda text: text.replace(" .\n", ' "oops .\n', 1),         # a string left open
    lambda text: text.replace("prov:generatedAtTime", "prov:generatedAt", 1),  # no time
]
STRAY = "} junk .\n"  # garbage between two elements: it hurts neither


@pytest.mark.parametrize("seed", range(6))
def test_skip_mode_keeps_every_untouched_element_whatever_breaks(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import random

    chooser = random.Random(seed)
    multiline = seed % 2 == 1
    segments = []
    for n in range(120):
        if multiline:
            body = "".join(f'  :s :p{k} "v{k}" .\n' for k in range(n % 3 + 1))
            segments.append(f":e{n} {{\n{body}}}\n:e{n} prov:generatedAtTime {n} .\n")
        else:
            segments.append(f':e{n} {{ :s :p "v" . }} :e{n} prov:generatedAtTime {n} .\n')
    broken = set(chooser.sample(range(120), 25))
    for n in broken:
        segments[n] = chooser.choice(CORRUPTIONS)(segments[n])
    for n in chooser.sample(range(120), 5):
        segments[n] = STRAY + segments[n]
    text = PREFIXES + "".join(segments)
    if seed >= 4:
        monkeypatch.setattr(chunks, "BLOCK_SIZE", 64)
        monkeypatch.setattr(trig_split, "BLOCK_SIZE", 64)
    elements, errors = skip(text)
    names = [e.graph.removeprefix(E) for e in elements]
    assert set(names) >= {f"e{n}" for n in range(120) if n not in broken}
    assert not set(names) & {f"e{n}" for n in broken}
    assert errors and all(error.file == "s.trig" and error.line >= 3 for error in errors)


NQUADS_CORRUPTIONS = [
    lambda text: text.replace("<http://example.org/s>", "<no scheme>", 1),
    lambda text: text.replace(" .\n", "\n", 1),                     # no final dot
    lambda text: text.replace('"v"', '"v', 1),                      # a string left open
    lambda text: text.replace(f'"^^{INT}', '"', 1),                 # a time that is a string
]


@pytest.mark.parametrize("seed", range(3))
def test_skip_mode_keeps_every_untouched_nquads_element(seed: int) -> None:
    import random

    chooser = random.Random(seed)
    segments = [
        "".join(f'<{E}s> <{E}p{k}> "v" <{E}e{n}> .\n' for k in range(n % 3 + 1))
        + f'<{E}e{n}> {GEN} "{n}"^^{INT} .\n'
        for n in range(120)
    ]
    broken = set(chooser.sample(range(120), 25))
    for n in broken:
        segments[n] = chooser.choice(NQUADS_CORRUPTIONS)(segments[n])
    for n in chooser.sample(range(120), 5):
        segments[n] = segments[n].replace("\n", "\njunk\n", 1)  # a garbage line in a graph
    elements, errors = skip("".join(segments), "s.nq")
    names = {e.graph.removeprefix(E) for e in elements}
    assert names == {f"e{n}" for n in range(120) if n not in broken}
    assert len(errors) >= len(broken)


@pytest.mark.parametrize("size", [16, 1 << 16])
def test_sparql_style_directives_brackets_and_collections(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trig_split, "BLOCK_SIZE", size)
    text = (
        "BASE <http://example.org/>\nPREFIX prov: <http://www.w3.org/ns/prov#>\n"
        "<e1> { <a> <p> [ <q> ( 1 2.5 <b> ) ] . }\n<e1> prov:generatedAtTime 1 .\n"
        "PREFIX x: <http://example.org/x/>\n"
        "GRAPH x:e2 { x:a x:p x:b } x:e2 prov:generatedAtTime 2 .\n"
    )
    elements = read_text(text)
    assert [(e.graph, e.end, len(e.triples)) for e in elements] == [
        (E + "e1", 1, 8), (E + "x/e2", 2, 1)  # 1 + bnode's 1 + list of 3 (2 each)
    ]


# --- a line of garbage costs no good element -------------------------------------------

GARBAGE_LAYOUTS = {
    "time first": ":e{n} prov:generatedAtTime {n} .\n:e{n} {{ :s :p :o . }}\n",
    "time after": ":e{n} {{ :s :p :o . }}\n:e{n} prov:generatedAtTime {n} .\n",
    "graph over lines": ":e{n} {{\n  :s :p :o .\n}}\n:e{n} prov:generatedAtTime {n} .\n",
}


@pytest.mark.parametrize("layout", GARBAGE_LAYOUTS)
@pytest.mark.parametrize("where", [1, 2])
def test_a_garbage_line_between_statements_takes_no_time_statement(
    layout: str, where: int
) -> None:
    """`this is not rdf` has no `.`: read on, it would run into the next statement (a time
    statement, here before or after the graph) and reject a good element as "no time"."""
    size = GARBAGE_LAYOUTS[layout].count("\n")
    lines = "".join(GARBAGE_LAYOUTS[layout].format(n=n) for n in range(6)).splitlines(True)
    at = size * 3 + size - 2 + where  # before e3's last line, or after it
    lines.insert(at, "this is not rdf\n")
    elements, errors = skip(PREFIXES + "".join(lines))
    assert [e.end for e in elements] == list(range(6))
    assert [(e.line, e.element) for e in errors] == [(at + 3, None)]
    assert errors[0].reason.startswith("syntax error:")


# --- damaged gzip: what comes before the damage is read, the damage is located -------------

def numbered(count: int, syntax: str) -> str:
    """`count` one-triple elements stamped 0, 1, ...: one line each in TriG (after the
    prefixes), two lines each in N-Quads."""
    if syntax == "nq":
        return "".join(f'<{E}s> <{E}p> <{E}o> <{E}e{n}> .\n<{E}e{n}> {GEN} "{n}"^^{INT} .\n'
                       for n in range(count))
    return PREFIXES + "".join(f":e{n} {{ :s :p :o }} :e{n} prov:generatedAtTime {n} .\n"
                              for n in range(count))


@pytest.mark.parametrize("syntax", ["trig", "nq"])
def test_truncated_gzip_keeps_the_elements_before_the_cut(syntax: str) -> None:
    text = numbered(400, syntax).encode()
    packed = gzip.compress(text)[:1200]  # about a third of the compressed data
    prefix = zlib.decompressobj(31).decompress(packed)  # what zlib can read of it
    cut_line = prefix.count(b"\n") + 1
    whole_lines = cut_line - 1 - (0 if syntax == "nq" else 2)  # element lines read whole
    before = whole_lines // 2 if syntax == "nq" else whole_lines
    assert 20 < before < 390
    name = f"s.{syntax}.gz"
    errors: list[StreamError] = []
    elements = list(read_stream(io.BytesIO(packed), S, name=name, on_error="skip",
                                errors=errors.append))
    assert [e.end for e in elements] == list(range(before))
    assert str(errors[0]) == (
        f"{name}:{cut_line}: the gzip data ends early (a truncated file); "
        "what comes before this line is read, the rest is lost"
    )
    assert all(error.line in (cut_line - 1, cut_line) for error in errors[1:])
    with pytest.raises(StreamError) as caught:  # stop mode: the same elements, then the error
        for index, element in enumerate(read_stream(io.BytesIO(packed), S, name=name)):
            assert element.end == index
    assert str(caught.value) == str(errors[0])
    assert index + 1 in (before - 1, before)  # the element still open at the cut waits


def test_gzip_with_a_bad_checksum_is_read_whole_and_reported() -> None:
    text = numbered(50, "trig").encode()
    packed = bytearray(gzip.compress(text))
    packed[-8] ^= 0xFF  # the CRC-32 in the trailer
    errors: list[StreamError] = []
    elements = list(read_stream(io.BytesIO(bytes(packed)), S, name="s.trig.gz",
                                on_error="skip", errors=errors.append))
    assert [e.end for e in elements] == list(range(50))
    assert [(e.line, e.element) for e in errors] == [(53, None)]  # after the last line
    assert "checksum fails" in errors[0].reason


def test_gzip_members_and_padding_read_as_one_file() -> None:
    text = numbered(30, "trig").encode()
    packed = gzip.compress(text[:500]) + gzip.compress(text[500:]) + b"\0" * 8
    elements = list(read_stream(io.BytesIO(packed), S, name="s.trig.gz"))
    assert [e.end for e in elements] == list(range(30))


# --- long statements: linear work, and a bound -----------------------------------------------

def long_literal(size: int, syntax: str) -> bytes:
    literal = "x" * size
    if syntax == "nq":
        return (f'<{E}s> <{E}p> "{literal}" <{E}e1> .\n<{E}e1> {GEN} "1"^^{INT} .\n'
                f'<{E}s> <{E}p> <{E}o> <{E}e2> .\n<{E}e2> {GEN} "2"^^{INT} .\n').encode()
    return (PREFIXES + f':e1 {{ :s :p "{literal}" . }} :e1 prov:generatedAtTime 1 .\n'
            ":e2 { :s :p :o . } :e2 prov:generatedAtTime 2 .\n").encode()


class _Looked:
    """A compiled pattern that adds up the length of the text it is asked to look at."""

    def __init__(self, pattern: re.Pattern[bytes], seen: list[int]) -> None:
        self.pattern, self.seen = pattern, seen

    def match(self, text: bytes, *args: int) -> re.Match[bytes] | None:
        self.seen.append(len(text))
        return self.pattern.match(text, *args)

    def fullmatch(self, text: bytes, *args: int) -> re.Match[bytes] | None:
        self.seen.append(len(text))
        return self.pattern.fullmatch(text, *args)


@pytest.mark.parametrize("syntax", ["trig", "nq"])
def test_a_long_line_is_looked_at_a_bounded_number_of_times(
    syntax: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Work linear in a line's length: the scanner and the parser look at the text read so
    far only once it has doubled, so the bytes they see add up to a few times the line's
    (before, they looked at it again after each 64 KiB block: 1 MiB was scanned 16 times)."""
    seen: list[int] = []
    real_parse = ox.parse

    def parse(data, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(len(data) if isinstance(data, bytes) else 0)
        return real_parse(data, *args, **kwargs)

    monkeypatch.setattr(ox, "parse", parse)
    for name in ("STATEMENTS", "UNFINISHED", "SPACE_ONLY"):
        monkeypatch.setattr(trig_split, name, _Looked(getattr(trig_split, name), seen))
    for size in (1 << 18, 1 << 20):
        seen.clear()
        data = long_literal(size, syntax)
        elements = list(read_stream(io.BytesIO(data), S, name=f"s.{syntax}"))
        assert [e.end for e in elements] == [1, 2]
        assert elements[0].triples[0].object == ox.Literal("x" * size)
        assert sum(seen) < 8 * len(data), (size, len(seen))


@pytest.mark.parametrize("syntax", ["trig", "nq"])
def test_an_element_over_the_maximum_size_is_a_located_error(syntax: str) -> None:
    data = long_literal(5000, syntax)
    name = f"s.{syntax}"
    errors: list[StreamError] = []
    elements = list(read_stream(io.BytesIO(data), S, name=name, on_error="skip",
                                errors=errors.append, max_element_size=4096))
    assert [e.end for e in elements] == [2]
    line = 1 if syntax == "nq" else 3
    assert [(e.line, e.element) for e in errors] == [(line, E + "e1")]
    assert errors[0].reason == (
        "longer than the maximum element size (4096 bytes), so skipped unread; "
        "--max-element-size raises the limit"
    )
    with pytest.raises(StreamError, match="maximum element size"):
        list(read_stream(io.BytesIO(data), S, name=name, max_element_size=4096))
    # the limit is on one statement or line, so the same file reads whole above it
    assert len(list(read_stream(io.BytesIO(data), S, name=name, max_element_size=6000))) == 2


def test_a_term_past_the_parsers_own_limit_is_a_located_error() -> None:
    """pyoxigraph stops at a 16 MiB token (MemoryError); that is one element's error."""
    for syntax, line in (("trig", 3), ("nq", 1)):
        errors: list[StreamError] = []
        data = long_literal(chunks.TERM_LIMIT + 10, syntax)
        elements = list(read_stream(io.BytesIO(data), S, name=f"s.{syntax}",
                                    on_error="skip", errors=errors.append))
        assert [e.end for e in elements] == [2]
        assert [(e.line, e.element, e.reason) for e in errors] == [
            (line, E + "e1", f"syntax error: a term longer than {chunks.TERM_LIMIT} bytes, "
             "the RDF parser's limit")
        ]
