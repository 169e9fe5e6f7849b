"""The streaming dataset of a query: background graphs, streams and the windows over them.

RSP-QL dataset (seed 004, Definition 14) and RSEP-QL dataset (seed 001, Definition 4): an
optional default graph, named graphs, and named window functions applied to streams. Every
duration is an integer in the query's time unit (``Query.time_kind``): epoch-millisecond
arithmetic for wall-clock durations, plain integers for abstract time.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyoxigraph as ox


@dataclass(frozen=True, slots=True)
class Sliding:
    """Time-based sliding window (alpha, beta, t0) (RSP-QL seed 004, Definition 13).

    Windows are (o, c] with o = t0 + k*beta (k >= 0) and c = o + width, as in the paper's
    Example 7 ((1,6], (3,8], (5,10] for width 5, slide 2, t0 1). ``RANGE a`` has slide 1;
    ``TUMBLING a`` has slide = width.
    """

    width: int
    slide: int
    t0: int = 0


@dataclass(frozen=True, slots=True)
class Landmark:
    """Landmark window W^lambda(t0) (RSEP-QL seed 001, section 3.2): everything from t0."""

    t0: int = 0


@dataclass(frozen=True, slots=True)
class Now:
    """``[NOW]``: only the elements stamped with the evaluation time (CQELS)."""


@dataclass(frozen=True, slots=True)
class CountBased:
    """``[TRIPLES n]``: the last n stream elements (C-SPARQL / CQELS count windows)."""

    count: int


@dataclass(frozen=True, slots=True)
class Interval:
    """Interval window W^sqcup[t1, t2] (RSEP-QL seed 001, section 3.2): elements in [t1, t2]."""

    start: int
    end: int


WindowSpec = Sliding | Landmark | Now | CountBased | Interval


@dataclass(frozen=True, slots=True)
class StreamDecl:
    """An input stream; ``name`` is SPAseq's short name (``FROM STREAM S1 <s>``)."""

    iri: ox.NamedNode
    name: str | None = None


@dataclass(frozen=True, slots=True)
class WindowDecl:
    """A named window function over a stream: (w_j, W_j(S_l)) of RSEP-QL Definition 4.

    ``into_default`` marks C-SPARQL's ``FROM STREAM <s> [spec]``, whose content is merged into
    the default graph; CQELS inline ``STREAM <s> [spec] { }`` windows get a generated name.
    """

    name: ox.NamedNode
    stream: ox.NamedNode
    spec: WindowSpec
    into_default: bool = False


@dataclass(frozen=True, slots=True)
class Dataset:
    """Background graphs (loaded with ``--data``), streams and windows of one query."""

    default_graphs: tuple[ox.NamedNode, ...] = ()
    named_graphs: tuple[ox.NamedNode, ...] = ()
    streams: tuple[StreamDecl, ...] = ()
    windows: tuple[WindowDecl, ...] = ()

    def window(self, name: ox.NamedNode) -> WindowDecl | None:
        """The declared window called ``name``, if any."""
        return next((w for w in self.windows if w.name == name), None)


def windows_for(t: int, width: int, slide: int, t0: int = 0) -> list[tuple[int, int]]:
    """Every window (o, c] of the sliding window (width, slide, t0) that contains t,
    earliest opening first (RSP-QL Definition 13)."""
    return [(t0 + k * slide, t0 + k * slide + width) for k in windows_holding(t, width, slide, t0)]


def windows_holding(t: int, width: int, slide: int, t0: int) -> range:
    """The k of the windows (t0 + k*slide, t0 + k*slide + width] that contain t (a range:
    a narrow slide makes many, e.g. RANGE 10m over millisecond times)."""
    if width <= 0 or slide <= 0:
        raise ValueError(f"window width {width} and slide {slide} must be positive")
    first = max(0, -((t - width - t0) // -slide))  # ceil((t - width - t0) / slide)
    last = -((t - t0) // -slide) - 1  # largest k with t0 + k*slide < t
    return range(first, last + 1)


def present_window(t: int, width: int, slide: int, t0: int = 0) -> tuple[int, int] | None:
    """The present window at t: the window holding t with the earliest opening, if any."""
    holding = windows_holding(t, width, slide, t0)
    return (t0 + holding[0] * slide, t0 + holding[0] * slide + width) if holding else None


def close_times(width: int, slide: int, t0: int, low: int, high: int) -> range:
    """The closing instants c = t0 + k*slide + width (k >= 0) that fall in [low, high] (a
    range: a long gap in time holds very many)."""
    first = max(0, -((low - width - t0) // -slide))
    return range(t0 + first * slide + width, high + 1, slide)


def last_close_holding(t: int, width: int, slide: int, t0: int = 0) -> int | None:
    """The close of the last window that holds t (where the end-of-input flush stops)."""
    holding = windows_holding(t, width, slide, t0)
    return t0 + holding[-1] * slide + width if holding else None
