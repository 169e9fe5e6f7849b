"""Stream files straight to columns: text -> integer columns without an object per term.

The row path parses every quad with pyoxigraph into Python term objects and assembles
elements from them; most of a run's time went there. Files in the one-element-per-line
shape that Sepia's generators and most exporters write (TriG: a time statement line, then
``<graph> { s p o . ... }`` on one line) are read here with polars string kernels: lines are
classified by regular expressions, each element's triples are cut into terms, triples whose
predicate no query reads are dropped before anything is encoded, and only the *distinct*
terms left are encoded. A term whose text is provably its canonical N-Triples form (an
absolute IRI of plain ASCII characters that RFC 3986 allows, a plain or ``xsd:string``
literal without escapes or control characters, an ``xsd:integer`` or ``xsd:decimal`` already
in pyoxigraph's canonical form, a short lower-case language tag) goes into the dictionary
as its text, matched by one regular expression over the column; any other goes through
pyoxigraph (one small N-Triples document, so it is checked by the same parser, and a
literal takes its canonical form). Times are parsed as columns.

Why polars and not pyarrow or numpy: polars has vectorised regex extraction and joins on
strings, which turn the line text into columns in compiled code; pyarrow's compute module
has the regexes but no fast dictionary-encoding join against Python-held ids, and numpy
has no string kernels. Measured on 100,000 W1 elements (docs/engine.md): reading the lines
is ~20x faster than pyoxigraph's parse of the same file.

Anything outside the shape (prefixed names or blank nodes inside a graph, escapes in a
literal, an interval or integer time, a time not right before its graph, times going back,
gzip) makes ``read_columns`` return None: the caller reads the file with the row reader
(``sepia.io.streams``), which keeps its own error reporting. So this path never decides
what a malformed file means.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Generator, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from functools import partial
from itertools import islice
from pathlib import Path
from typing import TextIO

import numpy as np
import polars as pl
import pyoxigraph as ox

from sepia.engine.codec import Codec
from sepia.engine.columnar.batch import ColumnBatch, ReadNumbers
from sepia.io.ahead import read_ahead
from sepia.io.chunks import MAX_ELEMENT_SIZE
from sepia.io.errors import StreamError
from sepia.io.streams import read_stream
from sepia.rdf.numbers import DECIMAL, INTEGER
from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import CANONICAL_LEXICAL, PADDED_DECIMAL, Term
from sepia.rdf.time import TimeKind
from sepia.rdf.vocabulary import XSD

PROV_GENERATED = "http://www.w3.org/ns/prov#generatedAtTime"
PROV_STARTED = "http://www.w3.org/ns/prov#startedAtTime"
PROV_ENDED = "http://www.w3.org/ns/prov#endedAtTime"
XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"
IRI = r"<[A-Za-z][A-Za-z0-9+.\-]*:[^<>\"{}|^`\\\x00-\x20]*>"
_LITERAL_TAIL = r"(?:\^\^" + IRI + r"|@[A-Za-z]+(?:-[A-Za-z0-9]+)*)?"
LITERAL = r"\"[^\"\\\n\r]*\"" + _LITERAL_TAIL
TERM = f"(?:{IRI}|{LITERAL})"
PNAME = r"[A-Za-z][\w.\-]*:[\w\-]+"
_PREFIX = re.compile(r"@prefix\s+([A-Za-z][\w.\-]*)?:\s*(" + IRI + r")\s*\.\s*")
_DATETIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,3})?Z"
_STAMP_TYPE = re.compile(rf"\^\^({IRI}|{PNAME})")
"""What follows a time's lexical form: its datatype."""
_GAP = r"[ \t]+"
_TRIPLE = f"{TERM}{_GAP}{TERM}{_GAP}{TERM}"
_TRIPLES = rf"^{_TRIPLE}(?:{_GAP}\.{_GAP}{_TRIPLE})*(?:{_GAP}\.)?$"
"""An element's triples: no empty graph (the row reader rejects its time statement),
nothing but terms, blanks between them and dots between triples."""
_SOLID_LITERAL = r"\"[^\"\\\n\r ]*\"" + _LITERAL_TAIL
_SOLID_TERM = f"(?:{IRI}|{_SOLID_LITERAL})"
_SPACED_TRIPLE = f"{_SOLID_TERM} {_SOLID_TERM} {_SOLID_TERM}"
_SPACED_TRIPLES = rf"^{_SPACED_TRIPLE}(?: \. {_SPACED_TRIPLE})*(?: \.)?$"
"""``_TRIPLES`` with one space for each blank and no space inside a term (the shape the
generators write): then splitting at the spaces cuts out the very terms ``TERM`` finds,
about 5x cheaper than extracting them with the regular expression."""

