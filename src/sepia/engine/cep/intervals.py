"""Encoded event mappings (row, from, to) and the pairing every dialect's operators share.

An event mapping is a solution row stamped with the interval of the events behind it
(RSEP-QL seed 001 section 4.2, CQELS-CEP seed 000 section 4.2, EP-SPARQL seed 003 section
4.2). The operators pair compatible mappings under a temporal condition; ``pairs`` hashes on
the slots every mapping of both sides binds, so a pairing costs what it yields rather than
the product of its inputs. Under consumption a mapping is a derivation, with a fourth field:
its support (the occurrences it was made of, part of its identity); ``joined`` carries it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from operator import itemgetter

from sepia.engine.rows import Row, compatible, merge

EventMapping = tuple[Row, int, int] | tuple[Row, int, int, frozenset]
"""(mapping, from, to) of one event mapping, or (mapping, from, to, support) of one
derivation (``sepia.semantics.mappings.Derivation``)."""

Keep = Callable[[list[EventMapping]], set[EventMapping]]
"""A filter over event mappings (a FILTER whose getDURATION() etc. read each interval)."""


def pairs(
    left: Collection[EventMapping], right: Collection[EventMapping]
) -> Iterator[tuple[EventMapping, EventMapping]]:
    """Every compatible (left, right) pair."""
    if not left or not right:
        return
    keys = _bound(left) & _bound(right)
    if not keys:
        yield from ((a, b) for a in left for b in right if compatible(a[0], b[0]))
        return
    index: dict[tuple, list[EventMapping]] = {}
    for b in right:
        index.setdefault(tuple(b[0][i] for i in keys), []).append(b)
    for a in left:
        for b in index.get(tuple(a[0][i] for i in keys), ()):
            if compatible(a[0], b[0]):
                yield a, b


def _bound(mappings: Collection[EventMapping]) -> set[int]:
    """The slots every mapping binds."""
    rows = iter(mappings)
    first = next(rows)[0]
    slots = {i for i, v in enumerate(first) if v is not None}
    for m in rows:
        row = m[0]
        slots = {i for i in slots if row[i] is not None}
        if not slots:
            break
    return slots


def joined(a: EventMapping, b: EventMapping, start: int, end: int) -> EventMapping:
    """a and b merged, stamped [start, end]; of two derivations, a derivation supported by
    both supports."""
    if len(a) == 3:
        return merge(a[0], b[0]), start, end
    return merge(a[0], b[0]), start, end, a[3] | b[3]  # type: ignore[misc]


def covering(a: EventMapping, b: EventMapping) -> EventMapping:
    """a and b merged, stamped with the interval covering both (EP-SPARQL's joins)."""
    return joined(a, b, min(a[1], b[1]), max(a[2], b[2]))


def ending(mappings: Collection[EventMapping], exact: int | None) -> list[EventMapping]:
    """The mappings that end at ``exact`` (all of them when it is None)."""
    return list(mappings) if exact is None else [m for m in mappings if m[2] == exact]


def values_at(slots: Sequence[int]) -> Callable[[Sequence], tuple]:
    """A row's values at ``slots``, always as a tuple (``itemgetter`` of one slot gives the
    bare value; of none, it cannot be made)."""
    if not slots:
        return _nothing
    if len(slots) == 1:
        (slot,) = slots
        return lambda row: (row[slot],)
    return itemgetter(*slots)


def _nothing(row: Sequence) -> tuple:
    return ()
