"""A window's RDFS closure maintained as triples arrive and leave, by support counts.

Under a fixed schema a graph's closure is the union of what each of its triples entails
(:func:`sepia.reasoning.rdfs.entailed`), so every closure triple is counted once per window
triple (occurrence) whose expansion holds it; it enters the closure when its count leaves 0
and leaves when its last supporter does (semantics.md: "a derived triple leaves the window
with the triples that support it"). Nothing is re-derived when the window moves.

A window triple that is itself a schema triple changes the rules for the whole window (the
graph's own schema counts, semantics.md); when the window's set of schema triples changes,
the counts are rebuilt under the new schema and the difference is reported. Streams rarely
carry schema triples, so this is the slow path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Generic

from sepia.reasoning.rdfs import entailed
from sepia.reasoning.schema import Schema, T, Triple


class SupportCounter(Generic[T]):
    """The closure of a multiset of triples under a background schema and its own schema
    triples; ``add`` and ``remove`` return the change of the closure (the delta)."""

    def __init__(self, background: Schema[T]) -> None:
        self.background = background
        self.schema = background
        self._window: Counter[Triple] = Counter()
        self._expansions: dict[Triple, frozenset[Triple]] = {}
        self._support: Counter[Triple] = Counter()

    def __contains__(self, triple: object) -> bool:
        return triple in self._support

    def __iter__(self) -> Iterator[Triple]:
        return iter(self._support)

    def __len__(self) -> int:
        return len(self._support)

    def add(self, triple: Triple) -> list[Triple]:
        """One more occurrence of ``triple``: the triples newly in the closure."""
        self._window[triple] += 1
        if self._changes_schema(triple):
            return self._rebuild()[0]
        return [t for t in self._expansion(triple) if self._count(t, +1) == 1]

    def remove(self, triple: Triple) -> list[Triple]:
        """One occurrence of ``triple`` fewer: the triples no longer in the closure."""
        if self._window[triple] == 0:
            raise KeyError(f"{triple} is not in the window")
        self._window[triple] -= 1
        if self._window[triple] == 0:
            del self._window[triple]
            if self._changes_schema(triple):
                return self._rebuild()[1]
            expansion = self._expansions.pop(triple)
        else:
            expansion = self._expansions[triple]
        return [t for t in expansion if self._count(t, -1) == 0]

    def update(
        self, added: Iterable[Triple], removed: Iterable[Triple]
    ) -> tuple[set[Triple], set[Triple]]:
        """Several arrivals and departures at once: (entered, left) the closure."""
        entered: set[Triple] = set()
        left: set[Triple] = set()
        for triple in removed:
            left.update(self.remove(triple))
        for triple in added:
            new = set(self.add(triple))
            entered |= new - left
            left -= new
        return entered, left

    def _expansion(self, triple: Triple) -> frozenset[Triple]:
        found = self._expansions.get(triple)
        if found is None:
            found = self._expansions[triple] = entailed(triple, self.schema)
        return found

    def _count(self, triple: Triple, step: int) -> int:
        count = self._support[triple] + step
        if count:
            self._support[triple] = count
        else:
            del self._support[triple]
        return count

    def _changes_schema(self, triple: Triple) -> bool:
        """A schema triple entering (first occurrence) or leaving (last) the window."""
        return triple[1] in self.schema.vocabulary.schema_predicates and (
            self._window[triple] <= 1 and triple not in self.background.triples
        )

    def _rebuild(self) -> tuple[list[Triple], list[Triple]]:
        """Recount the window under the background and its current own schema triples:
        (entered, left) the closure."""
        before = set(self._support)
        self.schema = self.background.extended(self._window)
        self._expansions = {t: entailed(t, self.schema) for t in self._window}
        self._support = Counter()
        for triple, occurrences in self._window.items():
            for t in self._expansions[triple]:
                self._support[t] += occurrences
        after = set(self._support)
        return list(after - before), list(before - after)