_PCT = r"%[0-9A-Fa-f]{2}"
_PLAIN = r"A-Za-z0-9\-._~!$&'()*+,;="
"""RFC 3986's unreserved characters and sub-delimiters."""
_PCHAR = rf"(?:[{_PLAIN}:@]|{_PCT})"
_ABSOLUTE_IRI = (
    rf"<[A-Za-z][A-Za-z0-9+.\-]*:"
    rf"(?://(?:(?:[{_PLAIN}:]|{_PCT})*@)?(?:[{_PLAIN}]|{_PCT})*(?::[0-9]*)?(?:/{_PCHAR}*)*"
    rf"|/?(?:{_PCHAR}+(?:/{_PCHAR}*)*)?)"
    rf"(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?>"
)
"""An absolute IRI (RFC 3986, no IP literal) of ASCII characters: valid for RFC 3987 too,
and pyoxigraph keeps its text as it is."""
_STRING_TYPE = f"^^<{XSD}string>"
_BODY = r'"[^"\\\x00-\x1f\x7f]*"'
"""A string without escapes or characters that N-Triples writes escaped."""
_CANONICAL_TEXT = "^(?:" + "|".join([
    _ABSOLUTE_IRI,
    rf"{_BODY}(?:\^\^<{re.escape(XSD)}string>|@[a-z]{{2,3}}(?:-(?:[a-z]{{2}}|[0-9]{{3}}))?)?",
    *(rf'"(?:{form})"\^\^<{re.escape(datatype)}>' for datatype, form in CANONICAL_LEXICAL.items()),
]) + ")$"
"""Terms whose text is their canonical N-Triples form (after dropping ``^^xsd:string``)."""
_DECIMAL = f"{XSD}decimal"
_PADDED_DECIMAL = rf'^"{PADDED_DECIMAL}"\^\^<{re.escape(_DECIMAL)}>$'
"""An ``xsd:decimal`` written with trailing zeros in its fraction (``PADDED_DECIMAL``)."""


BLOCK = 1 << 22
"""Bytes of text read per batch (whole lines): memory follows this, not the file's length.
A count of lines did not bound it: W7's elements are ten times W1's, and 32,768 of its
lines per stream file made a 100,000-element run peak at 655 MiB and take 9.0 s, against
225 MiB and 6.3 s at this block; W1 the same speed, 161 against 300 MiB (medians of 3)."""
ROW_ELEMENTS = 1 << 12
"""Elements per batch where the row reader takes over a file."""
READER = "sepia-columnar-reader"
"""The name of the thread that reads a file ahead of the engine."""


class OutOfShape(Exception):
    """A part of the file this reader does not take, after ``done`` elements it took."""

    def __init__(self, done: int) -> None:
        super().__init__(f"out of the columnar reader's shape after {done} elements")
        self.done = done


def read_columns(
    path: str | Path, stream: str, codec: Codec, predicates: Collection[str] | None = None
) -> ColumnBatch | None:
    """The elements of one stream file as one batch (ids from ``codec``), keeping only
    the triples whose predicate IRI is in ``predicates`` (None: all); None when some part
    of the file is not in the shape this reader takes (see the module docstring)."""
    try:
        return ColumnBatch.merged(list(column_chunks(path, stream, codec, predicates)))
    except OutOfShape:
        return None


def stream_columns(
    path: str | Path, stream: str, codec: Codec, predicates: Collection[str] | None = None,
    block: int = BLOCK, errors: Callable[[StreamError], None] | None = None,
) -> Iterator[ColumnBatch]:
    """The file's elements as batches of about ``block`` bytes each: read as columns while
    the file is in shape, and from the first part that is not, by the row reader (which
    reports errors as it always does, to ``errors`` if given) in batches of ``ROW_ELEMENTS``."""
    done = 0
    try:
        for batch in column_chunks(path, stream, codec, predicates, block):
            done += len(batch)
            yield batch
        return
    except OutOfShape:
        pass
    elements = islice(read_stream(path, stream, errors=errors), done, None)
    while chunk := list(islice(elements, ROW_ELEMENTS)):
        yield ColumnBatch.from_elements(chunk, codec)


