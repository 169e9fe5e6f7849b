"""Ctrl-C during a Spark run: counted, never raised into a call to the JVM.

PySpark's own SIGINT handler cancels every job and raises KeyboardInterrupt wherever the
driver happens to be, often in the middle of a py4j command: py4j then logs a traceback,
the gateway connection breaks, and the run ended with "Gateway must be connected" instead
of stopping. While a run waits on its query, Sepia's handler only counts the signals; the
wait loop (`run._await`) sees the count between two short waits and stops the query
itself: after the batch in progress at the first Ctrl-C, at once at the second.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any


class Interrupts:
    """Counts Ctrl-Cs (SIGINT) while active; in the main thread only, where signals land."""

    def __init__(self) -> None:
        self.count = 0
        self._previous: Any = None

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._count)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def _count(self, _signum: int, _frame: FrameType | None) -> None:
        self.count += 1
