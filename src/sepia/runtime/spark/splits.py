"""Large stream files cut into pieces at element boundaries, so several tasks parse one file.

Spark's file source hands a file to one task, so one core would parse a whole stream file.
A file larger than `PIECE_BYTES` is cut at about equal byte offsets, each moved forward to
the next *element boundary*: a line where the time statement of an element starts right
after the last triple of another element (the layout io.md describes first and `sepia
generate` writes: each element's time statement, then its graph). A cut is only made where
the `WINDOW` bytes after the offset show that layout throughout (TriG: one statement per
line; N-Quads: the default graph holds time statements only); a file laid out otherwise
(time statements after their graph, all at the top, multi-line TriG blocks) is read whole
by one task, as before. Compressed files are never cut.

A TriG piece is read with the directives (`@prefix`, `PREFIX`, `@base`, `BASE`) found
before it, in file order, so it parses alone. Each piece's elements carry `seq` numbers
that follow file order across pieces, and errors name the file and the file's line.
What a piece cannot see: the reader's time-order and lateness checks work within a piece,
so an element out of order across a cut is ordered by the job (it sorts each key's
elements by time) rather than rejected.
"""

from __future__ import annotations

import io
import mmap
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import pyarrow as pa

PIECE_BYTES = 4 << 20
"""Files at most this large are read whole; larger ones in pieces of at least this size."""
WINDOW = 1 << 16
"""Bytes after a cut offset checked for the element layout (and where the cut is sought)."""
SEQ_STRIDE = 1 << 32
"""A piece's `seq` numbers start at its index times this: file order across pieces."""

PIECE_SCHEMA = pa.schema(
    [("stream", pa.string()), ("path", pa.string()), ("piece", pa.int64()),
     ("begin", pa.int64()), ("end", pa.int64()), ("header", pa.binary())]
)  # fmt: skip
PIECE_DDL = "stream string, path string, piece bigint, begin bigint, end bigint, header binary"

_TIME = rb"(?:generatedAtTime|startedAtTime|endedAtTime)"
_NQ_TIME = re.compile(rb"^(\S+)\s+<http://www\.w3\.org/ns/prov#" + _TIME + rb">\s")
_NQ_GRAPH = re.compile(rb'(?<!\^\^)(<[^>]*>|_:[^\s<"]+)\s*\.\s*$')
_PROV = rb"(?:prov:|<http://www\.w3\.org/ns/prov#)"
_TRIG_TIME = re.compile(rb"^(\S+)\s+" + _PROV + _TIME + rb">?\s.*\.\s*$")
_TRIG_BLOCK = re.compile(rb"^(?:GRAPH\s+)?([^\s{]+)\s*\{.*\}\s*$")
_DIRECTIVE = re.compile(rb"(?im)^[ \t]*(?:@prefix|@base|prefix|base)\b[^\n]*\n")


@dataclass(frozen=True, slots=True)
class Piece:
    """Bytes [begin, end) of a stream file, read after `header` (a TriG piece's directives)."""

    index: int
    begin: int
    end: int
    header: bytes = b""


