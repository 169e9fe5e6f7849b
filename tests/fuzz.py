"""What the fuzz tests share: a per-run deadline, so a hang fails the run instead of the suite."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


class Hang(AssertionError):
    """A fuzz run went past its deadline."""


@contextmanager
def deadline(seconds: float, what: str) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (SIGALRM: the main thread, where pytest runs)."""

    def expire(signum: int, frame: object) -> None:
        raise Hang(f"no answer after {seconds} s: {what}")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
