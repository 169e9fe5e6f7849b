"""Timelines of runs: stream elements, windows at each evaluation, evaluation instants and
results on one time axis, drawn as PNG / SVG (matplotlib) or as one HTML file with zoom
and hover. ``model`` reads a run, ``scene`` lays it out, ``drawing`` and ``page`` draw it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pyoxigraph as ox

from sepia.rdf.stream import StreamElement
from sepia.timeline.model import Run, Timeline, timeline
from sepia.timeline.scene import Scene, scene

FORMATS = (".png", ".svg", ".html")
READABLE = 200
"""About this many elements make a readable picture; a longer run is cut to its first
READABLE elements unless a time range is asked for."""


def parse_range(text: str) -> tuple[int, int]:
    """``A:B`` (integers, A <= B) as the span [A, B]."""
    low, sep, high = text.partition(":")
    try:
        span = (int(low), int(high))
    except ValueError:
        span = None
    if not sep or span is None or span[0] > span[1]:
        raise ValueError(f"--timeline-range {text!r}: give FROM:TO, two integer times, FROM <= TO")
    return span


def default_span(streams: Mapping[str, Sequence[StreamElement]]) -> tuple[int, int] | None:
    """None (the whole run) up to READABLE elements; else the span of the first READABLE."""
    times = sorted(e.time for es in streams.values() for e in es)
    if len(times) <= READABLE:
        return None
    first = min(e.start for es in streams.values() for e in es)
    return first, times[READABLE - 1]


def picture(
    runs: Sequence[Run],
    streams: Mapping[str, Sequence[StreamElement]],
    background: ox.Store | None,
    path: Path,
    *,
    until: int | None = None,
    span: tuple[int, int] | None = None,
    title: str = "",
    windows: bool = True,
) -> tuple[Scene, str]:
    """Draw the runs' timeline into ``path``: the scene drawn, and a note for the user when
    a long run was cut to its first READABLE elements ('' otherwise)."""
    chosen = span or default_span(streams)
    note = ""
    if span is None and chosen is not None:
        note = (
            f"the timeline shows times {chosen[0]}..{chosen[1]} (the first {READABLE} "
            "elements); give --timeline-range FROM:TO for another part"
        )
    shown = timeline(
        runs, streams, background, until=until, span=chosen, title=title, windows=windows
    )
    return write(shown, path), note


def write(shown: Timeline, path: Path) -> Scene:
    """Draw ``shown`` into ``path``, in the format its suffix names; the scene drawn."""
    laid = scene(shown)
    suffix = path.suffix.lower()
    if suffix == ".html":
        from sepia.timeline.page import write_page

        write_page(laid, path)
    elif suffix in (".png", ".svg"):
        from sepia.timeline.drawing import save

        save(laid, path)
    else:
        raise ValueError(f"{path}: a timeline is written as {', '.join(FORMATS)}")
    return laid


__all__ = [
    "FORMATS",
    "Run",
    "Scene",
    "Timeline",
    "default_span",
    "parse_range",
    "picture",
    "scene",
    "timeline",
    "write",
]
