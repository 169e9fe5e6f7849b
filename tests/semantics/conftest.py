"""Fixtures of the semantics tests."""

from __future__ import annotations

import pytest

from sepia.rdf.stream import StreamElement

from .support import element


@pytest.fixture
def nearby() -> list[StreamElement]:
    """RSP-QL Example 6's S_nearby: diana-a@2, eve-b@2, carl-a@5, eve-a@7, diana-b@12."""
    return [
        element(2, ("diana", "isNearby", "a")),
        element(2, ("eve", "isNearby", "b")),
        element(5, ("carl", "isNearby", "a")),
        element(7, ("eve", "isNearby", "a")),
        element(12, ("diana", "isNearby", "b")),
    ]
