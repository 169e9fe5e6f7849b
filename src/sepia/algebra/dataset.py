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
