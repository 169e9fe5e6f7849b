"""Compiled queries (and their static warnings) kept between runs, so that a process
whose queries were compiled before never builds the grammar's lexer (lark compiles a
regular expression per parser state on first use: 0.15-0.3 s of CPU, more than the rest
of a small run's start-up).

A compiled query is a pure function of its text, the options it was compiled with, and
the code that compiled it. The key is all three: the text and options, and a digest of
every source file of the packages that compile a query (``COMPILER``: they import nothing
else of Sepia, a test checks it) with the grammar, and of the versions of Python, lark and
pyoxigraph. Any change to the code, even one that keeps the
version number (an editable install), is a new key, so a stale entry is never read; an
entry that cannot be read (truncated, another format) is compiled again and rewritten.
Queries that fail are not kept: their errors come from the compiler each time.

Entries are pickles under ``$SEPIA_CACHE_DIR`` (default ``$XDG_CACHE_HOME/sepia/queries``,
else ``~/.cache/sepia/queries``), written atomically, at most ``KEEP`` of them (the
oldest go first, ``KEEP // 10`` at a time, so that a folder at the limit is not sorted
at every write); ``SEPIA_CACHE_DIR=off`` turns the cache off, and so does a folder that
cannot be written. Within one process, compiled queries are also kept in memory.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
COMPILER = ("lang", "algebra", "rdf")
"""The packages of ``sepia`` whose code makes a compiled query."""
KEEP = 2000
"""Entries kept on disk; past that, writing one removes the oldest."""
_MEMORY: dict[str, object] = {}


def folder() -> Path | None:
    """Where entries live (None: the cache is off)."""
    chosen = os.environ.get("SEPIA_CACHE_DIR")
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "sepia" / "queries"


@cache
def code_digest() -> str | None:
    """A digest of the code that compiles queries: the source files of ``COMPILER`` and
    the grammar, and the versions of what they call (None: the sources are not files)."""
    import sepia

    root = Path(sepia.__file__).parent
    if not root.is_dir():
        return None
    import pyoxigraph

    lark = find_spec("lark")  # its __init__ holds its version; importing it costs 0.07 s
    if lark is None or lark.origin is None:
        return None
    digest = hashlib.sha256()
    digest.update(f"{sys.version} {pyoxigraph.__version__}".encode())
    digest.update(Path(lark.origin).read_bytes())
    for package in COMPILER:
        for path in sorted((root / package).rglob("*")):
            if path.suffix in (".py", ".lark"):
                digest.update(str(path.relative_to(root)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def compiled(parts: tuple[object, ...], compile_: Callable[[], T]) -> T:
    """The query compiled from ``parts`` (text and options, all with stable ``repr``s):
    from memory, from disk, or by ``compile_`` (then kept)."""
    code = code_digest()
    if code is None:
        return compile_()
    key = hashlib.sha256(repr((code, parts)).encode()).hexdigest()
    found = _MEMORY.get(key)
    if found is not None:
        return found  # type: ignore[return-value]
    where = folder()
    entry = None if where is None else where / f"{key}.pickle"
    if entry is not None and entry.is_file():
        try:
            found = pickle.loads(entry.read_bytes())
        except Exception:  # unreadable: compiled again below, and rewritten
            found = None
    if found is None:
        found = compile_()
        if entry is not None:
            _write(entry, found)
    _MEMORY[key] = found
    return found


def _write(entry: Path, value: object) -> None:
    """Write atomically (a reader sees a whole entry or none); a folder that cannot be
    written leaves the run uncached, never failed."""
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        entry.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with tempfile.NamedTemporaryFile(dir=entry.parent, suffix=".tmp", delete=False) as out:
            out.write(data)
        os.replace(out.name, entry)
        _prune(entry.parent)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        return


def _prune(where: Path) -> None:
    """Past ``KEEP`` entries, remove the oldest down to 90% of it (a test suite or a
    comparison of many queries writes thousands: sorting them at each write cost more
    than compiling)."""
    with os.scandir(where) as found:
        entries = [entry for entry in found if entry.name.endswith(".pickle")]
    if len(entries) > KEEP:
        entries.sort(key=lambda entry: entry.stat().st_mtime)
        for old in entries[: len(entries) - KEEP + KEEP // 10]:
            Path(old.path).unlink(missing_ok=True)
