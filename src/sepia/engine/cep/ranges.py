"""A range index for the pairs of a SEQ under a FILTER comparison (W8's drop-then-rise).

``{ ?c :price ?p1 } SEQ { ?c :price ?p2 } FILTER(?p2 < ?p1 * 0.7 && ...)`` pairs each new
price with every earlier one of its company, and the comparison then rejects almost all of
them. When one side of a top-level ``&&`` conjunct ``A op B`` (op one of = < <= > >=) reads
only variables the SEQ's left operand certainly binds and the other only the right
operand's, A is a value of the left mapping alone and B of the right one alone: the left
mappings are kept sorted by that value (per value of the slots both operands bind), and
each right mapping finds by bisection the partners the comparison keeps.

Exact, as SPARQL decides the comparison: values come from ``r2r.numeric``'s operands, which
answer only where they are sure (else ``UNSURE``), and only exact numbers (xsd:integer and
xsd:decimal, compared exactly as SPARQL promotes them) are ordered. Any other value (a
double, a non-number, an error, an unbound variable) is paired and tested by the FILTER as
before. A pair the index leaves out has the conjunct false, so the whole && is false: an
error or a false in one conjunct of && rejects the mapping whatever the others are.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Generic, TypeVar

from sepia.engine.r2r.numeric import Value, Values

Row = Sequence[int | None]

FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}
"""``a op b`` is ``b FLIPPED[op] a``."""


@dataclass(frozen=True, eq=False, slots=True, weakref_slot=True)
class PairTest:
    """A FILTER conjunct ``key op probe``: ``key`` a value of the SEQ's left mapping,
    ``probe`` of its right mapping; ``slots`` the slots both operands certainly bind (the
    index's buckets). ``whole``: the conjunct is the FILTER's whole condition, so a pair
    the index finds needs no further test."""

    key: Value
    probe: Value
    operator: str
    slots: tuple[int, ...]
    whole: bool
    text: str
    """How ``sepia explain`` shows it."""
    values: Values
    """The id caches ``key`` and ``probe`` read (told of the ids the dictionary forgets)."""

    def forget_ids(self, dropped: set[int]) -> None:
        self.values.forget_ids(dropped)

    def span(self, keys: list[Decimal], probe: Decimal) -> tuple[int, int]:
        """The positions in sorted ``keys`` of those with ``key op probe``."""
        return SPANS[self.operator](keys, probe)


SPANS: dict[str, Callable[[list[Decimal], Decimal], tuple[int, int]]] = {
    "<": lambda keys, probe: (0, bisect_left(keys, probe)),
    "<=": lambda keys, probe: (0, bisect_right(keys, probe)),
    ">": lambda keys, probe: (bisect_right(keys, probe), len(keys)),
    ">=": lambda keys, probe: (bisect_left(keys, probe), len(keys)),
    "=": lambda keys, probe: (bisect_left(keys, probe), bisect_right(keys, probe)),
}
"""Where in sorted keys those with ``key op probe`` lie, per operator."""


def exact(value: object) -> Decimal | None:
    """An exact number (xsd:integer or xsd:decimal, as ``r2r.numeric`` reads them) as a
    Decimal, else None: SPARQL compares two such by their values, as Decimals do."""
    if type(value) is Decimal:
        return value
    return Decimal(value) if type(value) is int else None


Item = TypeVar("Item")


@dataclass(slots=True)
class Sorted(Generic[Item]):
    """One bucket's exact keys in order, and the item (a position, a mapping) of each."""

    keys: list[Decimal] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)

    def insert(self, key: Decimal, item: Item) -> None:
        """``item`` after every key not above ``key`` (arrival order among equal keys)."""
        at = bisect_right(self.keys, key)
        self.keys.insert(at, key)
        self.items.insert(at, item)


@dataclass(slots=True)
class RangeIndex:
    """The mappings of one collection (by their position in it) under one ``PairTest``:
    those with an exact key sorted per bucket, the others (``unsure``) per bucket, and
    those not binding a bucket slot (``loose``, met by every probe)."""

    test: PairTest
    ordered: dict[tuple[int | None, ...], Sorted[int]] = field(default_factory=dict)
    unsure: dict[tuple[int | None, ...], list[int]] = field(default_factory=dict)
    loose: list[int] = field(default_factory=list)

    def add(self, position: int, row: Row) -> None:
        bucket = tuple(row[s] for s in self.test.slots)
        if None in bucket:
            self.loose.append(position)
            return
        key = exact(self.test.key(row))
        if key is None:
            self.unsure.setdefault(bucket, []).append(position)
            return
        found = self.ordered.get(bucket)
        if found is None:
            found = self.ordered[bucket] = Sorted()
        found.insert(key, position)

    def partners(self, row: Row) -> tuple[list[int], list[int]] | None:
        """For a right mapping's row: the positions whose pair the conjunct surely keeps,
        and those left to the FILTER (None: every position is left to it, as the row does
        not bind a bucket slot)."""
        bucket = tuple(row[s] for s in self.test.slots)
        if None in bucket:
            return None
        found = self.ordered.get(bucket)
        others = self.unsure.get(bucket, []) + self.loose
        if found is None:
            return [], others
        probe = exact(self.test.probe(row))
        if probe is None:
            return [], found.items + others
        low, high = self.test.span(found.keys, probe)
        return found.items[low:high], others
