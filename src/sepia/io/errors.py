"""Input errors that say where they are: file, line, element and reason."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input data, located by file and line so a person can go and fix it."""

    hint = "fix the input at that line, or skip bad elements with --on-error skip"

    def __init__(self, file: str, line: int, reason: str) -> None:
        self.file = file
        self.line = line
        self.reason = reason
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


class StreamError(InputError):
    """A rejected part of a stream file; `element` is the graph it concerns, when known."""

    def __init__(self, file: str, line: int, element: str | None, reason: str) -> None:
        self.element = element
        super().__init__(file, line, reason)

    def __str__(self) -> str:
        if self.element is None:
            return f"{self.file}:{self.line}: {self.reason}"
        shown = self.element if self.element.startswith("_:") else f"<{self.element}>"
        return f"{self.file}:{self.line}: element {shown}: {self.reason}"

    def __reduce__(self) -> tuple[type[StreamError], tuple[str, int, str | None, str]]:
        """Picklable with its fields (Spark ships errors between processes)."""
        return (StreamError, (self.file, self.line, self.element, self.reason))
