"""Relation-to-stream operators (RSP-QL seed 004, Definitions 20-22).

The result of each evaluation is a bag (a Counter of rows). IStream and DStream compare it
with the previous evaluation's bag as multisets, the way CQL does (semantics.md): a row
present twice now and once before is inserted once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from typing import TypeVar

Row = TypeVar("Row", bound=Hashable)


def rstream(now: Counter[Row], previous: Counter[Row]) -> Counter[Row]:
    """RStream: the whole answer at every evaluation."""
    del previous  # RStream does not look back; the parameter keeps the three operators alike
    return Counter(now)


def istream(now: Counter[Row], previous: Counter[Row]) -> Counter[Row]:
    """IStream: what the answer gained since the previous evaluation (bag difference)."""
    return now - previous


def dstream(now: Counter[Row], previous: Counter[Row]) -> Counter[Row]:
    """DStream: what the answer lost since the previous evaluation (bag difference)."""
    return previous - now
