"""Per-worker warm state: what a Spark Python worker keeps between the tasks and batches it
runs, so that plans are made once per worker, not once per stage.

A Python worker outlives the task it was started for and may serve many runs (many
queries) in a long-lived cluster, so every such cache is a small LRU, keyed by content
(a digest, or the value of a unit: equal content finds the same entry, never an object's
``id``), and bounded: a worker holds the last few runs' plans, not every query it has
seen. Losing an entry costs only time (a plan is made again); no answer depends on it,
since the state itself lives in Spark's state store.

- ``host._BACKGROUNDS``: background stores, by the digest of their N-Quads.
- ``host._PREPARED``: those backgrounds encoded (``sepia.engine.hosts.prepared``), by the
  same digest: each key's session and each router starts from a copy of one.
- ``host._ENGINES``: each unit's engine (its query planned once), by unit, engine name,
  background digest and entailment.
- ``job._ROUTERS``: the route stage's engines of a bucketed PARTITION BY unit (find the
  values an element binds: the row engine's, and the columnar core's where the unit's
  buckets run there), by unit, background digest, entailment and engine path.
- ``job._HOLDS``: whether each PARTITION BY unit stays on one key (a ``, !B``), by unit,
  from its plan over no background data.
- ``job._READS``: the predicates of the only triples a run's keys read, by units, engines,
  background digest, entailment, buckets and engine path.
- ``job._SPLITS``: each unit's split without PARTITION BY, or why it has none, by unit,
  whether the run has background data, and entailment.
- ``incremental_engine._LIVE``: the live session of each key after a step, by the token its
  state rows carry (``LIVE_SESSIONS`` of them).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class WarmCache(Generic[K, V]):
    """At most ``size`` entries, the least recently used dropped first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> V:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return value

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The entry of ``key``, made by ``make`` (and kept) when there is none."""
        found = self.get(key)
        return self.put(key, make()) if found is None else found

    def __len__(self) -> int:
        return len(self._entries)
