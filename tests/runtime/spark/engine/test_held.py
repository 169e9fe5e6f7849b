"""A key's held elements in blocks: a step writes the blocks it changed, and the stored
blocks read back as the elements held (hand-worked times; `held`)."""

from __future__ import annotations

from sepia.runtime.spark.element_batches import ElementBatch
from sepia.runtime.spark.elements import as_text, term_text
from sepia.runtime.spark.held import release, stored_blocks

STREAMS = ("http://example.org/a", "http://example.org/b")


def row(stream: int, seq: int, end: int) -> tuple:
    terms = term_text([f"<http://example.org/s{seq}>", "<http://example.org/p>", f'"{end}"'])
    return (STREAMS[stream], f"f{stream}", seq, f"http://example.org/g{seq}", end, end,
            "abstract", terms)  # fmt: skip


def ends(batch: ElementBatch) -> list[int]:
    return batch.end.tolist()


def reread(changed: dict) -> dict[str, list[tuple]]:
    """The changed blocks as the state store gives them back, as rows of term text."""
    written = [(key, *value) for key, value in changed.items() if value is not None]
    return {key: [as_text(r) for r in block] for key, block in stored_blocks(written).items()}


def test_a_step_adds_one_block_cuts_one_and_removes_those_passed():
    fresh = ElementBatch.of([row(0, 0, 1), row(0, 1, 3), row(1, 0, 5), row(1, 1, 2)])
    due, kept, changed = release({}, fresh, 2, STREAMS, "one")
    assert ends(due) == [1, 2]
    assert list(kept) == ["one"] and ends(kept["one"]) == [3, 5]
    assert reread(changed) == {"one": [row(0, 1, 3), row(1, 0, 5)]}

    # an earlier element of b and a later one of a: the horizon cuts block "one"
    fresh = ElementBatch.of([row(0, 2, 6), row(1, 2, 4)])
    due, kept, changed = release(kept, fresh, 4, STREAMS, "two")
    assert [as_text(r) for r in due] == [row(0, 1, 3), row(1, 2, 4)]
    assert {key: ends(block) for key, block in kept.items()} == {"one": [5], "two": [6]}
    assert reread(changed) == {"one": [row(1, 0, 5)], "two": [row(0, 2, 6)]}

    # nothing new, the horizon where it was: nothing written, the blocks as they were
    due, same, changed = release(kept, ElementBatch.of([]), 4, STREAMS, "three")
    assert len(due) == 0 and changed == {}
    assert all(same[key] is kept[key] for key in kept) and list(same) == ["one", "two"]

    # the horizon passes both: both removed, their elements due in time order
    due, kept, changed = release(same, ElementBatch.of([]), 10, STREAMS, "four")
    assert ends(due) == [5, 6] and kept == {} and changed == {"one": None, "two": None}


def test_due_elements_of_equal_time_follow_the_streams_order_then_the_file_position():
    blocks = {"held": ElementBatch.of([row(1, 7, 3), row(0, 9, 3)])}
    fresh = ElementBatch.of([row(0, 8, 3), row(1, 1, 4)])
    due, kept, _ = release(blocks, fresh, 3, STREAMS, "new")
    assert [(as_text(r)[0], r[2]) for r in due] == [(STREAMS[0], 8), (STREAMS[0], 9),
                                                     (STREAMS[1], 7)]  # fmt: skip
    assert list(kept) == ["new"] and ends(kept["new"]) == [4]
