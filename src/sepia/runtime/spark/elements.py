"""Stream elements as rows: what crosses Spark's shuffle and sits in its state store.

Ingest rows are one per triple; the stateful stage wants one per element, so consecutive
ingest rows of the same element (same stream, file and position) are folded into one
*element row* whose triples are an N-Triples document. pyoxigraph parses that back in bulk,
keeping blank node labels, so an element leaves the state exactly as it entered. A row the
route stage routed on the columnar core carries its triples as *term text* instead
(`term_text`: every term's canonical N-Triples, s p o in turn, joined by `TERM_SEPARATOR`),
which a bucket encodes by text without parsing it (`columns.element_columns`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyoxigraph as ox

from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import Term, canonical
from sepia.rdf.time import TimeKind

ELEMENT_FIELDS = ("stream", "file", "seq", "graph", "start", "end", "kind", "triples")
ELEMENT_DDL = (
    "stream string, file string, seq bigint, graph string, start bigint, end bigint, "
    "kind string, triples string"
)
ELEMENT_SCHEMA = pa.schema(
    [(name, pa.int64() if name in ("seq", "start", "end") else pa.string())
     for name in ELEMENT_FIELDS]
)  # fmt: skip
ElementRow = tuple[str, str, int, str, int, int, str, str]
"""One element: stream, file, seq (position in the file), graph, start, end, time kind, and
its triples as N-Triples text."""

END = ELEMENT_FIELDS.index("end")
GRAPH = ELEMENT_FIELDS.index("graph")

END_GRAPH = "urn:sepia:end-of-input"
END_TIME = 7_258_118_400_000
"""2200-01-01 in epoch ms: past the flush timer, before pandas' nanosecond timestamps end."""
END_MARKER = (
    f"<{END_GRAPH}> {{ <{END_GRAPH}> a <urn:sepia:EndOfInput> . }}\n"
    f"<{END_GRAPH}> <http://www.w3.org/ns/prov#generatedAtTime> {END_TIME} .\n"
)
STAND_INS = "urn:sepia:stand-ins"
"""The graph of a row that packs a key's stand-ins of a chunk of elements (`pack_stand_ins`):
its triples column lists their (time, file, seq, graph) as JSON."""
PACKED = "urn:sepia:packed"
"""The graph of a row that packs one key's element rows of a chunk of one stream (`pack`):
its triples column lists them as JSON."""
PACKED_TERMS = "urn:sepia:packed-terms"
"""The graph of a row that packs one key's element rows of term text (`pack`): its triples
column holds their distinct terms, each row's terms as positions in them, and the rows
without their text (`packed_text`)."""
CLOCK_GRAPH = "urn:sepia:clock"
"""The element of a clock row, which only moves a live source's watermark (sources.idle)."""
MARK_GRAPH = "urn:sepia:stream-mark"
"""The graph of a *mark* row: no element, only a stream's latest element time in a chunk
(its end), which the route stage sends every bucket of a unit on a live run so each can
step at the horizon its batch proves (`host.EngineHost._horizon`)."""


class IngestError(ValueError):
    """A stream element could not be read (an error row of the ingest stage)."""


def element_rows(batches: Iterable[pa.RecordBatch], on_error: str) -> Iterator[ElementRow]:
    """Fold ingest rows (one per triple, an element's rows consecutive) into element rows.

    Error rows raise IngestError when `on_error` is "stop" and are dropped when "skip".
    """
    current: list | None = None
    lines: list[str] = []
    for batch in batches:
        for row in batch.to_pylist():
            if row["error"] is not None:
                if on_error == "stop":
                    raise located(row["file"], row["line"], row["element"], row["error"])
                continue
            identity = [row["stream"], row["file"], row["seq"], row["element"]]
            if current is not None and current[:4] != identity:
                yield _finish(current, lines)
                lines = []
            if current is None or current[:4] != identity:
                current = [*identity, row["start"], row["end"], row["kind"]]
            if row["s"] is not None:
                lines.append(f"{row['s']} {row['p']} {row['o']} .")
    if current is not None:
        yield _finish(current, lines)


