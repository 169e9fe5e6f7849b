"""R2S operators (RSP-QL Definitions 20-22) with bag difference (semantics.md)."""

from __future__ import annotations

from collections import Counter

import pytest

from sepia.semantics.r2s import dstream, istream, rstream


@pytest.mark.parametrize(
    ("operator", "now", "previous", "expected"),
    [
        (rstream, "aab", "ab", "aab"),
        (istream, "aab", "ab", "a"),  # present twice now, once before: inserted once
        (istream, "ab", "aab", ""),
        (istream, "ab", "", "ab"),
        (dstream, "ab", "aab", "a"),
        (dstream, "c", "ab", "ab"),
        (dstream, "ab", "ab", ""),
    ],
)
def test_r2s(operator, now, previous, expected):
    assert operator(Counter(now), Counter(previous)) == Counter(expected)
