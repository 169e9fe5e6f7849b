"""The JVM's standard error reaches ours without the lines that say nothing to a user."""

from __future__ import annotations

import contextlib
import re
import socket

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


def test_the_traceback_of_a_worker_that_came_too_late_is_dropped(capfd) -> None:
    """Spark waits 10 s for a Python worker it starts; one that connects later fails with
    CANNOT_OPEN_SOCKET while the run has already started the query again."""
    _forward([
        b"Traceback (most recent call last):\n",
        b'  File "<frozen runpy>", line 198, in _run_module_as_main\n',
        b"pyspark.errors.exceptions.base.PySparkRuntimeError: [CANNOT_OPEN_SOCKET] Can not "
        b"open socket: timed out\n",
        b"Traceback (most recent call last):\n",
        b'  File "q.py", line 1, in <module>\n',
        b"ZeroDivisionError: division by zero\n",
        b"07:30:06 ERROR TaskSetManager: Task 0 in stage 3.0 failed 4 times\n",
    ])  # fmt: skip
    assert capfd.readouterr().err == (
        "Traceback (most recent call last):\n"
        '  File "q.py", line 1, in <module>\n'
        "ZeroDivisionError: division by zero\n"
        "07:30:06 ERROR TaskSetManager: Task 0 in stage 3.0 failed 4 times\n"
    )


def test_only_standalone_masters_are_checked_and_any_live_host_will_do() -> None:
    """Ports bound here: two that refuse (bound, not listening) and one that accepts, so no
    other process's port is probed; a refusal comes at once, the 30 s only bound a slow one."""
    check_master("local[2]")
    check_master("yarn")
    with contextlib.ExitStack() as stack:
        closed = [stack.enter_context(socket.socket()) for _ in range(2)]
        for sock in closed:
            sock.bind(("127.0.0.1", 0))
        refused = [f"127.0.0.1:{sock.getsockname()[1]}" for sock in closed]
        listening = stack.enter_context(socket.create_server(("127.0.0.1", 0)))
        live = f"127.0.0.1:{listening.getsockname()[1]}"
        check_master(f"spark://{refused[0]},{live}", timeout=30)
        with pytest.raises(
            SparkUnavailable, match=rf"{re.escape(refused[0])}: .*{re.escape(refused[1])}: "
        ):
            check_master(f"spark://{','.join(refused)}", timeout=30)
