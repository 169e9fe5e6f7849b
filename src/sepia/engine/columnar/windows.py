"""Windows as time-sorted columns: insertion is an append, eviction moves a start index.

The row engine's ``WindowState`` keeps a deque of elements and an indexed, reference-counted
graph updated triple by triple. Here a window keeps the times of the elements it admitted
(one column, sorted, since elements arrive in time order) and their triples as columns
(element number, s, p, o); what it shows at t is the suffix from the first element stamped
after ``lower(t)``, found by binary search, and its ``graph`` is that suffix's triples as a
set, built once per change (``Triples.of``). Elements are appended one at a time (the push
path: to plain lists, turned into one column chunk every ``LOOSE`` elements) or as whole
column slices (``extend``, the batch path), and consolidated into numpy arrays when read;
evicted prefixes are dropped once they are half of what is kept. The pending chunks are
merged among themselves once there are ``CHUNKS`` of them, so that an evaluation after
thousands of single-element pushes concatenates a few arrays, not thousands (that was 35
of W1's 46 ms per evaluation at a paced rate).

Same window function (``WindowOperator``), same state rows as ``WindowState``, so a
snapshot taken on either path restores on the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import groupby

import numpy as np

from sepia.algebra import dataset as ds
from sepia.engine.columnar.tables import Ids, Triples
from sepia.engine.graph import EncodedTriple
from sepia.engine.s2r.windows import Eviction, WindowOperator, WindowRow

_EMPTY = np.empty(0, dtype=np.int64)
LOOSE = 256
"""Single-element pushes kept as lists before they become a column chunk."""
CHUNKS = 32
"""Pending column chunks merged into one when there are this many."""


class ColumnWindow:
    """The elements a window shows, as columns; ``graph()`` its instantaneous graph."""

    __slots__ = (
        "_after",
        "_count",
        "_evict",
        "_graph",
        "_loose",
        "_pending",
        "_times",
        "_triples",
        "eviction",
        "first",
        "learner",
        "operator",
        "version",
    )

    def __init__(self, operator: WindowOperator) -> None:
        self.operator = operator
        self._times: Ids = _EMPTY
        """The admitted elements' times, oldest first (element number = position)."""
        self._triples: tuple[Ids, Ids, Ids, Ids] = (_EMPTY, _EMPTY, _EMPTY, _EMPTY)
        """(element number, s, p, o) of the admitted elements' triples, in element order."""
        self._pending: list[tuple[Ids, Ids, Ids, Ids, Ids]] = []
        """Appended (times, element offsets, s, p, o) chunks not yet consolidated."""
        self._loose: tuple[list[int], list[int], list[int]] = ([], [], [])
        """Single elements pushed after the pending chunks: their times, each triple's
        element offset (into these times), and the triples' s, p, o interleaved."""
        self.first = 0
        """The number of the oldest element shown."""
        self.version = 0
        self.eviction = Eviction(operator)
        self._after = operator.admitted_after()
        spec = operator.spec
        self._count = spec.count if isinstance(spec, ds.CountBased) else None
        self._graph: tuple[int, Triples] | None = None
        self._evict: int | None = None
        """Elements stamped at or before this are gone (applied when the window is read)."""
        self.learner: Callable[[Ids], None] | None = None
        """Given the objects of single elements as they become a chunk (every ``LOOSE``
        pushes, a quiet step), so that work on them leaves the evaluations."""

    def __len__(self) -> int:
        self._settle()
        return len(self._times) - self.first

    def next_eviction(self) -> int | None:
        """The first instant at which the window, with nothing arriving, shows less (its
        oldest element leaves); None if time alone changes nothing (``WindowState``'s)."""
        if self.first < len(self._times):
            oldest = int(self._times[self.first])
        elif self._pending:
            oldest = int(self._pending[0][0][0])
        elif self._loose[0]:
            oldest = self._loose[0][0]
        else:
            return None
        until = self.operator.shown_until(oldest)
        return None if until is None else until + 1

    def admits(self, time: int) -> bool:
        after = self._after
        return time > after if after is not None else self.operator.admits(time)

    def admitted(self, times: Ids) -> np.ndarray:
        """Which of these element times the window admits (a mask)."""
        after = self._after
        if after is not None:
            return times > after
        return np.fromiter((self.operator.admits(t) for t in times.tolist()), bool, len(times))

    def insert(self, time: int, triples: tuple[EncodedTriple, ...]) -> bool:
        """One element arrives (the push path); False when the window does not admit it."""
        if not self.admits(time):
            return False
        times, element, spo = self._loose
        element += [len(times)] * len(triples)
        times.append(time)
        for triple in triples:
            spo += triple
        if len(times) >= LOOSE:
            self._tighten()
        self._grown()
        return True

    def _tighten(self) -> None:
        """The loose elements as one pending chunk."""
        times, element, spo = self._loose
        if not times:
            return
        self._loose = ([], [], [])
        triples = np.array(spo, dtype=np.int64).reshape(-1, 3)
        if self.learner is not None:
            self.learner(triples[:, 2])
        self._add((np.array(times, dtype=np.int64), np.array(element, dtype=np.int64),
                   triples[:, 0], triples[:, 1], triples[:, 2]))

    def _add(self, chunk: tuple[Ids, Ids, Ids, Ids, Ids]) -> None:
        """A chunk pending; the pending ones merged into one when there are ``CHUNKS``."""
        self._pending.append(chunk)
        if len(self._pending) >= CHUNKS:
            self._pending = [_joined(self._pending)]

    def extend(self, times: Ids, element: Ids, s: Ids, p: Ids, o: Ids) -> None:
        """Admitted elements in time order (``times``) and their triples, ``element``
        giving each triple's element as an offset into ``times``."""
        if len(times):
            self._tighten()  # the loose elements came first
            self._add((times, element, s, p, o))
            self._grown()

    def _grown(self) -> None:
        """Elements were admitted: a count window shows its last ``count`` only."""
        self.version += 1
        if self._count is not None:
            self._consolidate()
            self.first = max(self.first, len(self._times) - self._count)

    def _consolidate(self) -> None:
        self._tighten()
        if not self._pending:
            return
        times, element, s, p, o = _joined(self._pending)
        self._pending = []
        base = len(self._times)
        self._times = np.concatenate([self._times, times])
        numbers, *spo = self._triples
        self._triples = (
            np.concatenate([numbers, element + base]),
            *(np.concatenate(pair) for pair in zip(spo, (s, p, o), strict=True)),
        )  # type: ignore[assignment]
        self._compact()

    def _compact(self) -> None:
        """Drop the evicted prefix once it is at least half of what is kept."""
        if self.first == 0 or self.first * 2 < len(self._times):
            return
        numbers, s, p, o = self._triples
        cut = int(np.searchsorted(numbers, self.first, side="left"))
        self._times = self._times[self.first :]
        self._triples = (numbers[cut:] - self.first, s[cut:], p[cut:], o[cut:])
        self.first = 0

    def advance(self, t: int) -> None:
        """Evict what the window no longer shows at evaluation time t (when it is read)."""
        lower = self.eviction.through(t)
        if lower is not None:
            self._evict = lower

    def _settle(self) -> None:
        """Consolidate appended chunks and apply the pending eviction (both wait for a
        read, so that an element's arrival costs an append and nothing else)."""
        self._consolidate()
        if self._evict is None:
            return
        first = max(self.first, int(np.searchsorted(self._times, self._evict, side="right")))
        self._evict = None
        if first != self.first:
            self.first = first
            self.version += 1
            self._compact()

    def _shown(self) -> tuple[Ids, Ids, Ids, Ids]:
        """(element number, s, p, o) of the triples shown."""
        self._settle()
        numbers, s, p, o = self._triples
        cut = int(np.searchsorted(numbers, self.first, side="left"))
        return numbers[cut:], s[cut:], p[cut:], o[cut:]

    @property
    def graph(self) -> Triples:
        """The instantaneous graph: the shown elements' triples as a set (its ``len`` is
        ``WindowState.graph``'s: what ``state_size`` counts)."""
        self._settle()
        cached = self._graph
        if cached is not None and cached[0] == self.version:
            return cached[1]
        _, s, p, o = self._shown()
        graph = Triples.of(s, p, o)
        self._graph = (self.version, graph)
        return graph

    def columns(self) -> tuple[Ids, Ids, Ids, Ids, Ids]:
        """``rows()`` as columns: the shown elements' times, oldest first, then per triple
        its element (an offset into those times, ascending) and its s, p, o."""
        numbers, s, p, o = self._shown()
        return self._times[self.first :], numbers - self.first, s, p, o

    def rows(self) -> list[WindowRow]:
        """``WindowState.rows()``: (element number, time, s, p, o), Nones for an element
        without triples, numbered from 0 at the oldest element shown. Made by ``zip`` over
        whole columns (a live Spark step snapshots its windows at every batch)."""
        times, at, s, p, o = self.columns()
        rows: list[WindowRow] = list(zip(
            at.tolist(), times[at].tolist(), s.tolist(), p.tolist(), o.tolist(), strict=True))
        empty = np.setdiff1d(np.arange(len(times)), at)
        if not len(empty):
            return rows
        out: list[WindowRow] = []
        done = 0
        for number, place in zip(empty.tolist(), np.searchsorted(at, empty).tolist(),
                                 strict=True):
            out += rows[done:place]
            out.append((number, int(times[number]), None, None, None))
            done = place
        return out + rows[done:]

    @classmethod
    def from_rows(cls, operator: WindowOperator, rows: Iterable[WindowRow]) -> ColumnWindow:
        """Rebuild a window from ``rows()`` output (``WindowState``'s or this class's)."""
        window = cls(operator)
        times: list[int] = []
        element: list[int] = []
        triples: list[Sequence[int | None]] = []
        for _, group in groupby(rows, key=lambda row: row[0]):
            members = list(group)
            for row in members:
                if row[2] is not None:
                    element.append(len(times))
                    triples.append(row[2:])
            times.append(members[0][1])
        spo = np.array(triples, dtype=np.int64).reshape(-1, 3)
        window.extend(np.array(times, dtype=np.int64), np.array(element, dtype=np.int64),
                      spo[:, 0], spo[:, 1], spo[:, 2])
        return window


def _joined(chunks: list[tuple[Ids, Ids, Ids, Ids, Ids]]) -> tuple[Ids, Ids, Ids, Ids, Ids]:
    """Column chunks (times, element offsets, s, p, o) as one, the offsets made absolute."""
    if len(chunks) == 1:
        return chunks[0]
    bases = np.cumsum([0] + [len(c[0]) for c in chunks[:-1]])
    times, element, s, p, o = zip(*chunks, strict=True)
    return (
        np.concatenate(times),
        np.concatenate([e + b for e, b in zip(element, bases.tolist(), strict=True)]),
        np.concatenate(s), np.concatenate(p), np.concatenate(o),
    )
