"""Stream files cut into chunks that pyoxigraph parses on their own, and syntax errors.

A stream file is read in blocks of 64 KiB and cut at statement boundaries (lines
for N-Quads, top-level statements for TriG, see `trig_split`), so each chunk is parsed by
pyoxigraph in one call (fast) while memory stays bounded. The reader yields `Parsed` pieces
(quads of good text) and `Broken` pieces (text with a syntax error, kept verbatim for the
dead-letter file), in file order, so parsing goes on after an error without losing anything.

pyoxigraph gives no position for a quad; a chunk works out the line of its i-th quad only
when an error message needs it (`Chunk.line_of`), which keeps the common path cheap.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

import pyoxigraph as ox

from sepia.rdf.terms import parse_term

BLOCK_SIZE = 1 << 16  # 64 KiB: parsed quads of a block stay in the CPU cache (1 MiB: 40% slower)
MAX_ELEMENT_SIZE = 64 << 20
"""Default bound on the text the reader holds at once: one N-Quads line, one TriG statement
(a graph block with its triples). Longer ones are rejected, so memory stays bounded."""
SAMPLE = 1024  # bytes kept of each end of an oversized text, for its error and dead letter
TERM_LIMIT = 16 << 20
"""pyoxigraph's bound on one token (a literal, an IRI): past it, it raises MemoryError."""
TERM_TOO_LONG = f"a term longer than {TERM_LIMIT} bytes, the RDF parser's limit"
GraphLabel = ox.NamedNode | ox.BlankNode

_POSITION = re.compile(r"^Parser error[^:]*: ")
_NQUADS_LAST_TERM = re.compile(rb'(?<!\^\^)(<[^>]*>|_:[^\s<"]+)\s*\.?\s*$')
_NQUADS_TERM = re.compile(
    rb'\s*(<[^>]*+>|_:[^\s<"]++|"(?:[^"\\]++|\\.)*+"(?:@[A-Za-z0-9-]++|\^\^<[^>]*+>)?)'
)


@dataclass(slots=True)
class Chunk:
    """Text of whole statements, where it starts in the file, and the prefixes in force."""

    text: bytes
    first_line: int
    header: bytes
    quad_lines: Callable[[Chunk], list[int]]
    error_lines: set[int] = field(default_factory=set)
    _lines: list[int] | None = None

    def line_of(self, index: int) -> int:
        """The file line of this chunk's `index`-th quad (worked out on first use)."""
        if self._lines is None:
            self._lines = self.quad_lines(self)
        return self._lines[min(index, len(self._lines) - 1)] if self._lines else self.first_line

    def add_error_line(self, line: int) -> None:
        self.error_lines.add(line)
        self._lines = None


@dataclass(frozen=True, slots=True)
class Parsed:
    """Quads parsed from a chunk; `offset` is the index of the first one within the chunk."""

    chunk: Chunk
    quads: list[ox.Quad]
    offset: int


@dataclass(frozen=True, slots=True)
class Broken:
    """Text that does not parse: where, the original text, why, and whose element it was."""

    line: int
    text: bytes
    message: str
    label: GraphLabel | None


def syntax_message(error: SyntaxError) -> str:
    """pyoxigraph's message without its position (which is relative to the chunk)."""
    return "syntax error: " + _POSITION.sub("", str(error.args[0] if error.args else error))


def too_long(limit: int) -> str:
    return (
        f"longer than the maximum element size ({limit} bytes), so skipped unread; "
        "--max-element-size raises the limit"
    )


@dataclass(slots=True)
class Oversized:
    """A line longer than the limit, skipped as it is read: its size, and its two ends (for
    the error, the dead-letter file, and to tell whose element it was)."""

    head: bytes
    tail: bytes = b""
    size: int = 0

    def add(self, data: bytes) -> None:
        self.size += len(data)
        self.tail = (self.tail + data[-SAMPLE:])[-SAMPLE:]

    @property
    def sample(self) -> bytes:
        return self.head + b" ... " + self.tail


