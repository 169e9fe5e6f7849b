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

from sepia.io.chunks import BLOCK_SIZE, Broken, Chunk, GraphLabel, Parsed, syntax_message

MAX_STATEMENT = 64 << 20  # a statement longer than this is taken as broken (bounded memory)

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
LABEL = re.compile(_SPACE + rb"(?:(?i:GRAPH)" + _WS + rb"+)?(" + _LABEL + rb")")
_SPACE_RE = re.compile(_SPACE)
_INDENT = re.compile(rb"[ \t]*")


def trig_pieces(stream: BinaryIO) -> Iterator[Parsed | Broken]:
    """Parsed chunks of whole statements and broken pieces, in file order."""
    state = _TrigState()
    buffer = b""
    at_end = False
    while True:
        if not at_end:
            block = stream.read(BLOCK_SIZE)
            at_end = not block
            buffer += block or b"\n"  # a final newline lets the last `.` be seen as an end
        cut = len(buffer) if at_end else last_line_end(buffer)
        parsed = state.try_parse(buffer[:cut]) if cut else None
        if parsed is not None:  # the fast path: one parse, no scanning
            yield from parsed
            buffer = buffer[cut:]
        else:
            buffer = yield from _scan(state, buffer, at_end)
        if at_end and not buffer:
            return


def _scan(
    state: _TrigState, buffer: bytes, at_end: bool
) -> Generator[Parsed | Broken, None, bytes]:
    """The careful path: whole statements found by the scanner, then a bad statement set
    aside up to where reading can resume. Returns what is left for the next round."""
    end = STATEMENTS.match(buffer).end()
    if end:
        yield from state.parse(buffer[:end])
        buffer = buffer[end:]
    if SPACE_ONLY.fullmatch(buffer):
        return b"" if at_end else buffer
    may_grow = not at_end and len(buffer) < MAX_STATEMENT
    if may_grow and UNFINISHED.fullmatch(buffer):
        return buffer  # a statement longer than what was read so far
    cut = resume_point(buffer)
    if cut is None and may_grow:
        return buffer
    cut = cut or len(buffer)
    yield from state.broken(buffer[:cut])
    return buffer[cut:]


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
    start = _SPACE_RE.match(text).end()
    indent = start - (text.rfind(b"\n", 0, start) + 1)
    newline = text.find(b"\n", start)
    while newline != -1:
        line = newline + 1
        first = _INDENT.match(text, line).end()
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
        quads = list(parser)
        chunk = Chunk(text, self.line, self.header, trig_quad_lines)
        self.header = header_of(parser)
        self.line += text.count(b"\n")
        return [Parsed(chunk, quads, 0)] if quads else []

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
            start = _SPACE_RE.match(text).end()
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
