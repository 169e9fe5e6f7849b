"""Dictionary encoding: terms become integers on entry and are decoded only for output.

One dictionary serves every stream and the background data of a run, so equal terms get
equal ids everywhere. Its whole content is ``rows()`` (id, N-Triples text), so it can be
written into Spark state, broadcast, or rebuilt with ``from_rows`` on another process.
Ids start at 1 and are never reused; "unbound" is never an id (it is ``None``). A term no
state refers to any more may be ``forget``-ten: its id is retired with it, so a cache still
keyed by that id can never meet another term under it.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator
from itertools import takewhile
from typing import Protocol

from sepia.rdf.terms import Term, canonical, parse_term, term_to_nt


class IdCache(Protocol):
    """A cache keyed by term ids that does not keep its terms alive: told of the ids a
    dictionary forgot, it drops what it holds of them."""

    def forget_ids(self, dropped: set[int]) -> None: ...


class Dictionary:
    """A bijection between terms (by their N-Triples text) and positive integers."""

    __slots__ = ("_caches", "_ids", "_next", "_texts")

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._texts: dict[int, str] = {}  # in id order: ids are allocated increasing
        self._next = 1
        self._caches: weakref.WeakSet[IdCache] = weakref.WeakSet()

    def watch(self, cache: IdCache) -> None:
        """Tell ``cache`` of the ids ``forget`` drops (a collection does not count what it
        holds as live: it is a cache)."""
        self._caches.add(cache)

    @property
    def caches(self) -> list[IdCache]:
        return list(self._caches)

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def last_id(self) -> int:
        """The highest id ever allocated (0 for none): ``rows(since=last_id)`` is what is new."""
        return self._next - 1

    def encode_text(self, text: str) -> int:
        """The id of a term given in N-Triples text, allocating one if it is new."""
        found = self._ids.get(text)
        if found is not None:
            return found
        new = self._next
        self._next = new + 1
        self._ids[text] = new
        self._texts[new] = text
        return new

    def encode(self, term: Term) -> int:
        """The id of a pyoxigraph term (in its canonical form: ``terms.canonical``),
        allocating one if it is new."""
        return self.encode_text(term_to_nt(canonical(term)))

    def encode_canonical(self, term: Term, text: str) -> int:
        """The id of ``term``, whose canonical N-Triples text the caller knows is ``text``
        (a subclass that caches terms keeps it, so it is never parsed back)."""
        return self.encode_text(text)

    def encode_many(self, texts: Iterable[str]) -> list[int]:
        """Ids for many N-Triples texts at once (the bulk path for columns of terms): the
        ids ``encode_text`` would give one by one (new texts numbered in order of first
        appearance), looked up and allocated by the dict's own bulk operations."""
        listed = list(texts)
        ids = self._ids
        missing = [t for t, f in zip(listed, map(ids.get, listed), strict=True) if f is None]
        if missing:
            fresh = list(dict.fromkeys(missing))
            start, self._next = self._next, self._next + len(fresh)
            ids.update(zip(fresh, range(start, self._next), strict=True))
            self._texts.update(zip(range(start, self._next), fresh, strict=True))
        return list(map(ids.__getitem__, listed))

    def lookup(self, text: str) -> int | None:
        """The id of a term already known, else None: queries must not grow the dictionary."""
        return self._ids.get(text)

    def decode_text(self, term_id: int) -> str:
        """The N-Triples text of an id; an unknown (or forgotten) id is a bug, so it raises."""
        found = self._texts.get(term_id)
        if found is None:
            raise KeyError(f"term id {term_id} is not in the dictionary")
        return found

    def decode(self, term_id: int) -> Term:
        """The pyoxigraph term of an id."""
        return parse_term(self.decode_text(term_id))

    def ids(self, above: int = 0) -> list[int]:
        """The ids the dictionary holds above ``above``, in increasing order: read from the
        newest back, so a collection above the pinned ids (a large background's) does not
        pass over them."""
        return list(takewhile(above.__lt__, reversed(self._texts)))[::-1]

    def forget(self, dropped: set[int]) -> None:
        """Drop the terms of these ids (the caller vouches that no state refers to them;
        their ids are never given again) and tell the watching caches."""
        for term_id in dropped:
            del self._ids[self._texts.pop(term_id)]
        if dropped:
            for cache in self.caches:
                cache.forget_ids(dropped)

    def rows(self, since: int = 0) -> Iterator[tuple[int, str]]:
        """(id, text) rows with id > since, in id order: the dictionary's state, or the part
        added since."""
        newer = []
        for term_id, text in reversed(self._texts.items()):
            if term_id <= since:
                break
            newer.append((term_id, text))
        return reversed(newer)

    def rows_between(self, first: int, stop: int) -> list[tuple[int, str]]:
        """(id, text) rows with first <= id < stop, in id order (a block of a stored
        dictionary: `runtime.spark.incremental_engine.StoredTerms`)."""
        texts = self._texts
        return [(i, texts[i]) for i in range(first, stop) if i in texts]

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[int, str]]) -> Dictionary:
        """Rebuild a dictionary from its rows, in any order; clashes are errors."""
        dictionary = cls()
        dictionary.extend(rows)
        return dictionary

    def reserve(self, last_id: int) -> None:
        """Ids up to ``last_id`` are taken (another copy of this dictionary gave them, and
        may have forgotten the terms since): new terms get ids after it, as they would
        there, so a restored copy allocates (and labels fresh blank nodes) as the original."""
        self._next = max(self._next, last_id + 1)

    def extend(self, rows: Iterable[tuple[int, str]]) -> None:
        """Add rows produced by another copy of this dictionary (new ids must come after
        this one's: the gaps between them are terms that copy forgot)."""
        for term_id, text in sorted(rows):
            known = self._ids.get(text)
            if known is not None:
                if known != term_id:
                    raise ValueError(f"term {text} has id {known} here and {term_id} there")
                continue
            if term_id < self._next:
                held = self._texts.get(term_id, "a forgotten term")
                raise ValueError(f"dictionary rows give id {term_id} to {text} and {held}")
            self._next = term_id
            self.encode_text(text)