def read_lines_blocks(
    stream: BinaryIO, max_line: int = MAX_ELEMENT_SIZE
) -> Iterator[bytes | Oversized]:
    """The stream in blocks of whole lines (the last one may lack its newline); a line longer
    than `max_line` comes as an `Oversized`. Blocks are no longer than `max_line`, so only
    a line that spans blocks can be too long; its parts are joined once (linear time)."""
    rest: list[bytes] = []  # the unfinished line, in parts
    size = 0
    skipped: Oversized | None = None
    while block := stream.read(min(BLOCK_SIZE, max_line)):
        newline = block.find(b"\n") + 1  # where the line in progress ends in this block
        line_part = block[:newline] if newline else block
        if skipped is None and size + len(line_part) > max_line:
            skipped = Oversized((b"".join(rest) + line_part)[:SAMPLE])
            skipped.add(b"".join(rest))
            rest, size = [], 0
        if skipped is not None:
            skipped.add(line_part)
            if not newline:
                continue
            yield skipped
            skipped, block = None, block[newline:]
        cut = block.rfind(b"\n") + 1
        if not cut:
            rest.append(block)
            size += len(block)
            continue
        yield b"".join(rest) + block[:cut]
        rest, size = [block[cut:]], len(block) - cut
    if skipped is not None:
        yield skipped
    elif size:
        yield b"".join(rest)


def nquads_pieces(
    stream: BinaryIO, max_line: int = MAX_ELEMENT_SIZE
) -> Iterator[Parsed | Broken]:
    """N-Quads: each block of lines is one chunk; a bad line is one `Broken` piece."""
    line = 1
    for text in read_lines_blocks(stream, max_line):
        if isinstance(text, Oversized):
            sample = text.sample
            yield Broken(line, sample, too_long(max_line), _nquads_label(sample))
            line += 1
            continue
        yield from _parse_nquads(Chunk(text, line, b"", _nquads_quad_lines))
        line += text.count(b"\n")


def _parse_nquads(chunk: Chunk) -> Iterator[Parsed | Broken]:
    """One pyoxigraph call per block; a block with an error is redone line by line."""
    try:
        quads = list(ox.parse(chunk.text, format=ox.RdfFormat.N_QUADS))
    except (SyntaxError, MemoryError):  # MemoryError: a term past TERM_LIMIT
        yield from _parse_nquads_lines(chunk)
        return
    if quads:
        yield Parsed(chunk, quads, 0)


def _parse_nquads_lines(chunk: Chunk) -> Iterator[Parsed | Broken]:
    """Each line alone, so an error has its exact line and cannot spill into the next
    (pyoxigraph's own recovery can lose the lines after an unterminated string)."""
    run: list[ox.Quad] = []
    count = 0
    for number, line in enumerate(chunk.text.split(b"\n"), start=chunk.first_line):
        stripped = line.strip()
        if not stripped or stripped.startswith(b"#"):
            continue
        try:
            quads = list(ox.parse(line, format=ox.RdfFormat.N_QUADS))
        except (SyntaxError, MemoryError) as error:
            if run:
                yield Parsed(chunk, run, count - len(run))
                run = []
            chunk.add_error_line(number)
            message = syntax_message(error) if isinstance(error, SyntaxError) else (
                "syntax error: " + TERM_TOO_LONG
            )
            yield Broken(number, line + b"\n", message, _nquads_label(line))
            continue
        run.extend(quads)
        count += len(quads)
    if run:
        yield Parsed(chunk, run, count - len(run))


def _nquads_label(line: bytes) -> GraphLabel | None:
    """The element a bad N-Quads line belongs to, as far as it can be read: its 4th term,
    the subject of a 3-term (time) line, else a last IRI that is not a datatype."""
    terms: list[bytes] = []
    position = 0
    while len(terms) < 4 and (match := _NQUADS_TERM.match(line, position)):
        terms.append(match.group(1))
        position = match.end()
    if len(terms) >= 3:
        label = terms[3] if len(terms) == 4 else terms[0]
    elif tail := _NQUADS_LAST_TERM.search(line):
        label = tail.group(1)
    else:
        return None
    try:
        term = parse_term(label.decode("utf-8", "replace"))
    except ValueError:
        return None
    return term if isinstance(term, ox.NamedNode | ox.BlankNode) else None


def _nquads_quad_lines(chunk: Chunk) -> list[int]:
    """Every line gives one quad except blank lines, comment lines and lines in error."""
    lines = []
    for number, text in enumerate(chunk.text.split(b"\n"), start=chunk.first_line):
        stripped = text.strip()
        if stripped and not stripped.startswith(b"#") and number not in chunk.error_lines:
            lines.append(number)
    return lines
