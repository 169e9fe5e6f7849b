"""Opening input files: paths or binary file objects, plain or gzip, format by extension.

gzip is inflated here rather than by `gzip.GzipFile`, which loses the bytes it decompressed
in the read that meets damage (a truncated file, corrupt data, a bad checksum) and raises
an unlocated `EOFError` or `BadGzipFile`. `Inflated` returns every byte before the damage,
then raises `DamagedInput` naming the line where the good data stops; or, for a reader that
reports the damage itself (`ends_at_damage`), ends there as if the file ended.
"""

from __future__ import annotations

import io
import zlib
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
COMPRESSED_BLOCK = 1 << 14  # compressed bytes read at a time: bounds what one inflation makes
GZIP_WBITS = 31  # zlib's gzip mode: header, deflate data, then CRC-32 and length checked
LOST = "; what comes before this line is read, the rest is lost"


class DamagedInput(OSError):
    """Compressed input that cannot be read past `line` (the first line not read whole)."""

    def __init__(self, line: int, reason: str) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"line {line}: {reason}")


class Inflated(io.RawIOBase):
    """The decompressed bytes of gzip data (one or more members), read as needed.

    Damage is raised as `DamagedInput` only once every byte before it has been returned, so
    a reader keeps the elements that precede it; with `ends_at_damage` the data just ends
    there and `damage` says why."""

    def __init__(self, raw: BinaryIO, ends_at_damage: bool = False) -> None:
        super().__init__()
        self.raw = raw
        self.ends_at_damage = ends_at_damage
        self.inflater = zlib.decompressobj(GZIP_WBITS)
        self.started = False  # the current member has had input
        self.input = b""  # compressed bytes not yet inflated
        self.head = b""  # inflated bytes not yet returned
        self.lines = 1  # the line the next returned byte is on
        self.damage: str | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def peek(self, size: int = 1) -> bytes:
        while len(self.head) < size and (more := self._inflate(max(size, COMPRESSED_BLOCK))):
            self.head += more
        return self.head

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            return b"".join(iter(lambda: self.read(1 << 20), b""))
        if self.head:
            out, self.head = self.head[:size], self.head[size:]
        else:
            out = self._inflate(size)
        self.lines += out.count(b"\n")
        return out

    def _inflate(self, size: int) -> bytes:
        """Up to `size` more bytes, b"" at the end, DamagedInput once the good ones are out."""
        while True:
            if self.damage is not None:
                if self.ends_at_damage:
                    return b""
                raise DamagedInput(self.lines + self.head.count(b"\n"), self.damage)
            if not self._has_input():
                return b""
            before = self.inflater.copy()
            try:
                out = self.inflater.decompress(self.input, size)
            except zlib.error as error:
                self.damage = _damage(error)
                out = _salvage(before, self.input)
            else:
                self.input = self.inflater.unconsumed_tail
                if self.inflater.eof:  # a member ends; another may follow
                    self.input = self.inflater.unused_data
                    self.inflater = zlib.decompressobj(GZIP_WBITS)
                    self.started = False
            if out:
                return out

    def _has_input(self) -> bool:
        """Compressed input to inflate; False at its end (noting damage if a member is cut).
        NUL bytes between members are padding, as for `gzip`."""
        while not (self.input if self.started else self.input.lstrip(b"\0")):
            block = self.raw.read(COMPRESSED_BLOCK)
            if not block:
                if self.started:
                    self.damage = "the gzip data ends early (a truncated file)" + LOST
                    return True
                return False
            self.input = block
        if not self.started:
            self.input = self.input.lstrip(b"\0")
            self.started = True
        return True


def damage_of(binary: BinaryIO) -> DamagedInput | None:
    """Why data opened with `ends_at_damage` ended early, or None if it was whole."""
    if isinstance(binary, Inflated) and binary.damage is not None:
        return DamagedInput(binary.lines, binary.damage)
    return None


def _salvage(inflater: zlib._Decompress, data: bytes) -> bytes:
    """What `data` inflates to before the point where it is corrupt: fed in small steps,
    then byte by byte from the step that fails."""
    out = []
    start, step = 0, 64
    while start < len(data):
        saved = inflater.copy()
        try:
            out.append(inflater.decompress(data[start:start + step]))
        except zlib.error:
            if step == 1:
                break
            inflater, step = saved, 1
            continue
        start += step
    return b"".join(out)


def _damage(error: zlib.error) -> str:
    """zlib's complaint in a user's words."""
    detail = str(error).rsplit(": ", 1)[-1]
    if detail in ("incorrect data check", "incorrect length check"):
        return f"corrupt gzip data: its checksum fails ({detail}), so what was read may be wrong"
    if detail == "incorrect header check":
        return "corrupt gzip data: what follows is not gzip" + LOST
    return f"corrupt gzip data ({detail})" + LOST


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
def open_binary(source: Source, ends_at_damage: bool = False) -> Iterator[BinaryIO]:
    """The decompressed bytes of a path or binary file object, without a byte-order mark.

    A path is opened and closed here; a file object given by the caller is left open.
    Damaged gzip data raises `DamagedInput`, or with `ends_at_damage` ends the data there
    (the caller then reads `damage_of`).
    """
    with ExitStack() as stack:
        if isinstance(source, str | Path):
            raw: BinaryIO = stack.enter_context(open(source, "rb"))
        else:
            raw = source
        if not hasattr(raw, "peek"):
            buffered = io.BufferedReader(raw)  # type: ignore[type-var]
            stack.callback(buffered.detach)  # let go of the caller's object, unclosed
            raw = buffered
        if raw.peek(2)[:2] == GZIP_MAGIC:
            raw = Inflated(raw, ends_at_damage)  # type: ignore[assignment]
        if raw.peek(3)[:3] == UTF8_BOM:
            raw.read(3)  # editors add it; the parsers would take it for data
        yield raw
