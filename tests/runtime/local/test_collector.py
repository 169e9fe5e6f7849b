"""A replay runs with the collector's thresholds raised, and gives them back after."""

from __future__ import annotations

import gc

import pytest

from sepia.runtime.local.collector import OLDER, YOUNG, sparse_collections


def test_thresholds_are_raised_inside_and_restored_after_even_on_errors() -> None:
    before = gc.get_threshold()
    with sparse_collections():
        assert gc.get_threshold() == (YOUNG, OLDER, OLDER) == (100_000, 10, 10)
    assert gc.get_threshold() == before
    with pytest.raises(ValueError), sparse_collections():
        raise ValueError("a bad element")
    assert gc.get_threshold() == before
