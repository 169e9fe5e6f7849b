"""The elements a key holds back: received, but stamped after its horizon (a later batch
may still bring earlier ones), kept in blocks so that a step writes what it changed.

A unit reading two streams steps at the earlier of their latest times, so the faster
stream's elements wait for the slower one: live W1 at 20,000 elements/s (a coupon stream
of 25 elements/s beside 19,975 sightings/s) held tens of thousands of sightings whenever
the coupons' times fell behind. Written whole at every step (and read back whole at the
next), they were rewritten as JSON every batch, and a stateful stage that took 0.3 s a
batch took 0.7 s while the lag lasted. Here each step that holds back new elements adds
one block of them (`elements.pack`'s row, as JSON, under a key of its own); a later step
removes the blocks its horizon passed whole, rewrites the one or two it cut into, and
leaves the rest alone. The live session keeps the blocks as columns beside it
(`incremental_engine`), so a step reads them from the state store only when it restores.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from sepia.runtime.spark.element_batches import ElementBatch, unpack

HeldBlocks = dict[str, ElementBatch]
"""A key's held elements by block key, each block as columns, in the order added."""


def stored_blocks(rows: Iterable[tuple]) -> HeldBlocks:
    """The blocks from their map entries: (key, the packed row's JSON)."""
    return {key: unpack([tuple(json.loads(text))])[0] for key, text in rows}


def block_text(block: ElementBatch) -> str:
    """A block as its map entry's value: its rows packed into one row (from its columns), as
    JSON."""
    return json.dumps(block.packed())


def release(
    blocks: Mapping[str, ElementBatch],
    fresh: ElementBatch,
    horizon: int,
    streams: Sequence[str],
    key: str,
) -> tuple[ElementBatch, HeldBlocks, dict[str, tuple[str] | None]]:
    """The held and `fresh` elements stamped at or before `horizon`, in arrival order;
    the blocks still held, `fresh`'s later elements as a new block under `key`; and the
    map entries to write (a block's new text) or remove (None). Only the due elements are
    gathered and ordered: a step's work follows what it releases, not what stays held."""
    due: list[ElementBatch] = []
    kept: HeldBlocks = {}
    changed: dict[str, tuple[str] | None] = {}
    for name, block in [*blocks.items(), (key, fresh)]:
        later = block.end > horizon
        if name in blocks and later.all():
            kept[name] = block  # untouched
            continue
        if not later.all():
            due.append(block if not later.any() else block.take(np.flatnonzero(~later)))
        if later.any():
            kept[name] = block if later.all() else block.take(np.flatnonzero(later))
            changed[name] = (block_text(kept[name]),)
        elif name in blocks:
            changed[name] = None
    joined = due[0] if len(due) == 1 else ElementBatch.of([], *due)
    return joined.in_arrival_order(streams), kept, changed
