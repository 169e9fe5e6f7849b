"""Python's cyclic garbage collector run less often while a finite input is replayed.

The engine makes many short-lived containers per element (mappings, rows, results); with
Python's default threshold a young-generation collection runs every 700 new containers and
the older generations follow, walking what is alive again and again. Measured on 100,000
elements (CPU of `sepia run --engine local`, two rounds, alternating): W8's row engine
8.2 -> 6.5 s, W9's 4.2 -> 3.9 s, W1's columnar run 0.63-0.80 -> 0.56-0.57 s; the same
outputs and the same peak memory (W8 174 MiB). Reference counting still frees what the
engine drops at once; cycles wait much longer, so the engine's per-batch work must not make
reference cycles (a nested function that calls itself is one) or each batch it holds stays
until the next full collection: that grew a 1,000,000-element W4 run's peak from 196 to
408 MiB before the columnar sequences' step lost its self-calling closure. Live and paced
runs keep the default: a young collection of 100,000 objects is a pause of a few
milliseconds, which their latency would show.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG = 100_000
"""New containers between two young-generation collections inside (Python's default: 700)."""
OLDER = 10
"""Collections of a generation between two of the next one (Python's default: 10)."""


@contextmanager
def sparse_collections() -> Iterator[None]:
    """The collector's thresholds raised inside, as they were after (also on errors)."""
    before = gc.get_threshold()
    gc.set_threshold(YOUNG, OLDER, OLDER)
    try:
        yield
    finally:
        gc.set_threshold(*before)
