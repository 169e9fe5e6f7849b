"""Relation-to-stream operators as steps (RSP-QL seed 004, Definitions 20-22).

``step(operator, previous, now) -> (state, output)``: the state is the previous answer (a
bag of rows, kept only by IStream and DStream), the output the bag to stream out. Bags are
compared as multisets, as semantics.md says (CQL's bag difference).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from typing import TypeVar, assert_never

from sepia.algebra import query as qa

Key = TypeVar("Key", bound=Hashable)


def step(
    operator: type[qa.RStream] | type[qa.IStream] | type[qa.DStream],
    previous: Counter[Key],
    now: Counter[Key],
) -> tuple[Counter[Key], Counter[Key]]:
    """(new state, output) of one evaluation: the change from ``previous`` to ``now``
    seen as all of ``now`` added and all of ``previous`` removed."""
    return delta_step(operator, now, now, previous)


def delta_step(
    operator: type[qa.RStream] | type[qa.IStream] | type[qa.DStream],
    now: Counter[Key],
    added: Counter[Key],
    removed: Counter[Key],
) -> tuple[Counter[Key], Counter[Key]]:
    """``step`` given the answer's change (``now`` = previous + added - removed): the bag
    difference needs only the change, max(0, added - removed) per row (delta evaluation)."""
    if operator is qa.RStream:
        return Counter(), now
    if operator is qa.IStream:
        return now, added - removed
    if operator is qa.DStream:
        return now, removed - added
    assert_never(operator)  # type: ignore[arg-type]


def operator_of(query: qa.Query) -> type[qa.RStream] | type[qa.IStream] | type[qa.DStream]:
    """The query's streaming operator; a bare graph pattern streams like RStream."""
    match query.expression:
        case qa.IStream():
            return qa.IStream
        case qa.DStream():
            return qa.DStream
        case _:
            return qa.RStream
