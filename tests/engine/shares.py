"""How often the differential tests compare something: each comparison with the reference
records whether the reference's answer was empty, under the running test's name.

An empty reference answer only checks that the engine is silent too, so each differential
family must draw at least ``FLOOR`` of its examples with a non-empty answer
(``test_shares.py``, run last, checks the shares of the tests that ran before it). The
generators aim at answers; ``judge`` then keeps an example whose answer is empty only one
time in ``KEEP_EMPTY`` (chosen by a checksum of the example, so the suite's draws stay
fixed) and hands the others back to hypothesis, which draws another in its place.
"""

from __future__ import annotations

import os
import zlib
from collections import defaultdict
from collections.abc import Iterable

from hypothesis import reject

from sepia.rdf.results import Result

FLOOR = 0.70
KEEP_EMPTY = 8
RECORDS: dict[str, list[tuple[str, bool]]] = defaultdict(list)
"""Test function name -> (query text, reference answer non-empty) per example compared."""
DRAWN: dict[str, list[tuple[str, bool]]] = defaultdict(list)
"""Test function name -> reference answer non-empty, per example drawn (compared or not):
the share the generators give before ``judge`` rejects."""


def answers(results: Iterable[Result]) -> bool:
    """Whether a reference answer says something: a solution, a triple or a true ASK."""
    return any(
        r.binding is not None or bool(r.triples) or r.boolean is True for r in results
    )


def current_test() -> str:
    """The running test function's name (pytest sets PYTEST_CURRENT_TEST)."""
    node = os.environ.get("PYTEST_CURRENT_TEST", "outside-pytest")
    return node.split("::")[-1].split(" ")[0].split("[")[0]


def judge(text: str, data: object, expected: list[Result]) -> None:
    """Record the example, or reject it (most empty answers: see the module's docstring)."""
    found = answers(expected)
    DRAWN[current_test()].append((text, found))
    if not found and zlib.crc32(f"{text}{data!r}".encode()) % KEEP_EMPTY:
        reject()
    RECORDS[current_test()].append((text, found))


def share(name: str) -> float:
    rows = RECORDS[name]
    return sum(found for _, found in rows) / len(rows)


def drawn_share(name: str) -> float:
    return sum(found for _, found in DRAWN[name]) / len(DRAWN[name])