def stream_elements(
    path: str | Path, stream: str, errors: Callable[[StreamError], None] | None = None,
) -> Iterator[StreamElement]:
    """The file's elements as the row reader gives them (``read_stream``), for a session
    on the row engine: read as columns while the file is in shape (time lines, or start
    and end lines, before each graph line), each distinct term parsed once by pyoxigraph
    and each distinct triple made once per block; from the first part that is not, by
    the row reader (reporting errors to ``errors``, if given)."""
    done = 0
    try:
        for chunk in element_chunks(path, stream):
            done += len(chunk)
            yield from chunk
        return
    except OutOfShape:
        pass
    yield from islice(read_stream(path, stream, errors=errors), done, None)


def element_chunks(path: str | Path, stream: str, block: int = BLOCK) -> Iterator[
        list[StreamElement]]:
    """``column_chunks`` as lists of stream elements (``stream_elements``): raises
    ``OutOfShape`` (how many elements came before) at the first part out of shape."""
    path = Path(path)
    if path.suffix != ".trig":
        raise OutOfShape(0)
    opened = partial(path.open, encoding="utf-8")
    done, known = 0, Parsed()
    for cut in read_ahead(_blocks(opened, None, block), READER):
        elements = _stream_elements(cut, stream, known)
        if elements is None:
            raise OutOfShape(done)
        done += len(elements)
        yield elements


def column_chunks(
    path: str | Path, stream: str, codec: Codec, predicates: Collection[str] | None = None,
    block: int = BLOCK,
) -> Iterator[ColumnBatch]:
    """Batches of elements read as columns, whole lines of about ``block`` bytes at a time;
    raises ``OutOfShape`` (how many elements came before) at the first part out of shape.
    The text is cut into terms a block ahead on a thread of its own (``sepia.io.ahead``); only
    the encoding is done here, so the dictionary stays on the caller's thread."""
    path = Path(path)
    if path.suffix != ".trig":
        raise OutOfShape(0)
    opened = partial(path.open, encoding="utf-8")
    yield from (batch for batch, _ in named_chunks(opened, stream, codec, predicates, block))


def named_chunks(
    opened: Callable[[], TextIO], stream: str, codec: Codec,
    predicates: Collection[str] | None = None, block: int = BLOCK, ahead: bool = True,
) -> Iterator[tuple[ColumnBatch, pl.Series]]:
    """``column_chunks`` of the TriG text ``opened`` gives (opened and closed on the
    reading thread), each batch with its elements' graph names (as N-Triples IRIs): for a
    reader that keeps the element's name (the Spark job's route stage reads a piece of a
    file this way). ``ahead`` False: no reading thread, for a caller granted one core."""
    done = 0
    blocks = _blocks(opened, predicates, block)
    cuts = read_ahead(blocks, READER) if ahead else blocks
    with closing(cuts):  # the file closed, and the thread stopped, when the caller stops
        for cut in cuts:
            points = cut.starts is cut.stamps or np.array_equal(cut.starts, cut.stamps)
            batch = _encoded(cut, stream, codec) if points else None
            if batch is None:  # an interval: the columnar core's elements are points
                raise OutOfShape(done)
            done += len(batch)
            yield batch, cut.graphs


@dataclass(frozen=True, slots=True)
class _Block:
    """One block's elements as text columns, cut and checked: all that is left to do
    is to encode the distinct terms."""

    stamps: np.ndarray
    """Each element's time: the end of its interval."""
    starts: np.ndarray
    """Each element's start: ``stamps`` itself where the elements are points."""
    element: np.ndarray
    """Each triple's element (an offset into ``stamps``)."""
    terms: Terms
    graphs: pl.Series
    """Each element's graph name, as written (an IRI in angle brackets)."""


