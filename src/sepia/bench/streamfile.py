"""Plain pyoxigraph parsing of the workloads' files, for the floor baseline (which must do
nothing but parse) and for the baselines' background lookups. Elements are read with the
project's own stream reader, `sepia.io.streams.read_stream`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox

from sepia.io.background import background_format
from sepia.io.sources import STREAM_FORMATS, base_extension, open_binary


def parse_quads(path: Path) -> Iterator[ox.Quad]:
    """All quads of a stream or background file (gzip allowed), streamed."""
    syntax = STREAM_FORMATS.get(base_extension(path.name)) or background_format(path)
    if path.suffix != ".gz":  # pyoxigraph reading the file itself: ~25% faster
        yield from ox.parse(path=str(path), format=syntax)
        return
    with open_binary(path) as binary:
        yield from ox.parse(binary, format=syntax)
