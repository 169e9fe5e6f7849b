"""An indexed graph of dictionary-encoded triples, maintained by insertion and deletion.

A window's instantaneous graph is the *set* of the triples of the elements it shows, so the
same triple carried by two elements must stay until both have left: every triple keeps a
reference count, and it enters or leaves the indexes only when that count crosses zero.
Indexes by subject, predicate and object (each a dict of sets) let a triple pattern with
any bound position be answered without scanning the graph. Consumers that maintain
something derived from the graph (delta evaluation, the fallback's store) ``watch`` it: a
journal of the triples that became visible (+1) or invisible (-1) since they last read it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

EncodedTriple = tuple[int, int, int]
SMALL = 16
"""A graph this small is scanned whole rather than indexed (an event graph, matched by a
few patterns once)."""
_NONE: frozenset[EncodedTriple] = frozenset()
Journal = dict[EncodedTriple, int]
"""Net changes of a graph's visible triples since the watcher last cleared it: +1 entered,
-1 left (a triple that left and came back, or the reverse, is not in it)."""


class TripleIndex:
    """A multiset of encoded triples seen as a set, indexed on each position.

    The position indexes are built on the first lookup that needs them and maintained from
    then on: a window read only through its journal (the fallback's store) never pays for
    them."""

    __slots__ = ("_by", "_counts", "_journals")

    def __init__(self, triples: Iterable[EncodedTriple] = ()) -> None:
        self._counts: dict[EncodedTriple, int] = {}
        self._by: tuple[dict[int, set[EncodedTriple]], ...] | None = None
        self._journals: list[Journal] = []
        counts = self._counts
        for triple in triples:
            counts[triple] = counts.get(triple, 0) + 1

    def __len__(self) -> int:
        return len(self._counts)

    @property
    def small(self) -> bool:
        """Scanned whole on lookups (not indexed): any join order costs about the same."""
        return self._by is None and len(self._counts) <= SMALL

    def triples(self) -> list[EncodedTriple]:
        """The visible triples."""
        return list(self._counts)

    def __contains__(self, triple: object) -> bool:
        return triple in self._counts

    def add(self, triple: EncodedTriple) -> None:
        """One more occurrence of ``triple``; it becomes visible on its first."""
        counts = self._counts
        count = counts.get(triple, 0)
        counts[triple] = count + 1
        if count:
            return
        if self._by is not None:
            for position, index in enumerate(self._by):
                index.setdefault(triple[position], set()).add(triple)
        for journal in self._journals:
            if journal.pop(triple, None) is None:
                journal[triple] = 1

    def remove(self, triple: EncodedTriple) -> None:
        """One occurrence fewer; the triple leaves the indexes with its last one."""
        counts = self._counts
        count = counts[triple]
        if count > 1:
            counts[triple] = count - 1
            return
        del counts[triple]
        if self._by is not None:
            for position, index in enumerate(self._by):
                bucket = index[triple[position]]
                bucket.discard(triple)
                if not bucket:
                    del index[triple[position]]
        for journal in self._journals:
            if journal.pop(triple, None) is None:
                journal[triple] = -1

    def _indexes(self) -> tuple[dict[int, set[EncodedTriple]], ...]:
        """The indexes by subject, predicate and object, built on first use."""
        if self._by is None:
            self._by = ({}, {}, {})
            for triple in self._counts:
                for position, index in enumerate(self._by):
                    index.setdefault(triple[position], set()).add(triple)
        return self._by

    def watch(self) -> Journal:
        """A new journal of this graph's changes from now on (the caller clears it)."""
        journal: Journal = {}
        self._journals.append(journal)
        return journal

    def match(self, s: int | None, p: int | None, o: int | None) -> Iterator[EncodedTriple]:
        """The triples that agree with the bound positions (None is a wildcard), read from
        the smallest index bucket among the bound positions (the hottest lookup of the
        joins: the common shapes are answered without building lists)."""
        if s is not None and p is not None and o is not None:
            return iter(((s, p, o),)) if (s, p, o) in self._counts else iter(())
        if self.small:  # an event's graph: a few triples
            bound = [(i, v) for i, v in enumerate((s, p, o)) if v is not None]
            return (t for t in self._counts if all(t[i] == v for i, v in bound))
        by_s, by_p, by_o = self._by or self._indexes()
        if s is not None:
            bucket = by_s.get(s, _NONE)
            other, at = (p, 1) if p is not None else (o, 2)
        elif o is not None:
            bucket = by_o.get(o, _NONE)
            other, at = p, 1
        elif p is not None:
            return iter(by_p.get(p, _NONE))
        else:
            return iter(self._counts)
        if other is None:
            return iter(bucket)
        second = (by_p if at == 1 else by_o).get(other, _NONE)
        if len(second) < len(bucket):
            bucket, other, at = second, (s if s is not None else o), (0 if s is not None else 2)
        return (t for t in bucket if t[at] == other)

    def estimate(self, s: int | None, p: int | None, o: int | None) -> int:
        """An upper bound of ``len(match(s, p, o))`` read off the index sizes (join order)."""
        if self.small:
            return len(self._counts)
        indexes = self._indexes()
        sizes = [len(indexes[i].get(v, ())) for i, v in enumerate((s, p, o)) if v is not None]
        return min(sizes) if sizes else len(self._counts)