def _blocks(
    opened: Callable[[], TextIO], predicates: Collection[str] | None, block: int
) -> Generator[_Block, None, None]:
    """The file's blocks of elements (a time line, or a start and an end line, then a
    graph line), cut into terms; raises ``OutOfShape`` at the first block out of shape."""
    done, last, name = 0, None, None
    prefixes: dict[str, str] | None = None
    carried: list[str] = []
    lines = 0
    """Lines per element, as the file's first element shows it."""
    with opened() as file:
        while (read := file.readlines(block)) or carried:  # lines read in C, no loop
            if not read:
                raise OutOfShape(done)  # a time line with no graph line after it
            text = pl.Series("line", carried + read, dtype=pl.String).str.strip_suffix("\n")
            if text.str.len_bytes().max() > MAX_ELEMENT_SIZE:  # type: ignore[operator]
                raise OutOfShape(done)  # the row reader says which statement is too long
            prefixes, body = _prefixes(text, prefixes)
            if prefixes is None:
                raise OutOfShape(done)
            lines = lines or (len(body) and _lines_per_element(body[0], prefixes))
            carried = body.tail(len(body) % lines).to_list() if lines else []
            body = body.head(len(body) - len(carried))
            if not len(body):
                continue
            cut, name = _block(body, lines, prefixes, predicates, name)
            if cut is None or (last is not None and cut.stamps[0] < last):
                raise OutOfShape(done)
            last = int(cut.stamps[-1])
            done += len(cut.stamps)
            yield cut


def _lines_per_element(first: str, prefixes: dict[str, str]) -> int:
    """3 where the file's first element starts with a ``prov:startedAtTime`` line (an
    interval: its end line and its graph line follow), else 2 (a time line, a graph line)."""
    words = first.split(" ", 2)
    return 3 if len(words) > 1 and _expand(words[1], prefixes) == PROV_STARTED else 2


def _block(
    body: pl.Series, lines: int, prefixes: dict[str, str], predicates: Collection[str] | None,
    before: str | None,
) -> tuple[_Block | None, str | None]:
    """One block of elements (``lines`` lines each, the graph line last) cut into terms,
    and its last graph name."""
    times = [body.gather_every(lines, offset=k) for k in range(lines - 1)]
    elements = _elements(times, body.gather_every(lines, offset=lines - 1), prefixes, before)
    if elements is None:
        return None, None
    starts, stamps, contents, names = elements
    triples = _triples(contents, predicates)
    if triples is None:
        return None, None
    element = triples["element"].to_numpy().astype(np.int64)
    return _Block(stamps, starts, element, Terms.of(triples), names), names[-1]


def _encoded(cut: _Block, stream: str, codec: Codec) -> ColumnBatch | None:
    """The block as a batch of ids from ``codec``, with its integers' and decimals'
    numbers; None if pyoxigraph refuses a term."""
    ids = cut.terms.ids(codec)
    if ids is None:
        return None
    count = len(cut.stamps)
    return ColumnBatch(
        (stream,), cut.stamps, np.zeros(count, dtype=np.int64), np.zeros(count, dtype=np.int64),
        cut.element, *cut.terms.spo(ids), TimeKind.DATETIME, cut.terms.read_numbers(ids),
    )


def _stream_elements(cut: _Block, stream: str, known: Parsed) -> list[StreamElement] | None:
    """The block's elements with their terms as pyoxigraph gives them (graph names that
    are absolute IRIs of ASCII characters, kept as written), each distinct triple made
    once; None where pyoxigraph refuses a term or a graph name may not be kept so."""
    names = cut.graphs
    if not names.str.contains(f"^{_ABSOLUTE_IRI}$").all():
        return None
    terms = known.terms(cut.terms.distinct.to_list())
    if terms is None:
        return None
    s, p, o = (c.astype(np.int64) for c in np.split(cut.terms.at, 3))
    width = len(terms)
    if width >= 1 << 21:  # (s, p, o) as one int64 key: only below 2^63
        return None
    _, first, which = np.unique((s * width + p) * width + o, return_index=True,
                                return_inverse=True)
    distinct = [ox.Triple(terms[a], terms[b], terms[c])
                for a, b, c in zip(s[first].tolist(), p[first].tolist(), o[first].tolist(),
                                   strict=True)]
    triples = [distinct[i] for i in which.tolist()]
    bounds = np.searchsorted(cut.element, np.arange(len(cut.stamps) + 1)).tolist()
    graphs = names.str.slice(1, names.str.len_chars() - 2).to_list()
    return [
        StreamElement(stream, graph, start, end, tuple(triples[low:high]), TimeKind.DATETIME)
        for graph, start, end, low, high in zip(
            graphs, cut.starts.tolist(), cut.stamps.tolist(), bounds[:-1], bounds[1:],
            strict=True)
    ]


