"""Query errors a person can act on: where (line, column), what was found, what was expected,
and the query line with a caret under the offending text (language.md section 8)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A region of the query text; lines and columns count from 1, ``end`` is exclusive."""

    line: int
    column: int
    start: int
    end: int


class QueryError(Exception):
    """A query rejected before any data is read."""

    hint = "fix the query where the caret points, then run again"

    def __init__(
        self,
        message: str,
        text: str,
        span: Span,
        *,
        source: str = "<query>",
        expected: str | None = None,
    ) -> None:
        self.message = message
        self.text = text
        self.span = span
        self.source = source
        self.expected = expected
        super().__init__(self._render())

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    @property
    def offending(self) -> str:
        """The query text the error points at."""
        return self.text[self.span.start : self.span.end]

    def _render(self) -> str:
        lines = self.text.splitlines() or [""]
        query_line = lines[min(self.span.line, len(lines)) - 1]
        width = max(1, min(self.span.end - self.span.start, len(query_line) - self.span.column + 1))
        caret = " " * (self.span.column - 1) + "^" * width
        header = f"{self.source}:{self.span.line}:{self.span.column}: {self.message}"
        if self.expected:
            header += f"; expected {self.expected}"
        gutter = f"{self.span.line} | "
        return f"{header}\n{gutter}{query_line}\n{' ' * len(gutter)}{caret}"


def span_at(text: str, start: int, end: int) -> Span:
    """The span of ``text[start:end]`` with its line and column computed from the offsets."""
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    return Span(line, column, start, max(end, start + 1))