def located(file: str, line: int, element: str | None, reason: str) -> IngestError:
    """The error of a bad element, located: file, line, element, then why."""
    shown = f" (element {element})" if element else ""
    return IngestError(f"{file}:{line}{shown}: {reason}")


def _finish(current: list, lines: list[str]) -> ElementRow:
    return (*current, "\n".join(lines))  # type: ignore[return-value]


def element_row(file: str, seq: int, element: StreamElement) -> ElementRow:
    """The row of an element read from `file` at position `seq` (its triples as N-Triples)."""
    text = "\n".join(f"{t} ." for t in element.triples)
    return (element.stream, file, seq, element.graph, element.start, element.end,
            element.kind.value, text)  # fmt: skip


TERM_TEXTS = 1 << 16
"""Terms whose text a `TermTexts` keeps before it starts afresh."""
TABLE_ELEMENTS = 1024
"""Elements whose terms a `TermTexts` gathers into one `TermTable` (the route stage's chunk)."""


class TermTexts:
    """The route stage's element rows of term text (`term_text`), each term in its
    canonical form (`terms.canonical`), as the engine's dictionary holds it and the
    reference evaluator answers with, so that a columnar router or a key on the columnar
    core encodes by text where N-Triples lines were cut into terms again (W6: 11.5 s of the
    route stage's 43 s of CPU at 300,000 elements). Each distinct term's canonical text is
    made once a task: a stream repeats its predicates, sensors and values,
    and the text of a term (its canonical form, then its N-Triples) cost more than the rest
    of the row (W7: 12 terms an element, a third to a half of the row's CPU saved). At most
    `TERM_TEXTS` terms are kept: then it starts afresh. `predicates`: the only predicates
    whose triples are kept (None: all).

    A row's triples are `TermRefs` into a table of the distinct terms of
    `TABLE_ELEMENTS` elements in turn (a route chunk's), filled as the terms are met: the
    columnar router encodes the chunk's distinct terms once (`columns.triple_ids`) and
    `pack` takes a key's terms from the table, where each row's text was joined, then cut
    into terms again by both (W4 at 300,000 elements: 2.3 s of the route stage's CPU in
    `pack`, 2.2 s encoding in the router). `str` of a row's refs is its term text."""

    def __init__(self, predicates: frozenset[str] | None = None) -> None:
        self.known: dict[Term, str] = {}
        self.predicates = predicates
        self.positions: list[int] = []
        self.table = TermTable([], self.positions)
        self.index: dict[Term, int] = {}
        """Each term of `table` by its position."""
        self.rows = 0

    def __call__(self, file: str, seq: int, element: StreamElement) -> ElementRow:
        if len(self.known) > TERM_TEXTS:
            self.known = {}
        if self.rows == TABLE_ELEMENTS:
            self.positions = []
            self.table, self.index, self.rows = TermTable([], self.positions), {}, 0
        self.rows += 1
        start = len(self.positions)
        index, positions, terms = self.index, self.positions, self.table.terms
        for triple in element.triples:
            if self.predicates is None or triple.predicate.value in self.predicates:
                for term in triple:
                    found = index.get(term)
                    if found is None:
                        found = index[term] = len(terms)
                        terms.append(self._text(term))
                    positions.append(found)
        refs = TermRefs(self.table, start, len(positions))
        return (element.stream, file, seq, element.graph, element.start, element.end,
                element.kind.value, refs)  # type: ignore[return-value]  # fmt: skip

    def _text(self, term: Term) -> str:
        known = self.known.get(term)
        if known is None:
            known = self.known[term] = str(canonical(term))
        return known


def end_row(stream: str, kind: str) -> ElementRow:
    """The row telling a key that `stream` has ended (its end-of-input marker was read)."""
    return (stream, "", 0, END_GRAPH, END_TIME, END_TIME, kind, "")


