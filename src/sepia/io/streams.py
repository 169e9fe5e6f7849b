"""Reading RDF stream files (TriG or N-Quads, plain or gzip) as stream elements.

`read_stream` yields `StreamElement`s; `read_stream_rows` yields one flat row per triple
for the Spark pipeline. Both run the same reader: chunks parsed by pyoxigraph
(`chunks`, `trig_split`), then assembled into time-ordered elements (`assembly`).

Errors: with `on_error="stop"` the first bad element raises `StreamError`; with "skip" each
error goes to the `errors` callback, the rejected text goes to the `dead_letter` file
(after a `#` comment line giving the error), and reading goes on. Damaged gzip data ends
the file where it breaks off, with an error saying so: it reads like the text cut there.
A TriG statement or N-Quads line longer than `max_element_size` bytes is an error too, and
is skipped without being held in memory; reading takes time linear in the longest one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, Literal

import pyoxigraph as ox

from sepia.io.assembly import Assembled, Assembler, graph_name
from sepia.io.chunks import MAX_ELEMENT_SIZE, Broken, Parsed, nquads_pieces
from sepia.io.errors import StreamError
from sepia.io.sources import Source, damage_of, display_name, open_binary, stream_format
from sepia.io.trig_split import trig_pieces
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind

OnError = Literal["stop", "skip"]
Row = tuple[str, int, int, str, str, str]


class StreamReader:
    """One stream file read as one stream; `time_kind` is known once an element is read."""

    def __init__(
        self,
        source: Source,
        stream: str,
        *,
        name: str | None = None,
        fmt: str | None = None,
        on_error: OnError = "stop",
        errors: Callable[[StreamError], None] | None = None,
        dead_letter: Path | None = None,
        allowed_lateness: int = 0,
        max_element_size: int = MAX_ELEMENT_SIZE,
    ) -> None:
        if on_error not in ("stop", "skip"):
            raise ValueError(f"on_error must be 'stop' or 'skip', not {on_error!r}")
        if on_error == "skip" and errors is None and dead_letter is None:
            raise ValueError("on_error='skip' needs errors= or dead_letter=, or errors vanish")
        self.source = source
        self.stream = stream
        self.file = display_name(source, name)
        self.syntax = stream_format(self.file, fmt)
        self.on_error = on_error
        self.errors = errors
        self.dead_letter = dead_letter
        self.allowed_lateness = allowed_lateness
        if max_element_size < 1:
            raise ValueError("the maximum element size must be at least 1 byte")
        self.max_element_size = max_element_size
        self._assembler = Assembler(self.file, allowed_lateness, self._reject)
        self._dead: BinaryIO | None = None
        self._binary: BinaryIO | None = None
        self._damage_reported = False

    @property
    def time_kind(self) -> TimeKind | None:
        """Integer or dateTime time, as fixed by the first accepted element."""
        return self._assembler.kind

    def elements(self) -> Iterator[StreamElement]:
        """The accepted elements, in time order."""
        stream = self.stream
        for graph, start, end, quads in self.assembled():
            triples = tuple([quad.triple for quad in quads])
            kind = self._assembler.kind or TimeKind.ABSTRACT  # set by the first element
            yield StreamElement(stream, graph_name(graph), start, end, triples, kind)

    def rows(self) -> Iterator[Row]:
        """(graph, start, end, s, p, o) per triple, terms in N-Triples text, in time order."""
        for graph, start, end, quads in self.assembled():
            name = graph_name(graph)
            for quad in quads:
                yield name, start, end, str(quad.subject), str(quad.predicate), str(quad.object)

    def assembled(self) -> Iterator[Assembled]:
        """The shared path of `elements` and `rows`: pieces in, complete elements out.

        Each call reads the source again from where it is (a path: from the start)."""
        pieces = trig_pieces if self.syntax is ox.RdfFormat.TRIG else nquads_pieces
        self._assembler = assembler = Assembler(self.file, self.allowed_lateness, self._reject)
        self._damage_reported = False
        ready = assembler.ready
        try:
            with open_binary(self.source, ends_at_damage=True) as binary:
                self._binary = binary
                for piece in pieces(binary, self.max_element_size):
                    assembler.feed(piece)
                    if ready:
                        yield from ready
                        ready.clear()
                self._report_damage()
            assembler.finish()
            yield from ready
            ready.clear()
        finally:
            self._binary = None
            if self._dead is not None:
                self._dead.close()
                self._dead = None

    def _report_damage(self) -> None:
        """Damaged gzip data ended the file early: say where, once, before the errors it
        causes (the text cut short there is a syntax error, an element may miss its time)."""
        damage = damage_of(self._binary) if self._binary is not None else None
        if damage is None or self._damage_reported:
            return
        self._damage_reported = True
        self._reject(StreamError(self.file, damage.line, None, damage.reason), b"", True)

    def _reject(self, error: StreamError, text: bytes, report: bool) -> None:
        """Stop, or report the error and keep the rejected text in the dead-letter file."""
        if report:
            self._report_damage()
        if report and self.on_error == "stop":
            raise error
        if report and self.errors is not None:
            self.errors(error)
        if self.dead_letter is not None:
            if self._dead is None:
                self._dead = open(self.dead_letter, "wb")  # noqa: SIM115 - closed in assembled()
            comment = str(error).replace("\n", " ")
            self._dead.write(f"# {comment}\n".encode() + text.strip(b"\r\n") + b"\n\n")


def read_stream(
    source: Source,
    stream: str,
    *,
    name: str | None = None,
    fmt: str | None = None,
    on_error: OnError = "stop",
    errors: Callable[[StreamError], None] | None = None,
    dead_letter: Path | None = None,
    allowed_lateness: int = 0,
    max_element_size: int = MAX_ELEMENT_SIZE,
) -> Iterator[StreamElement]:
    """The elements of stream `stream` read from a TriG or N-Quads file, in time order."""
    reader = StreamReader(
        source, stream, name=name, fmt=fmt, on_error=on_error, errors=errors,
        dead_letter=dead_letter, allowed_lateness=allowed_lateness,
        max_element_size=max_element_size,
    )
    return reader.elements()


def read_stream_rows(
    source: Source,
    stream: str,
    *,
    name: str | None = None,
    fmt: str | None = None,
    on_error: OnError = "stop",
    errors: Callable[[StreamError], None] | None = None,
    dead_letter: Path | None = None,
    allowed_lateness: int = 0,
    max_element_size: int = MAX_ELEMENT_SIZE,
) -> Iterator[Row]:
    """Like `read_stream`, but one (graph, start, end, s, p, o) row per triple."""
    reader = StreamReader(
        source, stream, name=name, fmt=fmt, on_error=on_error, errors=errors,
        dead_letter=dead_letter, allowed_lateness=allowed_lateness,
        max_element_size=max_element_size,
    )
    return reader.rows()


__all__ = [
    "Broken",
    "OnError",
    "Parsed",
    "Row",
    "StreamError",
    "StreamReader",
    "read_stream",
    "read_stream_rows",
]
