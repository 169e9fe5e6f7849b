"""Reading ahead on a thread: each item of a generator computed while the caller works on
the one before.

The readers that use it hand their text to kernels that release the GIL (polars cutting
terms, numpy finding lines), so on a second core reading overlaps the work that consumes it
(the engine, or pyoxigraph loading a background store).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator
from typing import TypeVar

T = TypeVar("T")
_END = object()


def read_ahead(blocks: Generator[T, None, None], name: str) -> Generator[T, None, None]:
    """``blocks``, each computed on a thread called ``name`` one ahead of the caller. An
    exception of ``blocks`` is raised here, in its place; closing this iterator stops the
    thread (and closes ``blocks``, its file with it)."""
    handoff: queue.Queue[object] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def hand(item: object) -> bool:
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            if all(hand(item) for item in blocks):
                hand(_END)
        except BaseException as error:  # raised again on the caller's thread
            hand(error)
        finally:
            blocks.close()

    threading.Thread(target=produce, name=name, daemon=True).start()
    try:
        while (item := handoff.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield item  # type: ignore[misc]
    finally:
        stop.set()
