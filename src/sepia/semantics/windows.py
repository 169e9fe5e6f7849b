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

from sepia.rdf.stream import StreamElement

WindowFunction = Callable[[Sequence[StreamElement], int], list[StreamElement]]


def windows_for(t: int, width: int, slide: int, t0: int = 0) -> list[tuple[int, int]]:
    """Every window (o, c] of the sliding window (width, slide, t0) that contains t,
    earliest opening first (RSP-QL Definition 13)."""
    return [(t0 + k * slide, t0 + k * slide + width) for k in _holding(t, width, slide, t0)]


def _holding(t: int, width: int, slide: int, t0: int) -> range:
    """The k of the windows (t0 + k*slide, t0 + k*slide + width] that contain t (a range:
    a narrow slide makes many, e.g. RANGE 10m over millisecond times)."""
    if width <= 0 or slide <= 0:
        raise ValueError(f"window width {width} and slide {slide} must be positive")
    first = max(0, -((t - width - t0) // -slide))  # ceil((t - width - t0) / slide)
    last = -((t - t0) // -slide) - 1  # largest k with t0 + k*slide < t
    return range(first, last + 1)


def present_window(t: int, width: int, slide: int, t0: int = 0) -> tuple[int, int] | None:
    """The present window at t: the window holding t with the earliest opening, if any."""
    holding = _holding(t, width, slide, t0)
    return (t0 + holding[0] * slide, t0 + holding[0] * slide + width) if holding else None


def close_times(width: int, slide: int, t0: int, low: int, high: int) -> range:
    """The closing instants c = t0 + k*slide + width (k >= 0) that fall in [low, high]."""
    first = max(0, -((low - width - t0) // -slide))
    return range(t0 + first * slide + width, high + 1, slide)


def last_close_holding(t: int, width: int, slide: int, t0: int = 0) -> int | None:
    """The close of the last window that holds t (where the end-of-input flush stops)."""
    holding = _holding(t, width, slide, t0)
    return t0 + holding[-1] * slide + width if holding else None


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