def pack_stand_ins(stand_ins: Sequence[ElementRow]) -> ElementRow:
    """One row standing for several stand-ins of one stream (elements without triples that
    step a key through instants it got no element at): one row per key and chunk crosses
    the shuffle, not one per instant."""
    first = stand_ins[0]
    times = [(row[END], row[1], row[2], row[GRAPH]) for row in stand_ins]
    return (first[0], first[1], first[2], STAND_INS, first[END], first[END], first[6],
            json.dumps(times))  # fmt: skip


def pack(rows: Sequence[ElementRow]) -> ElementRow:
    """One row standing for element rows of one key and stream, stamped with their latest
    end (what the stream's watermark is computed from). The stateful stage's input crosses
    Spark row by row (the shuffle, its sort, Arrow, then PySpark's own regrouping of each
    key's rows through pandas, about 7 us a row in all at W1's size): a chunk's rows of a
    key cross as one. Rows of term text cross as a table of their distinct terms and each
    row's positions in it (`PACKED_TERMS`, `TermRefs`)."""
    first, last = rows[0], max(row[END] for row in rows)
    if all(isinstance(row[7], TermRefs) for row in rows):
        table = _referenced_table(rows)
    elif all(isinstance(row[7], str) and (is_term_text(row[7]) or not row[7]) for row in rows):
        table = _term_table(rows)
    else:
        return (first[0], first[1], first[2], PACKED, last, last, first[6],
                json.dumps([as_text(row) for row in rows]))  # fmt: skip
    return (first[0], first[1], first[2], PACKED_TERMS, last, last, first[6], packed_text(*table))


def as_text(row: ElementRow) -> ElementRow:
    """The row with its triples as text (`TermRefs` made into their term text)."""
    return row if isinstance(row[7], str) else (*row[:7], str(row[7]))  # type: ignore[return-value]


def _term_table(rows: Sequence[ElementRow]) -> list:
    """[terms, positions, rows]: the rows' distinct terms, each term of each row as its
    position among them (row after row, 32-bit integers in base64: read without parsing
    a number each), and the rows without their text but with their numbers of terms
    (`_shapes`). A chunk's
    elements repeat their predicates, sensors, values and (W7) subjects: W7's routed rows
    fall to 0.42 of their size, and a key encodes each distinct term of a chunk once
    instead of every term met."""
    index: dict[str, int] = {}
    positions: list[int] = []
    counts: list[int] = []
    for row in rows:
        terms = row[7].split(TERM_SEPARATOR) if row[7] else []
        positions += [index.setdefault(term, len(index)) for term in terms]
        counts.append(len(terms))
    return [list(index), as_base64(np.array(positions, dtype=np.int32)), _shapes(rows, counts)]


def _referenced_table(rows: Sequence[ElementRow]) -> list:
    """`_term_table` of rows whose triples are `TermRefs` (the route stage's): each row's
    positions gathered from its table, the distinct ones kept, all in numpy
    (`distinct_terms`), no text cut."""
    tables: dict[int, int] = {}
    """Each table's place in `listed`, by its `id`."""
    listed: list[TermTable] = []
    at: list[int] = []
    starts: list[int] = []
    counts: list[int] = []
    for row in rows:
        refs: TermRefs = row[7]  # type: ignore[assignment]
        found = tables.setdefault(id(refs.table), len(listed))
        if found == len(listed):
            listed.append(refs.table)
        at.append(found)
        starts.append(refs.start)
        counts.append(refs.stop - refs.start)
    terms, positions = distinct_terms(listed, np.array(at), np.array(starts), np.array(counts))
    return [terms, as_base64(positions.astype(np.int32)), _shapes(rows, counts)]


