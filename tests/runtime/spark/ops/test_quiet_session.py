"""The JVM's standard error reaches ours without the lines that say nothing to a user."""

from __future__ import annotations

import pytest

from sepia.runtime.spark.session import SparkUnavailable, _forward, check_master


def test_start_up_noise_is_dropped_and_everything_else_kept(capfd) -> None:
    _forward([
        b"WARNING: Using incubator modules: jdk.incubator.vector\n",
        b"Starting Streaming TransformWithStateInPandas Python worker.\n",
        b"\n",
        b"Streaming TransformWithStateInPandas Python worker finish init stage ...\n",
        b"\n",
        b"07:30:06 ERROR TaskSetManager: Task 0 in stage 3.0 failed 1 times\n",
        b"\n",
        b"Traceback (most recent call last):\n",
    ])  # fmt: skip
    assert capfd.readouterr().err == (
        "07:30:06 ERROR TaskSetManager: Task 0 in stage 3.0 failed 1 times\n"
        "\nTraceback (most recent call last):\n"
    )


def test_only_standalone_masters_are_checked_and_any_live_host_will_do() -> None:
    check_master("local[2]")
    check_master("yarn")
    with pytest.raises(SparkUnavailable, match=r"127\.0\.0\.1:1: .*127\.0\.0\.1:2: "):
        check_master("spark://127.0.0.1:1,127.0.0.1:2", timeout=1)