class Parsed:
    """Terms parsed by pyoxigraph from their texts, kept across a file's blocks: a
    stream repeats its terms, each is parsed once (one small N-Triples document per
    block, so it is checked by the same parser and given the same term)."""

    LIMIT = 1 << 16
    """Terms kept at most; past it the cache starts afresh (memory stays bounded)."""

    def __init__(self) -> None:
        self.known: dict[str, Term] = {}

    def terms(self, texts: list[str]) -> list[Term] | None:
        """Each text's term; None when pyoxigraph refuses one."""
        known = self.known
        missing = [t for t in texts if t not in known]
        if missing:
            if len(known) + len(missing) > self.LIMIT:
                known.clear()
                missing = texts
            parsed = _parsed_terms(missing)
            if parsed is None:
                return None
            known.update(zip(missing, parsed, strict=True))
        return [known[t] for t in texts]


def _prefixes(
    lines: pl.Series, known: dict[str, str] | None
) -> tuple[dict[str, str] | None, pl.Series]:
    """The @prefix declarations (a block leading the file: ``known`` is None only for the
    file's first lines) and the other non-blank lines."""
    stripped = lines.str.strip_chars()
    kept = stripped.filter((stripped != "") & ~stripped.str.starts_with("#"))
    declared = kept.str.starts_with("@prefix")
    head = int(declared.arg_min()) if not declared.all() else len(kept)  # type: ignore[arg-type]
    if declared.slice(head).any() or (known is not None and head):
        return None, kept  # a prefix declared among the elements
    if known is not None:
        return known, kept
    prefixes: dict[str, str] = {}
    for line in kept.slice(0, head).to_list():
        found = _PREFIX.fullmatch(line)
        if found is None:
            return None, kept
        prefixes[found.group(1) or ""] = found.group(2)[1:-1]
    return prefixes, kept.slice(head)


def _expand(term: str, prefixes: dict[str, str]) -> str | None:
    if term.startswith("<"):
        return term[1:-1]
    prefix, _, local = term.partition(":")
    base = prefixes.get(prefix)
    return None if base is None else base + local


def _elements(
    times: list[pl.Series], graphs: pl.Series, prefixes: dict[str, str], before: str | None
) -> tuple[np.ndarray, np.ndarray, pl.Series, pl.Series] | None:
    """(start and end in epoch ms per element, each element's triples text, their graph
    names), when every element is its time lines (``times``: one prov:generatedAtTime
    line, or a prov:startedAtTime line then a prov:endedAtTime line, each an xsd:dateTime
    in UTC) right before its graph line, no interval ends before it starts, ends never go
    back, and no graph name follows itself (the row reader would make one element of both).
    A point's start is its end (the same array)."""
    names = graphs.str.split_exact(" ", 1).struct.field("field_0")
    if not names.str.contains(f"^{IRI}$").all():
        return None
    if (names.slice(1) == names.slice(0, len(names) - 1)).any() or names[0] == before:
        return None
    predicates = [PROV_GENERATED] if len(times) == 1 else [PROV_STARTED, PROV_ENDED]
    stamps = [_stamps(lines, names, p, prefixes) for lines, p in zip(times, predicates,
                                                                      strict=True)]
    starts, ends = stamps[0], stamps[-1]
    if starts is None or ends is None or (np.diff(ends) < 0).any() or (starts > ends).any():
        return None
    contents = graphs.str.slice(names.str.len_chars() + 1)
    if not (contents.str.starts_with("{") & contents.str.ends_with("}")).all():
        return None
    contents = contents.str.slice(1, contents.str.len_chars() - 2).str.strip_chars()
    return starts, ends, contents, names


