"""How often the differential tests compare something, held by each test where it draws.

An example whose reference answer is empty only checks that the engine is silent too. Each
comparison with the reference goes through ``judge``, which tallies whether the reference
answered under the running test (its pytest node id: each parametrized family on its own).
The generators aim at answers; ``judge`` then keeps an example whose answer is empty only
one time in ``KEEP_EMPTY`` (chosen by a checksum of the example, so the suite's draws stay
fixed) and hands the others back to hypothesis, which draws another in their place.

This module is also a pytest plugin (``tests/conftest.py`` registers it): when a test that
compared ``ENOUGH`` examples or more passes, it fails unless at least ``FLOOR`` of them had
a non-empty reference answer. The verdict is the test's own: it depends on no other test,
on no order and on no subset being run. The run ends with one line on the shares (the
share of every differential test with ``-v``); each test's tally travels in its report's
``user_properties``, so the line is the same when pytest-xdist runs tests in other processes.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pytest
from hypothesis import reject
from hypothesis.control import currently_in_test_context

FLOOR = 0.70
KEEP_EMPTY = 8
ENOUGH = 10
"""A test that compared fewer examples (a plain test, a single replay) is not judged."""


@dataclass
class Tally:
    """One test's examples: compared (kept) and drawn, and how many of each answered."""

    compared: int = 0
    answered: int = 0
    drawn: int = 0
    drawn_answered: int = 0

    @property
    def share(self) -> float:
        return self.answered / self.compared

    @property
    def drawn_share(self) -> float:
        return self.drawn_answered / self.drawn


TALLIES: dict[str, Tally] = {}
"""Node id of a test -> its tally, for the tests that ran in this process."""

REPORTED: dict[str, Tally] = {}
"""Node id of a judged test -> its tally, from the reports of every process of the run."""

PROPERTY = "differential-share"


def answers(results: Iterable[object]) -> bool:
    """Whether a reference answer says something: a solution, a triple or a true ASK."""
    return any(
        r.binding is not None or bool(r.triples) or r.boolean is True  # type: ignore[attr-defined]
        for r in results
    )


def current_test() -> str:
    """The running test's node id (pytest sets PYTEST_CURRENT_TEST)."""
    return os.environ.get("PYTEST_CURRENT_TEST", "outside-pytest").rsplit(" (", 1)[0]


def judge(text: str, data: object, expected: Iterable[object]) -> None:
    """Tally the example, or reject it (most empty answers: see the module's docstring)."""
    found = answers(expected)
    tally = TALLIES.setdefault(current_test(), Tally())
    tally.drawn += 1
    tally.drawn_answered += found
    keep = found or not zlib.crc32(f"{text}{data!r}".encode()) % KEEP_EMPTY
    if not keep and currently_in_test_context():
        reject()
    tally.compared += 1
    tally.answered += found


def verdict(tally: Tally) -> str | None:
    """Why a test's examples compared too little, or None if they did not."""
    if tally.compared < ENOUGH or tally.share >= FLOOR:
        return None
    return (
        f"{tally.share:.1%} of the {tally.compared} examples compared had a non-empty "
        f"reference answer ({tally.drawn_share:.1%} of the {tally.drawn} drawn), under the "
        f"{FLOOR:.0%} floor: steer the test's generators towards answers (tests/engine/shares.py)"
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A passing test is judged on its own examples (a failing one keeps its failure)."""
    TALLIES.pop(item.nodeid, None)
    result = yield
    tally = TALLIES.get(item.nodeid, Tally())
    if tally.compared >= ENOUGH:
        item.user_properties.append((PROPERTY, vars(tally)))
    low = verdict(tally)
    if low is not None and os.environ.get("SEPIA_HYPOTHESIS") != "explore":
        pytest.fail(low, pytrace=False)  # exploration's random draws are judged on answers
    return result


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Keep the tally a judged test reported (in this process or an xdist worker)."""
    for name, value in report.user_properties:
        if name == PROPERTY:
            REPORTED[report.nodeid] = Tally(**value)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    judged = REPORTED
    if not judged:
        return
    lowest = min(judged, key=lambda node: judged[node].share)
    terminalreporter.write_line(
        f"non-empty reference answers: {len(judged)} differential tests judged, lowest "
        f"{judged[lowest].share:.1%} ({lowest}), floor {FLOOR:.0%}"
    )
    if terminalreporter.config.option.verbose > 0:
        for node, tally in sorted(judged.items()):
            terminalreporter.write_line(
                f"  {tally.share:6.1%} of {tally.compared:4} compared; "
                f"{tally.drawn_share:6.1%} of {tally.drawn:4} drawn  {node}"
            )
