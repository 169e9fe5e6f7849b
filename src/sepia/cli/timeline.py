"""`--timeline FILE` and `--timeline-range FROM:TO` of `sepia run` (and `sepia compare`):
the run drawn as a picture (sepia.timeline) once its results are written."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import pyoxigraph as ox
import typer

from sepia.cli.app import err_console, fail
from sepia.cli.options import RunInputs, split_binding
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement

if TYPE_CHECKING:
    from sepia.timeline import Run

TimelineOption = Annotated[
    Path | None,
    typer.Option(
        help="Also draw the run as a timeline: streams, windows at each evaluation, "
        "evaluation instants, results (.png, .svg, or .html with zoom and hover).",
    ),
]
TimelineRangeOption = Annotated[
    str | None,
    typer.Option(metavar="FROM:TO", help="The part of time the timeline shows (default: "
                 "the whole run, or its first 200 elements)."),
]  # fmt: skip


def check_timeline(
    path: Path | None, span: str | None, streams: Sequence[str] = ()
) -> tuple[int, int] | None:
    """Refuse a bad file suffix or range, or a stream the picture cannot read again
    (standard input), before anything runs; the range as a span."""
    if path is None and span is None:
        return None
    # sepia.timeline replays the run on the reference evaluator: loaded only for a picture
    from sepia.timeline import FORMATS, parse_range

    if path is not None and path.suffix.lower() not in FORMATS:
        fail(
            f"--timeline {path}: the file must end in {', '.join(FORMATS)}",
            "name the picture e.g. timeline.html (zoom and hover) or timeline.png",
        )
    if path is not None and any(split_binding(s)[1] == "-" for s in streams):
        fail("--timeline cannot draw a stream read from standard input (it reads the stream "
             "files again after the run)", "save the stream to a file and give that")  # fmt: skip
    if span is None:
        return None
    if path is None:
        fail("--timeline-range is for --timeline", "add --timeline FILE")
    try:
        return parse_range(span)
    except ValueError as error:
        fail(str(error))


def draw_run(
    path: Path,
    inputs: RunInputs,
    results: Sequence[Result],
    span: tuple[int, int] | None,
    until: int | None,
) -> None:
    """`sepia run --timeline`: one result lane per query of the run."""
    from sepia.timeline import Run

    runs = [Run(q.name, q.query, results) for q in inputs.queries]
    title = " ".join(q.source.name for q in inputs.queries)
    draw_timeline(path, runs, inputs.streams, inputs.background, span, until=until, title=title)


def draw_timeline(
    path: Path,
    runs: Sequence[Run],
    streams: Mapping[str, Sequence[StreamElement]],
    background: ox.Store | None,
    span: tuple[int, int] | None,
    *,
    until: int | None = None,
    title: str = "",
    windows: bool = True,
) -> None:
    """Draw the picture; a missing matplotlib or an unwritable file is one error line."""
    from sepia.timeline import picture
    from sepia.timeline.drawing import HINT, MissingMatplotlib

    try:
        _, note = picture(
            runs, streams, background, path, until=until, span=span, title=title,
            windows=windows,
        )  # fmt: skip
    except MissingMatplotlib as error:
        fail(f"--timeline {path}: {error}", HINT)
    except OSError as error:
        fail(f"--timeline {path}: cannot write it: {error.strerror or error}")
    if note:
        err_console.print(f"note: {note}", markup=False, highlight=False)