def distinct_terms(
    tables: Sequence[TermTable], table: np.ndarray, first: np.ndarray, count: np.ndarray
) -> tuple[list[str], np.ndarray]:
    """The distinct terms of rows whose terms are the slices [first, first + count) of
    the positions of `tables[table]`, and every row's terms, row after row, as positions
    among them: one gather of every row's slice, not an array operation per row (W6's
    route stage spent 4 s of its 54 s of CPU here at 1,000,000 elements)."""
    listed = np.cumsum([0, *(len(t.positions) for t in tables)])
    named = np.cumsum([0, *(len(t.terms) for t in tables)])
    arrays = [np.asarray(t.positions, dtype=np.int64) + named[n] for n, t in enumerate(tables)]
    flat = gathered(arrays, (listed[table] + first).tolist(), count.tolist())
    distinct, inverse = np.unique(flat, return_inverse=True)
    which = np.searchsorted(named, distinct, side="right") - 1
    at = (distinct - named[which]).tolist()
    return [tables[t].terms[i] for t, i in zip(which.tolist(), at, strict=True)], inverse


def packed_text(terms: list[str], positions: str, shapes: list) -> str:
    """A `PACKED_TERMS` row's text: a JSON line [positions, shapes, number of terms], then
    each term on a line of its own. As a JSON list, the terms (canonical N-Triples, a
    literal's quotes each escaped again) were a third of the text's parsing in the key
    (W3's stateful task spent 6% of its time in it); split at line breaks they cost almost
    nothing. N-Triples text holds no line break (it escapes them); terms that do anyway
    are written as a JSON list after the line (number of terms: -1)."""
    lines = "\n".join(terms)
    if lines.count("\n") != len(terms) - 1 and terms:
        return json.dumps([positions, shapes, -1]) + "\n" + json.dumps(terms)
    return json.dumps([positions, shapes, len(terms)]) + "\n" + lines


def unpacked_text(text: str) -> tuple[list[str], str, list]:
    """`packed_text`'s (terms, positions, shapes)."""
    head, _, rest = text.partition("\n")
    positions, shapes, count = json.loads(head)
    if count < 0:
        return json.loads(rest), positions, shapes
    return (rest.split("\n") if count else []), positions, shapes


def as_base64(array: np.ndarray) -> str:
    return base64.b64encode(array.tobytes()).decode("ascii")


def _shapes(rows: Sequence[ElementRow], counts: Sequence[int]) -> list:
    """The rows without their text, as columns: [stream, file, kind] each as its distinct
    values and every row's position among them (a key's rows of a chunk share them), the
    graphs, then seq, start, end and the number of terms as 64-bit integers in base64.
    Listed row by row, with the stream's IRI and the file's path in each, they were half
    of W4's packed rows' JSON (186 of 359 bytes an element), written by the route stage
    and parsed again by the key."""
    shared = []
    for field in (0, 1, 6):
        index: dict[str | int, int] = {}
        at = [index.setdefault(row[field], len(index)) for row in rows]
        shared.append([list(index), as_base64(np.array(at, dtype=np.int32))])
    numbers = [[row[2] for row in rows], [row[4] for row in rows], [row[END] for row in rows]]
    graphs = [row[GRAPH] for row in rows]
    return [shared, graphs, as_base64(np.array([*numbers, counts], dtype=np.int64))]


def packed_columns(
    shared: tuple[str, str, str], graphs: list[str], seq: np.ndarray, times: np.ndarray,
    terms: list[str], positions: np.ndarray, counts: np.ndarray,
) -> ElementRow:
    """`pack`'s row (`PACKED_TERMS`) of elements read as columns (`column_routes`): their
    (stream, file, kind), which they share, each one's graph, seq, time (start and end
    alike: a point in time) and number of terms, and their terms as positions among
    `terms`; made from arrays, no row made first."""
    stream, file, kind = shared
    at = as_base64(np.zeros(len(graphs), dtype=np.int32))
    numbers = as_base64(np.array([seq, times, times, counts], dtype=np.int64))
    shapes = [[[[value], at] for value in shared], graphs, numbers]
    last = int(times.max())
    text = packed_text(terms, as_base64(positions.astype(np.int32)), shapes)
    return (stream, file, int(seq[0]), PACKED_TERMS, last, last, kind, text)


