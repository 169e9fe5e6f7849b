"""Window operators (S2R), maintained incrementally: insert on arrival, evict on expiry.

The reference (``sepia.semantics.windows``) recomputes a window's content from the whole
stream at each evaluation time t; here a window keeps only what it shows. Every window kind
of the algebra shows the elements stamped in (lower(t), t] (count-based windows: the last n
elements), and lower(t) never decreases, so an evaluation at t first evicts the elements
stamped at or before lower(t) from the front of the window and nothing is ever rescanned.
The window's instantaneous graph is a ``TripleIndex`` built when first read and updated
from then on with each insertion and eviction (a window read only through its elements,
as event patterns read it, never pays for it).

State is rows (architecture principle 3): ``rows()`` gives one (element number, time, s, p, o) row
per triple of each element shown (Nones for an element without triples);
``WindowState.from_rows`` rebuilds the window, its index included.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from itertools import groupby

import numpy as np

from sepia.algebra import dataset as ds
from sepia.algebra.dataset import last_close_holding, present_window
from sepia.engine.graph import EncodedTriple, TripleIndex

ON_ARRIVAL = (ds.Landmark, ds.Now, ds.CountBased)
"""The window kinds that close at every element they admit (a tuple, built once: this is
asked at every arrival)."""
WindowRow = tuple[int, int, int | None, int | None, int | None]
"""(element number, time, s, p, o); an element without triples is one row of Nones."""


@dataclass(frozen=True, slots=True)
class WindowOperator:
    """The window function of one declared window: which elements it admits, how far back
    it reaches at t, and when it closes. Pure: the content lives in ``WindowState``."""

    spec: ds.WindowSpec

    def admits(self, time: int) -> bool:
        """Whether an element stamped ``time`` ever enters the window (content change)."""
        match self.spec:
            case ds.Sliding(width, slide, t0):
                if slide <= width:
                    return time > t0  # the windows cover (t0, oo) without gaps
                return present_window(time, width, slide, t0) is not None
            case ds.Landmark(t0):
                return time >= t0
            case ds.Interval(start, end):
                return start <= time <= end
            case ds.Now() | ds.CountBased():
                return True

    def admitted_after(self) -> int | None:
        """A time after which ``admits`` holds for every element (asked once per window
        instead of at each insertion), or None when admission is not such a threshold."""
        match self.spec:
            case ds.Sliding(width, slide, t0) if slide <= width:
                return t0
            case ds.Landmark(t0):
                return t0 - 1
            case ds.Now() | ds.CountBased():
                return -(1 << 62)
            case _:
                return None

    def lower(self, t: int) -> int | None:
        """The window shows elements stamped in (lower, t]; None: no time bound."""
        return self.lower_through(t)[0]

    def lower_through(self, t: int) -> tuple[int | None, int]:
        """``lower(t)`` and the last instant through which it stays the same (lower is a
        step function of t: a sliding window's opening moves once per slide)."""
        match self.spec:
            case ds.Sliding(width, slide, t0):
                return sliding_lower(width, slide, t0, t)
            case _:
                return self._lower(t), t

    def lower_step(self) -> Callable[[int], tuple[int | None, int]]:
        """``lower_through`` as one function, a sliding window's with its spec bound: it is
        asked at almost every instant, so without a match on the spec each time."""
        match self.spec:
            case ds.Sliding(width, slide, t0):
                return partial(sliding_lower, width, slide, t0)
            case _:
                return self.lower_through

    def _lower(self, t: int) -> int | None:
        match self.spec:
            case ds.Landmark(t0):
                return t0 - 1
            case ds.Interval(start, _):
                return start - 1
            case ds.Now():
                return t - 1
            case _:  # count-based (the sliding ones are worked out in the caller)
                return None

    def closes_on_arrival(self) -> bool:
        """Landmark, NOW and count-based windows move with every element they admit: each
        such arrival ends one extent of the window (a close) and starts the next."""
        return isinstance(self.spec, ON_ARRIVAL)

    def closes_at(self, t: int) -> bool:
        """Whether a window (o, c] of a time-based window closes at t (c = t)."""
        match self.spec:
            case ds.Sliding(width, slide, t0):
                return t >= t0 + width and (t - t0 - width) % slide == 0
            case ds.Interval(_, end):
                return t == end
            case _:
                return False

    def first_close_after(self, t: int) -> int | None:
        """The earliest close strictly after t (time-driven windows), else None."""
        match self.spec:
            case ds.Sliding(width, slide, t0):
                k = max(0, (t - t0 - width) // slide + 1)
                return t0 + k * slide + width
            case ds.Interval(_, end):
                return end if end > t else None
            case _:
                return None

    def shown_until(self, time: int) -> int | None:
        """The last instant at which an element stamped ``time`` is shown; None when time
        alone never evicts it (landmark and interval windows keep it, a count-based one
        drops it only when later elements arrive)."""
        match self.spec:
            case ds.Sliding():
                return self.flush_end(time)
            case ds.Now():
                return time
            case _:
                return None

    def flush_end(self, last: int) -> int:
        """Where the end-of-input flush stops for this window, given its last element."""
        match self.spec:
            case ds.Sliding(width, slide, t0):
                return last_close_holding(last, width, slide, t0) or last
            case _:
                return last

    @property
    def t0(self) -> int:
        """Where periodic reports ``OF`` this window are aligned."""
        match self.spec:
            case ds.Sliding(_, _, t0) | ds.Landmark(t0):
                return t0
            case ds.Interval(start, _):
                return start
            case _:
                return 0


def sliding_lower(width: int, slide: int, t0: int, t: int) -> tuple[int, int]:
    """``lower_through`` of a sliding window: ``present_window``'s arithmetic, inlined
    (asked once per instant)."""
    first = max(0, -((t - width - t0) // -slide))
    if t0 + first * slide >= t:
        return t, t  # no window holds t
    opening = t0 + first * slide
    return opening, opening + width  # the next window holding t + 1 opens later


class Eviction:
    """How far a window evicts at each new instant, ``operator.lower`` asked once per
    step of that step function (shared by the row and the columnar windows)."""

    __slots__ = ("_lower", "_lower_through", "advanced", "operator")

    def __init__(self, operator: WindowOperator) -> None:
        self.operator = operator
        self._lower_through = operator.lower_step()
        self.advanced: int | None = None
        """The last instant asked (asked once per window per element)."""
        self._lower: tuple[int, int | None, int] = (0, None, -1)
        """(a, lower, b): ``operator.lower`` is ``lower`` at every instant of [a, b]."""

    def through(self, t: int) -> int | None:
        """Evict the elements stamped at or before this at t (None: nothing new to do)."""
        if t == self.advanced:
            return None
        self.advanced = t
        since, lower, through = self._lower
        if not since <= t <= through:
            lower, through = self._lower_through(t)
            self._lower = (t, lower, through)
        return lower


class WindowState:
    """The elements a window shows, oldest first, and their triples' index."""

    __slots__ = ("_after", "_count", "_graph", "elements", "eviction", "operator", "version")

    def __init__(self, operator: WindowOperator) -> None:
        self.operator = operator
        self.elements: deque[tuple[int, tuple[EncodedTriple, ...]]] = deque()
        self._graph: TripleIndex | None = None
        self.version = 0
        """Counts changes, so caches of the content know when they are stale."""
        self.eviction = Eviction(operator)
        self._after = operator.admitted_after()
        spec = operator.spec
        self._count = spec.count if isinstance(spec, ds.CountBased) else None

    def __len__(self) -> int:
        return len(self.elements)

    @property
    def graph(self) -> TripleIndex:
        """The triples the window shows (its instantaneous graph), indexed."""
        if self._graph is None:
            self._graph = TripleIndex(t for _, triples in self.elements for t in triples)
        return self._graph

    def admits(self, time: int) -> bool:
        """``operator.admits``, by the threshold where admission is one (asked per element)."""
        after = self._after
        return time > after if after is not None else self.operator.admits(time)

    def insert(self, time: int, triples: tuple[EncodedTriple, ...]) -> bool:
        """An element arrives; False when the window does not admit it."""
        if not self.admits(time):
            return False
        self.elements.append((time, triples))
        self.version += 1
        graph = self._graph
        if graph is not None:
            for triple in triples:
                graph.add(triple)
        if self._count is not None:
            while len(self.elements) > self._count:
                self._evict()
        return True

    def advance(self, t: int) -> None:
        """Evict what the window no longer shows at evaluation time t."""
        lower = self.eviction.through(t)
        if lower is None:
            return
        while self.elements and self.elements[0][0] <= lower:
            self._evict()

    def next_eviction(self) -> int | None:
        """The first instant at which the window, with nothing arriving, shows less (its
        oldest element leaves); None if time alone changes nothing."""
        if not self.elements:
            return None
        until = self.operator.shown_until(self.elements[0][0])
        return None if until is None else until + 1

    def _evict(self) -> None:
        _, triples = self.elements.popleft()
        self.version += 1
        graph = self._graph
        if graph is not None:
            for triple in triples:
                graph.remove(triple)

    def rows(self) -> list[WindowRow]:
        """The window's state as rows (see the module docstring)."""
        return [
            (number, time, *triple)
            for number, (time, triples) in enumerate(self.elements)
            for triple in (triples or ((None, None, None),))
        ]

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``rows()`` as columns, as ``ColumnWindow.columns()`` gives them: the elements'
        times, oldest first, then per triple its element (an offset into those times)
        and its s, p, o."""
        times = np.fromiter((t for t, _ in self.elements), np.int64, len(self.elements))
        element = [i for i, (_, triples) in enumerate(self.elements) for _ in triples]
        spo = [v for _, triples in self.elements for triple in triples for v in triple]
        s, p, o = np.array(spo, dtype=np.int64).reshape(-1, 3).T
        return times, np.array(element, dtype=np.int64), s, p, o

    @classmethod
    def from_rows(cls, operator: WindowOperator, rows: Iterable[WindowRow]) -> WindowState:
        """Rebuild a window from ``rows()`` output (element number first)."""
        state = cls(operator)
        for _, group in groupby(rows, key=lambda row: row[0]):
            members = list(group)
            time = members[0][1]
            triples = tuple(
                (s, p, o)
                for _, _, s, p, o in members
                if s is not None and p is not None and o is not None  # (all three, or none)
            )
            state.elements.append((time, triples))
        return state

