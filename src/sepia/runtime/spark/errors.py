"""Spark's errors in one line for a person: what failed and where, not the JVM's stack.

A failed streaming query carries the whole story in its message: the error class
(`[STREAM_FAILED]`, `[CONFLICTING_DIRECTORY_STRUCTURES]`), the stage that failed and, when a
Python worker raised, that worker's traceback. The line a user needs is the innermost one:
a bad element's place (`IngestError: FILE line N: ...`), else the last Python error a worker
raised, else the first line of the message, with its error class.
"""

from __future__ import annotations

import re

INGEST = re.compile(r"IngestError: (.*)")
PYTHON = re.compile(r"^\s*(?:[\w.]+\.)?(\w*(?:Error|Exception|Exit)): (.+)$", re.MULTILINE)
CLASS = re.compile(r"\[([A-Z][A-Z0-9_]+(?:\.[A-Z0-9_]+)*)\]")
NOISE = re.compile(r"\s*(?:SQLSTATE: \w+|JVM stacktrace:.*)$")
TRANSIENT = (
    "Python worker failed to connect back",
    "Timed out while waiting for the Python worker",
    "Python worker exited unexpectedly",
)
"""Failures of the machine, not of the job: the same batch run again succeeds. Spark waits a
fixed 10 s for a Python worker it starts (the driver-side worker of transformWithState
too): on a loaded machine a worker can miss it."""


def transient(message: str) -> bool:
    """Whether a failed query's message says it failed for a transient reason (a bad
    element never is)."""
    return not INGEST.search(message) and any(cause in message for cause in TRANSIENT)


def one_line(message: str) -> str:
    """The line of a Spark error message that says what went wrong (see the module)."""
    found = INGEST.search(message)
    if found:
        return found.group(1).strip()
    raised = [m for m in PYTHON.finditer(message) if m.group(1) != "PythonException"]
    if raised:
        name, text = raised[-1].groups()
        return f"{name}: {text.strip()}"
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    first = NOISE.sub("", lines[0]) if lines else "Spark failed without a message"
    if not CLASS.search(first):
        named = CLASS.search(message)
        if named:
            first = f"[{named.group(1)}] {first}"
    return first