def pieces(path: Path, count: int) -> list[Piece]:
    """`path` cut into at most `count` pieces at element boundaries (one piece: whole)."""
    size = path.stat().st_size
    trig = path.suffix == ".trig"
    if path.suffix not in (".trig", ".nq", ".nquads") or count < 2 or size <= PIECE_BYTES:
        return [Piece(0, 0, size)]
    count = min(count, size // PIECE_BYTES)
    with path.open("rb") as handle:
        cuts = [_cut(handle, size * k // count, trig) for k in range(1, count)]
    bounds = sorted({0, size, *(c for c in cuts if c is not None)})
    headers = _directives(path, bounds[1:-1]) if trig else [b""] * (len(bounds) - 2)
    return [
        Piece(n, begin, end, b"" if n == 0 else headers[n - 1])
        for n, (begin, end) in enumerate(pairwise(bounds))
    ]


def _cut(handle: io.BufferedReader, offset: int, trig: bool) -> int | None:
    """The first element boundary at or after `offset`, if the window there shows the
    element layout throughout (else None: no cut near it)."""
    handle.seek(offset)
    window = handle.read(WINDOW)
    start = window.find(b"\n") + 1
    end = window.rfind(b"\n") + 1
    if start <= 0 or end <= start:
        return None
    lines = window[start:end].split(b"\n")[:-1]
    kinds = [_kind(line, trig) for line in lines]
    if any(k == ("?", b"") for k in kinds) or not _laid_out(k for k in kinds if k[0] != ""):
        return None
    position, previous = offset + start, None
    for line, kind in zip(lines, kinds, strict=True):
        if kind[0] == "time" and previous is not None and previous[0] == "body" \
                and previous[1] != kind[1]:  # fmt: skip
            return position
        if kind[0]:
            previous = kind
        position += len(line) + 1
    return None


def _kind(line: bytes, trig: bool) -> tuple[str, bytes]:
    """("time", graph), ("body", graph), ("", b"") for a line that says nothing of elements
    (blank, comment, directive), ("?", b"") for any other line."""
    text = line.strip()
    if not text or text.startswith(b"#") or _DIRECTIVE.match(text + b"\n"):
        return "", b""
    if trig:
        time = _TRIG_TIME.match(text)
        if time:
            return "time", time.group(1)
        block = _TRIG_BLOCK.match(text)
        return ("body", block.group(1)) if block else ("?", b"")
    graph = _NQ_GRAPH.search(text)
    if graph:
        return "body", graph.group(1)
    time = _NQ_TIME.match(text)
    return ("time", time.group(1)) if time else ("?", b"")


def _laid_out(kinds: Iterable[tuple[str, bytes]]) -> bool:
    """Whether the lines are elements each given as its time statements, then its triples
    (the first may be the tail of an element, the last its head)."""
    items = list(kinds)
    n = 0
    while n < len(items) and items[n] == ("body", items[0][1]):
        n += 1
    while n < len(items):
        kind, graph = items[n]
        if kind != "time":
            return False
        while n < len(items) and items[n] == ("time", graph):
            n += 1
        if n < len(items) and items[n] != ("body", graph):
            return False
        while n < len(items) and items[n] == ("body", graph):
            n += 1
    return True


_DIRECTIVE_START = re.compile(rb"\n[ \t]*[@pPbB]")
"""A line that may hold a directive (`_DIRECTIVE`): its first character past blanks."""


def _directives(path: Path, cuts: list[int]) -> list[bytes]:
    """For each cut (a line start), the directive lines of the file before it, in order."""
    if not cuts:
        return []
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as text:
        lines = directive_lines(text, cuts[-1])
    return [b"".join(line for start, line in lines if start < cut) for cut in cuts]


def directive_lines(text: bytes | mmap.mmap, end: int) -> list[tuple[int, bytes]]:
    """The lines of `text[:end]` that `_DIRECTIVE` matches, with their offsets, in order.
    Only lines whose first character past blanks can begin a directive are matched: a
    search for a newline and that character runs at memory speed over the mapped file,
    where `_DIRECTIVE` run over the text read (case-insensitive, tried at every line) took
    3.6 s for one of W7's 800 MB files at 1,000,000 elements, which hold two directives at
    their top."""
    starts = [0, *(match.start() + 1 for match in _DIRECTIVE_START.finditer(text, 0, end))]
    matches = (_DIRECTIVE.match(text, start, end) for start in starts)
    return [(match.start(), match.group(0)) for match in matches if match]


def split_files(batches: Iterable[pa.RecordBatch], count: int) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: (stream, path) rows in, one row per piece of each file out."""
    for batch in batches:
        files = zip(
            batch.column("stream").to_pylist(), batch.column("path").to_pylist(), strict=True
        )
        rows = [
            {"stream": stream, "path": uri, "piece": piece.index, "begin": piece.begin,
             "end": piece.end, "header": piece.header}
            for stream, uri in files
            for piece in pieces(local_path(uri), count)
        ]  # fmt: skip
        if rows:
            yield pa.RecordBatch.from_pylist(rows, schema=PIECE_SCHEMA)


def local_path(uri: str) -> Path:
    """Spark names files as URIs; workers open them as local (or commonly mounted) paths."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme in ("file", "") else Path(uri)


class PieceReader(io.RawIOBase):
    """A piece's bytes as a binary file: its header, then the file's bytes [begin, end)."""

    def __init__(self, path: Path, piece: Piece) -> None:
        self.handle = path.open("rb")
        self.handle.seek(piece.begin)
        self.header = piece.header
        self.left = piece.end - piece.begin

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        view = memoryview(buffer).cast("B")
        if self.header:
            n = min(len(view), len(self.header))
            view[:n], self.header = self.header[:n], self.header[n:]
            return n
        data = self.handle.read(min(len(view), self.left))
        self.left -= len(data)
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.handle.close()
        super().close()


def lines_before(path: Path, piece: Piece) -> int:
    """How many lines of the file come before the piece, less its header's: added to a line
    number within the piece, it gives the file's line (read only when an error is shown)."""
    if piece.begin == 0:
        return 0
    with path.open("rb") as handle:
        count = 0
        left = piece.begin
        while left and (block := handle.read(min(left, 1 << 20))):
            count += block.count(b"\n")
            left -= len(block)
    return count - piece.header.count(b"\n")
