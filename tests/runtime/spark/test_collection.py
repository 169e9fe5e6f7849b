"""The collector is paused inside `paused_gc` and left as it was after, errors too."""

from __future__ import annotations

import gc

import pytest

from sepia.runtime.spark.collection import paused_gc


def test_paused_inside_and_enabled_again_after_an_error() -> None:
    assert gc.isenabled()
    with pytest.raises(ValueError), paused_gc():
        assert not gc.isenabled()
        raise ValueError
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled() -> None:
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
