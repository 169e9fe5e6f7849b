"""Opening input files: paths or binary file objects, plain or gzip, format by extension."""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import BinaryIO

import pyoxigraph as ox

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
STREAM_FORMATS = {
    "trig": ox.RdfFormat.TRIG,
    "nq": ox.RdfFormat.N_QUADS,
    "nquads": ox.RdfFormat.N_QUADS,
}

Source = str | Path | BinaryIO


def display_name(source: Source, name: str | None) -> str:
    """The name errors use: the one given, else the path, else the file object's own name."""
    if name is not None:
        return name
    if isinstance(source, str | Path):
        return str(source)
    return str(getattr(source, "name", "<stream>"))


def base_extension(name: str) -> str:
    """The extension that names the syntax, looking through a trailing `.gz`."""
    stem = name.lower().removesuffix(".gz")
    return stem.rsplit(".", 1)[-1] if "." in Path(stem).name else ""


def stream_format(name: str, fmt: str | None) -> ox.RdfFormat:
    """TriG or N-Quads, from the explicit `fmt` or else from the file name."""
    key = (fmt or base_extension(name)).lower().lstrip(".")
    found = STREAM_FORMATS.get(key)
    if found is None:
        given = f"format {fmt!r}" if fmt else f"the name {name!r}"
        raise ValueError(f"{given} is not a stream format: use trig or nquads (.trig, .nq)")
    return found


@contextmanager
def open_binary(source: Source) -> Iterator[BinaryIO]:
    """The decompressed bytes of a path or binary file object, without a byte-order mark.

    A path is opened and closed here; a file object given by the caller is left open.
    """
    with ExitStack() as stack:
        if isinstance(source, str | Path):
            raw: BinaryIO = stack.enter_context(open(source, "rb"))
        else:
            raw = source
        if not hasattr(raw, "peek"):
            buffered = io.BufferedReader(raw)  # type: ignore[arg-type]
            stack.callback(buffered.detach)  # let go of the caller's object, unclosed
            raw = buffered  # type: ignore[assignment]
        if raw.peek(2)[:2] == GZIP_MAGIC:  # type: ignore[attr-defined]
            raw = stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))  # type: ignore[arg-type]
        if raw.peek(3)[:3] == UTF8_BOM:  # type: ignore[attr-defined]
            raw.read(3)  # editors add it; the parsers would take it for data
        yield raw