def _stamps(
    lines: pl.Series, names: pl.Series, predicate: str, prefixes: dict[str, str]
) -> np.ndarray | None:
    """The epoch ms of time lines ``<name> predicate "lexical"^^xsd:dateTime .``, one per
    graph name in ``names``, when every line is one."""
    fields = lines.str.split_exact(" ", 3).struct.unnest()
    subjects, verbs, stamp, end = (fields[f"field_{i}"] for i in range(4))
    if end.null_count() or (end != ".").any() or (subjects != names).any():
        return None
    before_quote, lexical, tail = stamp.str.splitn('"', 3).struct.unnest()  # "lexical"^^type
    if tail.null_count() or (before_quote != "").any():
        return None
    if not lexical.str.contains(f"^{_DATETIME}$").all():
        return None
    datatypes = [_STAMP_TYPE.fullmatch(t) for t in tail.unique().to_list()]
    if any(d is None or _expand(d[1], prefixes) != XSD_DATETIME for d in datatypes):
        return None
    if any(_expand(t, prefixes) != predicate for t in verbs.unique().to_list()):
        return None
    try:
        moments = lexical.str.to_datetime("%Y-%m-%dT%H:%M:%S%.fZ", time_unit="ms", time_zone="UTC")
    except pl.exceptions.PolarsError:
        return None
    return moments.dt.epoch("ms").to_numpy().astype(np.int64)


