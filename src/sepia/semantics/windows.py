"""Window functions (S2R): which stream elements a window shows at an evaluation time t.

RSP-QL (seed 004) Definitions 12-13 give time-based sliding windows (alpha, beta, t0): the
windows (o, c] with o = t0 + k*beta (k >= 0) and c = o + alpha. The present window at t is,
per semantics.md, the window containing t with the earliest opening o, and the window shows
the elements stamped in (o, t]. RSEP-QL (seed 001) section 3.2 adds landmark and interval
windows (its identity window is the landmark from the beginning, ``[ALL]``) and their
nesting W1 . W2 (S, t) = W1(W2(S, t), t); CQELS adds NOW and count-based windows. Every
window function here takes the elements of one stream (in arrival order) and t, and returns
the sub-sequence the window shows. An element's time is its arrival time (the end of its
interval).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import reduce

from sepia.algebra.dataset import present_window
from sepia.rdf.stream import StreamElement

WindowFunction = Callable[[Sequence[StreamElement], int], list[StreamElement]]


def _stamped_in(elements: Sequence[StreamElement], after: int, through: int) -> list[StreamElement]:
    return [e for e in elements if after < e.time <= through]


def sliding(width: int, slide: int, t0: int = 0) -> WindowFunction:
    """Time-based sliding window (RANGE a STEP b START t0); TUMBLING a is slide = width."""

    def select(elements: Sequence[StreamElement], t: int) -> list[StreamElement]:
        window = present_window(t, width, slide, t0)
        return [] if window is None else _stamped_in(elements, window[0], t)

    return select


def landmark(t0: int = 0) -> WindowFunction:
    """Landmark window W^lambda(t0): every element stamped in [t0, t] (RSEP-QL 3.2)."""
    return lambda elements, t: _stamped_in(elements, t0 - 1, t)


def now() -> WindowFunction:
    """NOW: only the elements stamped with the evaluation time itself."""
    return lambda elements, t: _stamped_in(elements, t - 1, t)


def interval(start: int, end: int) -> WindowFunction:
    """Interval window W^sqcup[start, end]: elements stamped in [start, end] (and <= t)."""
    return lambda elements, t: _stamped_in(elements, start - 1, min(end, t))


def count_based(count: int) -> WindowFunction:
    """Count-based window: the last ``count`` elements that arrived by t."""
    if count <= 0:
        raise ValueError(f"a count-based window needs a positive count, not {count}")
    return lambda elements, t: [e for e in elements if e.time <= t][-count:]


def nest(*functions: WindowFunction) -> WindowFunction:
    """W1 . W2 . ... . Wn (S, t) = W1(W2(...Wn(S, t)..., t), t) (RSEP-QL section 3.2)."""

    def select(elements: Sequence[StreamElement], t: int) -> list[StreamElement]:
        return reduce(lambda shown, w: w(shown, t), reversed(functions), list(elements))

    return select
