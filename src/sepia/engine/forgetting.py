"""Forgetting terms no state refers to any more, so that the run's memory follows its live
windows and runs, not the length of its input (a stream with fresh IRIs per event would
otherwise grow the dictionary by every term it ever saw).

The engine's state is spread over windows, automaton runs, maintained joins, aggregates and
the caches of each (expressions' values, event graphs' matches), many of which hold ids.
Rather than have each count its references, a collection walks everything reachable from
the session (as a tracing collector does) and keeps every integer it finds: an integer that
is a time or a count rather than an id only keeps a term a little longer. Terms allocated
before the first element (the queries' constants, the background data) are never
forgotten. Ids are never given again, so a cache entry still keyed by a forgotten id is
never met by another term. Batches of columns a reader has encoded but not yet pushed are
roots too (``ColumnBatch.alive``). Caches keyed by ids that would otherwise keep every id
they ever saw (the numeric values of terms, expressions' values) are not walked: they
``watch`` the dictionary and drop the ids it forgets.

A collection costs a walk of the state and a pause of the run, so it runs once the terms
above the pinned ones have grown by half since the last one left them, and number at least
``min_terms``: its cost per new term is constant, the dictionary stays within one and a
half times the live terms, and one pause forgets at most about ``min_terms`` or a third
of the dictionary (a local run's default, ``STEP_TERMS``, keeps a pause to a few ms).
A local session waits for the advance after one that made results to collect (``due``):
a pause of 10-20 ms there delays no result, where one just before an evaluation set the
p99 latency of W3 at a paced rate.
"""

from __future__ import annotations

import gc
import sys
import types
from collections.abc import Iterable

import numpy as np

from sepia.engine.codec import Codec

MIN_TERMS = 1 << 16
"""Dictionaries smaller than this are never collected: a walk would cost more than it saves
(a Spark key's default, collected after each slice of a step, `runtime.spark.columns`)."""

STEP_TERMS = 1 << 13
"""A local session's default ``min_terms``: with 65,536, each of W3's collections forgot
~49,000 terms in one 30-90 ms pause (the dictionary's and its caches' deletes), which set
the p99 latency of a paced run; 8,192 at a time take a few ms, the walk under one."""

DENSE = 16
"""Ids' range per id up to which a collection marks held ids in a table over the range."""

_LEAVES = (type, types.ModuleType, types.CodeType, str, bytes, float, complex, bool,
           type(None), range)  # fmt: skip


class HeldIntegers:
    """The integers a walk of the state found: Python ints one by one, integer arrays
    whole (turning every window column into Python ints was most of a collection)."""

    def __init__(self) -> None:
        self.ints: set[int] = set()
        self.arrays: list[np.ndarray] = []

    def among(self, ids: np.ndarray) -> np.ndarray:
        """Which of ``ids`` (increasing, int64) were found, as a mask: by a table over
        their range when it is dense enough (a few bytes per id), else by binary search
        (the range grows with the input when an old term stays live)."""
        if not len(ids):
            return np.zeros(0, dtype=bool)
        lo, hi = int(ids[0]), int(ids[-1])
        # int64 before any arithmetic: a narrow array's values minus ``lo`` overflow
        found = [a[(a >= lo) & (a <= hi)].astype(np.int64, copy=False) for a in self.arrays]
        found.append(np.fromiter((i for i in self.ints if lo <= i <= hi), np.int64))
        if hi - lo < DENSE * len(ids):
            table = np.zeros(hi - lo + 1, dtype=bool)
            for values in found:
                table[values - lo] = True
            return table[ids - lo]
        held = np.zeros(len(ids), dtype=bool)
        for values in found:
            at = np.searchsorted(ids, values)
            held[at[ids[np.minimum(at, len(ids) - 1)] == values]] = True
        return held


def held_integers(roots: Iterable[object], skip: Iterable[object] = ()) -> HeldIntegers:
    """Every int reachable from ``roots`` (through containers, instances, closures, the
    tables of ``lru_cache``s and numpy integer arrays), not looking inside ``skip``,
    modules' globals or classes."""
    seen = {id(x) for x in skip} | {id(vars(m)) for m in list(sys.modules.values()) if m}
    held = HeldIntegers()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if type(node) is int:
            held.ints.add(node)
            continue
        if id(node) in seen or isinstance(node, _LEAVES):
            continue
        seen.add(id(node))
        if isinstance(node, np.ndarray):
            if node.dtype.kind in "iu":
                held.arrays.append(node.ravel())
            elif node.dtype.kind == "O":
                stack.extend(node.ravel().tolist())
        elif isinstance(node, np.integer):
            held.ints.add(int(node))
        elif isinstance(node, types.FunctionType):
            stack.extend(c.cell_contents for c in node.__closure__ or () if _filled(c))
            stack.extend(node.__defaults__ or ())
            stack.extend((node.__kwdefaults__ or {}).values())
        else:
            stack.extend(gc.get_referents(node))
    return held


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


class Forgetting:
    """When and what a session's dictionary forgets: everything above ``floor`` (the ids
    of the queries and the background) that nothing reachable from the roots holds."""

    def __init__(self, codec: Codec, min_terms: int = MIN_TERMS, *, waits: bool = True) -> None:
        self.codec = codec
        self.min_terms = min_terms
        self.slack = min_terms // 2 if waits else 0
        """Terms past the threshold a collection may wait for a quiet advance (``due``);
        none where a bound on the held terms matters more than a pause (a Spark key's
        stored dictionary)."""
        self.floor = codec.last_id
        self.pinned = len(codec)
        """How many terms are pinned (every id up to ``floor``: none is ever forgotten)."""
        self.next_at = self.pinned + min_terms
        self.forgotten = 0
        """Terms forgotten so far (a state counter)."""

    def pin(self) -> None:
        """Keep every term allocated so far for good (a query was registered)."""
        self.floor = self.codec.last_id
        self.pinned = len(self.codec)
        self.next_at = self.pinned + self.min_terms

    def due(self, settled: bool = True) -> bool:
        """Whether to collect now: the threshold is reached and the run is ``settled`` (its
        last advance made no results and the one before did: a collection pauses the run,
        and right after results the next ones are furthest off), or it is passed by half of
        ``slack`` anyway (a run that seldom answers still forgets)."""
        size = len(self.codec)
        return size >= self.next_at and (settled or size >= self.next_at + self.slack)

    def collect(self, roots: Iterable[object], pinned: Iterable[object] = ()) -> int:
        """Forget the terms the roots no longer hold; how many were forgotten. ``pinned``:
        state that holds pinned ids only (a background's graphs), not walked."""
        held = held_integers(roots, skip=(self.codec, *self.codec.caches, *pinned))
        ids = np.array(self.codec.ids(above=self.floor), dtype=np.int64)
        dropped = set(ids[~held.among(ids)].tolist())
        self.codec.forget(dropped)
        self.forgotten += len(dropped)
        live = len(self.codec) - self.pinned
        self.next_at = self.pinned + max(self.min_terms, live + live // 2)
        return len(dropped)
