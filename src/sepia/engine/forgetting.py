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

A collection costs a walk of the state, so it runs only when the dictionary has doubled
since the last one left it (and holds at least ``MIN_TERMS``): its cost per new term is
constant, and the dictionary stays within twice the live terms.
"""

from __future__ import annotations

import gc
import sys
import types
from collections.abc import Iterable

import numpy as np

from sepia.engine.codec import Codec

MIN_TERMS = 1 << 16
"""Dictionaries smaller than this are never collected: a walk would cost more than it saves."""

_LEAVES = (type, types.ModuleType, types.CodeType, str, bytes, float, complex, bool,
           type(None), range)  # fmt: skip


def held_integers(roots: Iterable[object], skip: Iterable[object] = ()) -> set[int]:
    """Every int reachable from ``roots`` (through containers, instances, closures, the
    tables of ``lru_cache``s and numpy integer arrays), not looking inside ``skip``,
    modules' globals or classes."""
    seen = {id(x) for x in skip} | {id(vars(m)) for m in list(sys.modules.values()) if m}
    found: set[int] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if type(node) is int:
            found.add(node)
            continue
        if id(node) in seen or isinstance(node, _LEAVES):
            continue
        seen.add(id(node))
        if isinstance(node, np.ndarray):
            if node.dtype.kind in "iu":
                found.update(node.ravel().tolist())  # numpy 2's unique hashes, 10-40x slower
            elif node.dtype.kind == "O":
                stack.extend(node.ravel().tolist())
        elif isinstance(node, np.integer):
            found.add(int(node))
        elif isinstance(node, types.FunctionType):
            stack.extend(c.cell_contents for c in node.__closure__ or () if _filled(c))
            stack.extend(node.__defaults__ or ())
            stack.extend((node.__kwdefaults__ or {}).values())
        else:
            stack.extend(gc.get_referents(node))
    return found


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


class Forgetting:
    """When and what a session's dictionary forgets: everything above ``floor`` (the ids
    of the queries and the background) that nothing reachable from the roots holds."""

    def __init__(self, codec: Codec, min_terms: int = MIN_TERMS) -> None:
        self.codec = codec
        self.min_terms = min_terms
        self.floor = codec.last_id
        self.next_at = min_terms
        self.forgotten = 0
        """Terms forgotten so far (a state counter)."""

    def pin(self) -> None:
        """Keep every term allocated so far for good (a query was registered)."""
        self.floor = self.codec.last_id

    def due(self) -> bool:
        return len(self.codec) >= self.next_at

    def collect(self, roots: Iterable[object]) -> int:
        """Forget the terms the roots no longer hold; how many were forgotten."""
        live = held_integers(roots, skip=(self.codec, *self.codec.caches))
        dropped = self.codec.forget(live, self.floor)
        self.forgotten += len(dropped)
        self.next_at = max(self.min_terms, 2 * len(self.codec))
        return len(dropped)
