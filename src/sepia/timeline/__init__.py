"""Timelines of runs: stream elements, windows at each evaluation, evaluation instants and
results on one time axis, drawn as PNG / SVG (matplotlib) or as one HTML file with zoom
and hover. ``model`` reads a run, ``scene`` lays it out, ``drawing`` and ``page`` draw it.
"""

from __future__ import annotations

from pathlib import Path

from sepia.timeline.model import Run, Timeline, timeline
from sepia.timeline.scene import Scene, scene

FORMATS = (".png", ".svg", ".html")


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


__all__ = ["FORMATS", "Run", "Scene", "Timeline", "scene", "timeline", "write"]
