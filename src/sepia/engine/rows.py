"""Solutions as rows: a tuple of term ids indexed by a variable-slot table (style.md 5).

Every variable of a query (and every blank node of its patterns, which BGP matching treats
as a variable that is never output) gets one slot; a solution is a tuple with one entry per
slot, None where the variable is unbound. Rows map straight onto Arrow or Spark columns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

Row = tuple[int | None, ...]

BLANK = "_:"
"""Slot names of blank nodes in patterns start with this (never a variable name)."""
FROM, TO, MATCH = "__from", "__to", "__match"
"""Hidden slots of event queries: a match's interval and number, plain integers (not ids)."""
HIDDEN = (FROM, TO, MATCH)


def interval_slots(k: int) -> tuple[str, str]:
    """Where the k-th MATCH of a query puts its matches' interval: the first in FROM / TO,
    each other in its own hidden slots (named as the reference's hidden variables), so that
    joining two MATCHes does not equate their intervals."""
    return (FROM, TO) if k == 0 else (f"{FROM}_{k}", f"{TO}_{k}")


@dataclass(frozen=True, slots=True)
class Slots:
    """The variable-slot table of one query."""

    names: tuple[str, ...]

    @classmethod
    def of(cls, names: Iterable[str]) -> Slots:
        return cls(tuple(sorted(set(names))))

    def index(self, name: str) -> int:
        return self.names.index(name)

    def empty(self) -> Row:
        """The row of no bindings (the unit of join)."""
        return (None,) * len(self.names)

    def visible(self, name: str) -> bool:
        """Whether a slot is a query variable (output), not a blank node or hidden slot."""
        return not name.startswith(BLANK) and name not in HIDDEN and not _OTHER.fullmatch(name)

    def hidden(self) -> list[str]:
        """The hidden slots of the table (a match's interval and number)."""
        return [n for n in self.names if n in HIDDEN or _OTHER.fullmatch(n)]


_OTHER = re.compile(f"({FROM}|{TO})_[0-9]+")
"""The interval slots of a query's second, third ... MATCH (``interval_slots``)."""


def compatible(a: Row, b: Row) -> bool:
    """SPARQL compatibility: the rows agree wherever both are bound (a plain loop: asked
    per candidate and run, it is twice as fast as ``all`` over a generator)."""
    for x, y in zip(a, b, strict=True):  # noqa: SIM110
        if x is not None and y is not None and x != y:
            return False
    return True


def merge(a: Row, b: Row) -> Row:
    """The union of two compatible rows."""
    return tuple([y if x is None else x for x, y in zip(a, b, strict=True)])


def shares_binding(a: Row, b: Row) -> bool:
    """Whether the rows' domains intersect (MINUS removes only such compatible rows)."""
    return any(x is not None and y is not None for x, y in zip(a, b, strict=True))