def gathered(
    arrays: Sequence[np.ndarray], starts: Sequence[int], counts: Sequence[int]
) -> np.ndarray:
    """The slices [start, start + count) of the arrays laid end to end, one after another."""
    flat = np.concatenate([np.zeros(0, dtype=np.int64), *arrays])
    lengths = np.array(counts, dtype=np.int64)
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if len(ends) else 0
    return flat[np.repeat(np.array(starts, dtype=np.int64) - ends + lengths, lengths)
                + np.arange(total)]  # fmt: skip


class TermTable:
    """The distinct terms of a packed row (`pack`) and every row's terms as positions in
    them, read once per packed row; a key's session encodes `terms` once
    (`columns.triple_ids`). The route stage's tables (`TermTexts`) list their positions as
    they grow."""

    __slots__ = ("positions", "terms")

    def __init__(self, terms: list[str], positions: np.ndarray | list[int]) -> None:
        self.terms = terms
        self.positions = positions


class TermRefs:
    """An unpacked row's triples as a slice of its packed row's `TermTable`
    (`positions[start:stop]`): term text without making the text. `str` makes it (held
    rows in the state store, the row engine, the reference adapter)."""

    __slots__ = ("start", "stop", "table")

    def __init__(self, table: TermTable, start: int, stop: int) -> None:
        self.table, self.start, self.stop = table, start, stop

    def __str__(self) -> str:
        terms = self.table.terms
        return term_text([terms[i] for i in self.table.positions[self.start : self.stop]])

    def __bool__(self) -> bool:
        return self.stop > self.start


def mark_row(stream: str, end: int, kind: str) -> ElementRow:
    """The row telling a key that `stream` has an element ending at `end` (`MARK_GRAPH`)."""
    return (stream, "", 0, MARK_GRAPH, end, end, kind, "")


TERM_SEPARATOR = "\x1f"
"""Joins the terms of a row's term text: N-Triples writes this character escaped, so no
N-Triples document holds it and a row's text says which form it is in."""


def term_text(terms: Sequence[str]) -> str:
    """An element's triples as term text: the N-Triples of its terms, s p o of each triple
    in turn."""
    return TERM_SEPARATOR.join(terms)


def is_term_text(text: str) -> bool:
    return TERM_SEPARATOR in text


def ntriples(text: str) -> str:
    """A row's triples as an N-Triples document, whichever form the row holds them in."""
    if not is_term_text(text):
        return text
    terms = text.split(TERM_SEPARATOR)
    return "\n".join(f"{s} {p} {o} ." for s, p, o in zip(*[iter(terms)] * 3, strict=True))


def to_element(row: Sequence) -> StreamElement:
    """The StreamElement an element row stands for."""
    stream, _, _, graph, start, end, kind, held = row[:8]
    text = str(held)
    document = ntriples(text)
    triples = (
        tuple(q.triple for q in ox.parse(document, format=ox.RdfFormat.N_TRIPLES)) if text else ()
    )
    return StreamElement(stream, graph, int(start), int(end), triples, TimeKind(kind))


def arrival_order(row: Sequence) -> tuple[int, str, int]:
    """Elements in time order; equal times in the order their files and positions give."""
    return (int(row[END]), row[1], int(row[2]))


def streams_of(rows: Iterable[Sequence], iris: Iterable[str]) -> dict[str, list[StreamElement]]:
    """Element rows as the reference evaluator's input: stream IRI -> elements in order."""
    streams: dict[str, list[StreamElement]] = {iri: [] for iri in iris}
    for row in sorted(rows, key=arrival_order):
        streams.setdefault(row[0], []).append(to_element(row))
    return streams