def ntriples_ids(
    documents: Sequence[str], codec: Codec
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Elements whose triples are N-Triples documents (one ``s p o .`` per line, as a
    Spark element row holds them) as id columns (s, p, o, element: a position in
    ``documents``), cut and encoded as the stream files' lines are, without a term object;
    None when a document holds anything besides full IRIs and plain literals (the caller
    parses them)."""
    contents = pl.Series("text", documents, dtype=pl.String)
    nonempty = (contents != "").to_numpy()
    if not nonempty.any():
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty
    triples = _triples(contents.filter(nonempty).str.replace_all("\n", " ", literal=True), None)
    spo = None if triples is None else Terms.of(triples).encoded(codec)
    if triples is None or spo is None:
        return None
    element = triples["element"].to_numpy().astype(np.int64)
    return *spo, np.flatnonzero(nonempty)[element]


def _triples(contents: pl.Series, predicates: Collection[str] | None) -> pl.DataFrame | None:
    """One row per triple (element, s, p, o as term text) of the predicates read."""
    if contents.str.contains(_SPACED_TRIPLES).all():
        cut = contents.str.split(" ")
    elif contents.str.contains(_TRIPLES).all():
        cut = contents.str.extract_all(TERM)
    else:
        return None  # something besides full IRIs and plain literals, or not triples
    terms = pl.DataFrame({"element": np.arange(len(contents)), "term": cut})
    flat = terms.explode("term").filter(pl.col("term") != ".")  # no empty graph: no nulls
    term = flat["term"]
    triples = pl.DataFrame({"element": flat["element"].gather_every(3), "s": term.gather_every(3),
                            "p": term.gather_every(3, offset=1),
                            "o": term.gather_every(3, offset=2)})
    if not (triples["s"].str.starts_with("<").all() and triples["p"].str.starts_with("<").all()):
        return None  # a literal as subject or predicate: the row reader says where
    if predicates is not None:
        triples = triples.filter(pl.col("p").is_in([f"<{p}>" for p in predicates]))
    return triples


@dataclass(frozen=True, slots=True)
class Terms:
    """A block's terms (s column, then p, then o) as their distinct texts, where each
    term is among them (``at``), and each distinct one's canonical N-Triples text where
    its own text shows it (else null): all that can be worked out without the dictionary,
    so the reading thread does it."""

    distinct: pl.Series
    at: np.ndarray
    canonical: pl.Series
    numbers: tuple[np.ndarray, ...]
    """The distinct terms that are integers or decimals ``groups.NumericIds`` reads from
    their canonical texts, and their kinds, digits and mantissas (``_read_numbers``)."""

    @staticmethod
    def of(triples: pl.DataFrame) -> Terms:
        column = pl.concat([triples["s"], triples["p"], triples["o"]]).to_frame("term")
        distinct = column["term"].unique(maintain_order=True)
        numbered = distinct.to_frame("term").with_row_index("at")
        at = column.join(numbered, on="term", how="left", maintain_order="left")["at"]
        canonical = _canonical_texts(distinct)
        return Terms(distinct, at.to_numpy().astype(np.int64), canonical,
                     _read_numbers(canonical))

    def encoded(self, codec: Codec) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The s, p and o id columns (``ids``); None where pyoxigraph refuses a term."""
        ids = self.ids(codec)
        return None if ids is None else self.spo(ids)

    def spo(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The s, p and o id columns from the distinct terms' ``ids``."""
        s, p, o = np.split(ids[self.at], 3)
        return s, p, o

    def read_numbers(self, ids: np.ndarray) -> ReadNumbers | None:
        """The numbers of the integers and decimals among the distinct terms (``ids``:
        theirs), by id; None where there are none."""
        at, kind, digits, mantissa = self.numbers
        if not len(at):
            return None
        found, first = np.unique(ids[at], return_index=True)  # two texts, one canonical
        return ReadNumbers(found, kind[first], digits[first], mantissa[first])

    def ids(self, codec: Codec) -> np.ndarray | None:
        """Each distinct term's id: encoded once, by its text where that is its canonical
        form, else parsed by pyoxigraph (a term it refuses: None, and the file goes to the
        row reader) and encoded in canonical form."""
        canonical = self.canonical.is_not_null()
        ids = np.empty(len(self.distinct), dtype=np.int64)
        plain = canonical.to_numpy()
        ids[plain] = codec.encode_many(self.canonical.filter(canonical).to_list())
        rest = self.distinct.filter(~canonical).to_list()
        if rest:
            parsed = _parsed_terms(rest)
            if parsed is None:
                return None
            ids[~plain] = [codec.encode(t) for t in parsed]
        return ids


def _read_numbers(canonical: pl.Series) -> tuple[np.ndarray, ...]:
    """The positions of the canonical texts that are integers or decimals of at most 18
    digits, and ``groups.NumericIds``' decomposition of each, as its ``_from_text`` finds
    it: the kind, the fraction's digits and the digits as one integer (under 10^18: it
    fits). Worked out on the reading thread, on columns, by cuts rather than a regular
    expression: a canonical text (``_canonical_texts``) typed ``xsd:integer`` or
    ``xsd:decimal`` holds the type's canonical lexical form (never ``-0``, no dot in an
    integer)."""
    integer, decimal = (canonical.str.ends_with(f'"^^<{XSD}{t}>').fill_null(False)
                        for t in ("integer", "decimal"))
    numeric = integer | decimal
    lexical = canonical.filter(numeric).str.split_exact('"', 2).struct.field("field_1")
    parts = lexical.str.split_exact(".", 1).struct.unnest()
    whole, fraction = parts["field_0"], parts["field_1"].fill_null("")
    length = whole.str.len_bytes() + fraction.str.len_bytes() - whole.str.starts_with("-")
    keep = (length <= 18).to_numpy()
    at = np.flatnonzero(numeric.to_numpy())[keep]
    kind = np.where(integer.to_numpy()[at], INTEGER, DECIMAL).astype(np.int64)
    digits = fraction.str.len_bytes().to_numpy()[keep].astype(np.int64)
    mantissa = (whole + fraction).filter(pl.Series(keep)).cast(pl.Int64).to_numpy()
    return at, kind, digits, mantissa.astype(np.int64)


def _canonical_texts(terms: pl.Series) -> pl.Series:
    """Each term's canonical N-Triples text where its own text shows it, else null: the
    text itself (``^^xsd:string`` dropped), or a padded decimal's (``rdf.terms.decimal_text``
    on columns: the fraction's trailing zeros stripped, ``-0.0`` is ``0``)."""
    term = pl.col("term")
    sign, whole, fraction = (term.str.extract(_PADDED_DECIMAL, n) for n in (1, 2, 3))
    fraction = fraction.str.strip_chars_end("0")
    lexical = (pl.when((whole == "0") & (fraction == "")).then(pl.lit("0"))
               .when(fraction == "").then(sign + whole)
               .otherwise(sign + whole + "." + fraction))
    return terms.to_frame("term").select(
        pl.when(term.str.contains(_CANONICAL_TEXT)).then(term.str.strip_suffix(_STRING_TYPE))
        .otherwise('"' + lexical + f'"^^<{_DECIMAL}>')
    ).to_series()


def _parsed_terms(texts: list[str]) -> list[Term] | None:
    """The terms of N-Triples term texts, parsed by pyoxigraph in one document; None where
    it refuses one (the caller's file then goes to the row reader)."""
    document = "".join(f"<x:s> <x:p> {text} .\n" for text in texts)
    try:
        parsed = [q.object for q in ox.parse(document, format=ox.RdfFormat.N_TRIPLES)]
    except SyntaxError:
        return None
    return parsed if len(parsed) == len(texts) else None
