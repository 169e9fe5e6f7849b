"""TriG cut at top-level statements, so a chunk parses alone and an error stays local.

A top-level TriG statement is a directive, a graph block `label { ... }`, or a triple
statement ending in `.`. The regular expressions below recognise them without parsing terms:
they skip strings, IRIs and comments (where braces and dots mean nothing) and follow the
Turtle lexer's rule that a `.` followed by a name character continues a name or a number.
They only find boundaries; pyoxigraph still checks every statement. Most blocks never need
them: a block cut after its last line ending in `.` or `}` parses as it is (`last_line_end`);
the scanner runs only when that parse fails.

After a syntax error the reader resumes at the next line, indented no deeper than the bad
statement, where a whole statement starts: the bad text in between goes to the dead-letter
file verbatim, and every good element after it is still read.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Generator, Iterator
from typing import BinaryIO, NamedTuple

import pyoxigraph as ox

from sepia.io.chunks import (
    BLOCK_SIZE,
    MAX_ELEMENT_SIZE,
    SAMPLE,
    TERM_LIMIT,
    TERM_TOO_LONG,
    Broken,
    Chunk,
    GraphLabel,
    Parsed,
    syntax_message,
    too_long,
)

_WS = rb"[ \t\r\n]"
_NAME_CHAR = rb"A-Za-z0-9_\-:%\\.\x80-\xff"
_IRI = rb"<[^<>\"{}|^`\\\x00-\x20]*>"
_STRING = (
    rb'"(?!"")(?:[^"\\\n\r]++|\\.)*+"|"""(?:[^"\\]++|\\.|"(?!""))*+"""'
    rb"|'(?!'')(?:[^'\\\n\r]++|\\.)*+'|'''(?:[^'\\]++|\\.|'(?!''))*+'''"
)
_COMMENT = rb"#[^\n]*\n"
_TOKEN = rb"|" + _IRI + rb"|" + _STRING + rb"|" + _COMMENT + rb"|<|\\."
_SPACE = rb"(?:" + _WS + rb"++|" + _COMMENT + rb")*+"
_BODY = rb"(?:[^{}\"'#<\\]++" + _TOKEN + rb")*+"
_TRIPLES_BODY = rb"(?:[^{}\"'#<\\.]++" + _TOKEN + rb"|\.(?=[" + _NAME_CHAR + rb"]))*+"
_TRIPLES = _TRIPLES_BODY + rb"\.(?=[^" + _NAME_CHAR + rb"])"
_LABEL = rb"(?:" + _IRI + rb"|\[" + _WS + rb"*\]|[^ \t\r\n{}<>\"'#\[\]()]+)"
_BLOCK = rb"(?:(?i:GRAPH)" + _WS + rb"+)?(?:" + _LABEL + _WS + rb"*)?\{" + _BODY + rb"\}"
_DIRECTIVE = (
    rb"(?i:PREFIX)" + _WS + rb"+[^ \t\r\n:]*:" + _WS + rb"*" + _IRI
    + rb"|(?i:BASE)" + _WS + rb"*" + _IRI
)
_STATEMENT = rb"(?>" + _DIRECTIVE + rb"|" + _BLOCK + rb"|" + _TRIPLES + rb")"
# an unfinished token at the very end of the buffer: more data may complete it
_OPEN_TAIL = (
    rb'(?:"""(?:[^"\\]++|\\.|"(?!""))*+\\?"{0,2}|"(?:[^"\\\n\r]++|\\.)*+\\?'
    rb"|'''(?:[^'\\]++|\\.|'(?!''))*+\\?'{0,2}|'(?:[^'\\\n\r]++|\\.)*+\\?|#[^\n]*|\\)?"
)
_OPEN_BODY = rb"(?:[^{}\"'#<\\]++" + _TOKEN + rb")*+" + _OPEN_TAIL

STATEMENTS = re.compile(rb"(?:" + _SPACE + _STATEMENT + rb")*+")
ONE_STATEMENT = re.compile(_SPACE + rb"(" + _STATEMENT + rb")")
SPACE_ONLY = re.compile(_SPACE + rb"(?:#[^\n]*)?")
UNFINISHED = re.compile(_SPACE + rb"(?:" + _OPEN_BODY + rb"(?:\{" + _OPEN_BODY + rb")?)?")
NEXT_START = re.compile(rb"\n(?=[^ \t\r\n#}])")  # a line that may start a statement
LABEL = re.compile(_SPACE + rb"(?:(?i:GRAPH)" + _WS + rb"+)?(" + _LABEL + rb")")
_SPACE_RE = re.compile(_SPACE)
_INDENT = re.compile(rb"[ \t]*")


def _end(pattern: re.Pattern[bytes], text: bytes, position: int = 0) -> int:
    """Where ``pattern``, which matches the empty string, stops matching from ``position``."""
    match = pattern.match(text, position)
    assert match is not None  # it matches the empty string
    return match.end()


def trig_pieces(
    stream: BinaryIO, max_statement: int = MAX_ELEMENT_SIZE
) -> Iterator[Parsed | Broken]:
    """Parsed chunks of whole statements and broken pieces, in file order.

    A statement longer than a block is not looked for again at every block (quadratic in
    its length): once the text read cannot be cut, it is looked at again when it has doubled
    (or when the input pauses, so live input is never held back). Blocks are no longer than
    `max_statement`, so only text that waited for a long statement can hold one too long."""
    state = _TrigState()
    buffer = b""
    stalled = 0  # the buffer's size when it last could not be cut
    at_end = False
    block_size = min(BLOCK_SIZE, max_statement)
    while True:
        if not at_end:
            until = min(2 * stalled, max_statement)
            buffer, at_end = _read_on(stream, buffer, until, block_size)
        if state.skipping:
            buffer = state.skip(buffer)
            if at_end and not buffer:
                return
            continue
        size = len(buffer)
        cut = len(buffer) if at_end else last_line_end(buffer)
        parsed = state.try_parse(buffer[:cut]) if 0 < cut <= max_statement else None
        if parsed is not None:  # the fast path: one parse, no scanning
            yield from parsed
            buffer = buffer[cut:]
        else:
            buffer = yield from _scan(state, buffer, at_end, max_statement)
        if at_end and not buffer:
            return
        stalled = size if len(buffer) == size else 0


def _read_on(
    stream: BinaryIO, buffer: bytes, until: int, block_size: int
) -> tuple[bytes, bool]:
    """The buffer with one more block, or blocks until it reaches `until` bytes (or the
    input pauses: a short read); and whether the input has ended."""
    blocks = [buffer]
    size = len(buffer)
    while True:
        block = stream.read(block_size)
        if not block:  # a final newline lets the last `.` be seen as an end
            return b"".join(blocks) + b"\n", True
        blocks.append(block)
        size += len(block)
        if size >= until or len(block) < block_size:
            return b"".join(blocks), False


def _scan(
    state: _TrigState, buffer: bytes, at_end: bool, max_statement: int
) -> Generator[Parsed | Broken, None, bytes]:
    """The careful path: whole statements found by the scanner, then a bad statement set
    aside up to where reading can resume. Returns what is left for the next round."""
    end = _end(STATEMENTS, buffer)
    if end:
        yield from _parse_bounded(state, buffer[:end], max_statement)
        buffer = buffer[end:]
    if SPACE_ONLY.fullmatch(buffer):
        return b"" if at_end else buffer
    may_grow = not at_end and len(buffer) < max_statement
    if not at_end and UNFINISHED.fullmatch(buffer):
        if may_grow:
            return buffer  # a statement longer than what was read so far
        yield state.oversized(buffer, max_statement, cut_off=True)
        return b""
    cut = resume_point(buffer)
    if cut is None and may_grow:
        return buffer
    cut = cut or len(buffer)
    yield from state.broken(buffer[:cut])
    return buffer[cut:]


def _parse_bounded(
    state: _TrigState, text: bytes, limit: int
) -> Iterator[Parsed | Broken]:
    """Whole statements parsed, except those longer than `limit`, which are rejected."""
    start = 0
    if len(text) > limit:
        for match in statements(text):
            if match.end(1) - match.start(1) > limit:
                if match.start(1) > start:
                    yield from state.parse(text[start:match.start(1)])
                yield state.oversized(match.group(1), limit, cut_off=False)
                start = match.end(1)
    if start < len(text):
        yield from state.parse(text[start:])


def last_line_end(text: bytes) -> int:
    """Just after the last line that ends in `.` or `}`: likely a statement boundary.

    If it is not one, the text before it is an unfinished statement (a graph block, a
    long string or brackets left open), which pyoxigraph rejects: the caller then cuts
    with the scanner. So a cut here is only kept when it was a true boundary.
    """
    newline = text.rfind(b"\n")
    while newline > 0:
        tail = text[max(newline - 16, 0):newline].rstrip(b" \t\r")
        if tail.endswith((b".", b"}")):
            return newline + 1
        newline = text.rfind(b"\n", 0, newline)
    return 0


def resume_point(text: bytes) -> int | None:
    """Start of the first later line, indented no deeper than the bad statement, that
    begins a whole statement; None if there is none in `text`."""
    start = _end(_SPACE_RE, text)
    indent = start - (text.rfind(b"\n", 0, start) + 1)
    newline = text.find(b"\n", start)
    while newline != -1:
        line = newline + 1
        first = _end(_INDENT, text, line)
        starts = text[first:first + 1] not in (b"", b"\n", b"\r", b"#")
        if first - line <= indent and starts and ONE_STATEMENT.match(text, first):
            return line
        newline = text.find(b"\n", line)
    return None


class _Bad(NamedTuple):
    """A statement pyoxigraph rejected, before its label is resolved."""

    line: int
    text: bytes
    message: str


class _TrigState:
    """Where the reader is (line) and which prefixes and base are in force (header)."""

    def __init__(self) -> None:
        self.line = 1
        self.header = b""
        self.skipping = False  # inside an oversized statement, skipped up to a line start

    def oversized(self, text: bytes, limit: int, *, cut_off: bool) -> Broken:
        """A statement too long to hold, rejected; if `text` is only its start (`cut_off`),
        the rest of it is skipped as it comes."""
        start = _end(_SPACE_RE, text)
        self.line += text.count(b"\n", 0, start)
        self.skipping = cut_off
        broken = Broken(self.line, text[start:start + SAMPLE] + b" ...", too_long(limit),
                        self.label(text[start:start + SAMPLE]))
        self.line += text.count(b"\n", start)
        return broken

    def skip(self, text: bytes) -> bytes:
        """The rest of an oversized statement dropped, up to a line that may start one."""
        found = NEXT_START.search(text)
        if found is None:
            kept = b"\n" if text.endswith(b"\n") else b""  # the next byte starts a line
            self.line += text.count(b"\n") - len(kept)
            return kept
        self.line += text.count(b"\n", 0, found.start() + 1)
        self.skipping = False
        return text[found.start() + 1:]

    def parse(self, text: bytes) -> Iterator[Parsed | Broken]:
        """Whole statements: one pyoxigraph call; on an error, split around the bad one."""
        queue: deque[bytes | _Bad] = deque([text])
        while queue:
            item = queue.popleft()
            if isinstance(item, _Bad):
                # labels resolve with the prefixes of the text before, so only now
                yield Broken(item.line, item.text, item.message, self.label(item.text))
                self.line += item.text.count(b"\n")
                continue
            try:
                yield from self.parse_whole(item)
            except SyntaxError as error:
                queue.extendleft(reversed(self._split_at(item, error)))

    def try_parse(self, text: bytes) -> list[Parsed] | None:
        """Text parsed in one call, or None (and no change) if it does not parse."""
        try:
            return self.parse_whole(text)
        except SyntaxError:
            return None

    def parse_whole(self, text: bytes) -> list[Parsed]:
        """Text parsed in one call; a SyntaxError leaves the state as it was."""
        parser = ox.parse(self.header + text, format=ox.RdfFormat.TRIG)
        try:
            quads = list(parser)
        except MemoryError:  # a term past pyoxigraph's limit
            raise self._term_too_long(text) from None
        chunk = Chunk(text, self.line, self.header, trig_quad_lines)
        self.header = header_of(parser)
        self.line += text.count(b"\n")
        return [Parsed(chunk, quads, 0)] if quads else []

    def _term_too_long(self, text: bytes) -> SyntaxError:
        """The error pyoxigraph gives no place for, placed at the first statement that is
        long enough to hold such a term."""
        long = (m.start(1) for m in statements(text) if m.end(1) - m.start(1) > TERM_LIMIT)
        start = next(long, 0)
        row = text.count(b"\n", 0, start)
        column = start - (text.rfind(b"\n", 0, start) + 1) + (len(self.header) if row == 0 else 0)
        return SyntaxError(TERM_TOO_LONG, (None, row + 1, column + 1, None, row + 1, column + 1))

    def _split_at(self, text: bytes, error: SyntaxError) -> list[bytes | _Bad]:
        """[text before the bad statement, the bad statement, text after it]."""
        offset = self._error_offset(text, error)
        start, end = 0, len(text)
        for match in statements(text):
            if match.start(1) > offset:
                break
            start, end = match.start(1), match.end(1)
        # a line of garbage has no `.` of its own: the scanner runs it into the next
        # statement; resume there, so that statement (often a time) is not lost with it
        resume = resume_point(text[start:end] + b"\n")  # the last `.` needs a character after it
        if resume is not None and offset < start + resume < end:
            end = start + resume
        line = self.line + text.count(b"\n", 0, start)
        error_line = self.line + (error.lineno or 1) - 1
        statement = text[start:end]
        bad = _Bad(_within(error_line, line, statement), statement, syntax_message(error))
        parts: list[bytes | _Bad] = [text[:start], bad, text[end:]]
        return [part for part in parts if not isinstance(part, bytes) or part]

    def _error_offset(self, text: bytes, error: SyntaxError) -> int:
        """Byte offset in `text` of the error (the header shares the chunk's first line)."""
        row = (error.lineno or 1) - 1
        column = max((error.offset or 1) - 1, 0)
        if row == 0:
            return max(column - len(self.header), 0)
        position = 0
        for _ in range(row):
            position = text.find(b"\n", position) + 1
            if position == 0:
                return len(text)
        return position + column

    def broken(self, text: bytes) -> Iterator[Parsed | Broken]:
        """Text the splitter could not cut: pyoxigraph says why (or parses it after all)."""
        try:
            yield from self.parse_whole(text)
        except SyntaxError as error:
            start = _end(_SPACE_RE, text)
            line = self.line + text.count(b"\n", 0, start)
            error_line = self.line + (error.lineno or 1) - 1
            line = _within(error_line, line, text[start:])
            yield Broken(line, text, syntax_message(error), self.label(text))
            self.line += text.count(b"\n")

    def label(self, text: bytes) -> GraphLabel | None:
        """The graph (or subject) a bad statement starts with, resolved with the prefixes."""
        match = LABEL.match(text)
        if match is None or match.group(1).startswith(b"["):
            return None
        probe = self.header + match.group(1) + b" <urn:sepia:probe> <urn:sepia:probe> ."
        try:
            quads = list(ox.parse(probe, format=ox.RdfFormat.TRIG))
        except SyntaxError:
            return None
        subject = quads[0].subject if quads else None
        return subject if isinstance(subject, ox.NamedNode | ox.BlankNode) else None


def _within(error_line: int, line: int, text: bytes) -> int:
    """The error's own line if it lies in the bad text (which starts at `line`), else `line`:
    pyoxigraph may only notice a missing `}` at the next statement."""
    last = line + text.rstrip(b" \t\r\n").count(b"\n")
    return error_line if line <= error_line <= last else line


def statements(text: bytes) -> Iterator[re.Match[bytes]]:
    """Each top-level statement of whole-statement text (group 1 is the statement)."""
    return ONE_STATEMENT.finditer(text + b"\n")  # the last `.` needs a character after it


def header_of(parser: ox.QuadParser) -> bytes:
    """The base and prefixes in force after a chunk, as one line of TriG directives."""
    parts = [f"@base <{parser.base_iri}> . "] if parser.base_iri else []
    parts += [f"@prefix {name}: <{iri}> . " for name, iri in parser.prefixes.items()]
    return "".join(parts).encode()


def trig_quad_lines(chunk: Chunk) -> list[int]:
    """Lines of a chunk's quads: each statement parsed alone (only done for error messages)."""
    lines: list[int] = []
    header = chunk.header
    line = chunk.first_line
    position = 0
    for match in statements(chunk.text):
        line += chunk.text.count(b"\n", position, match.start(1))
        position = match.start(1)
        parser = ox.parse(header + match.group(1), format=ox.RdfFormat.TRIG)
        try:
            lines.extend([line] * sum(1 for _ in parser))
        except SyntaxError:  # the scanner cut where pyoxigraph did not: lines are approximate
            continue
        header = header_of(parser)
    return lines
