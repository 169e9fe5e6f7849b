"""An idle live input does not hold results back for ever (`--idle-timeout`), local runtime.

A live stream brings x1 at 1 and x3 at 3, then falls silent without ending. The window
(0, 10] closes at 10: without an idle timeout nothing is due before a later element comes;
with one of 0.2 s, time moves on with the clock from 3 once the input has been quiet for
0.2 s, passes 10 some 7 ms later, and the window's result (x1, x3 at 10) leaves while the
input is still open, as the reference gives it. An element stamped 5 that arrives after
that is late.

The driver runs on a virtual clock that moves 10 ms at each reading, so the idle time is
counted in turns of its loop, not in the machine's seconds: a loaded machine only makes
the turns slower. The test looks once the loop has turned through a virtual second of
silence (readiness, not a sleep).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pyoxigraph as ox

from sepia.lang import parse_query
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement
from sepia.runtime.inputs import ReadOptions
from sepia.runtime.local import Session
from sepia.runtime.local.feed import Driver, Feed, LateElement, Sourced
from sepia.semantics import evaluate

EX = "http://example.org/"
S = EX + "s"
QUERY = f"""PREFIX : <{EX}>
SELECT ?x FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 10]
REPORT ON WINDOW CLOSE
WHERE {{ WINDOW :w {{ ?x :p :y }} }}"""


def element(t: int) -> StreamElement:
    triple = ox.Triple(ox.NamedNode(f"{EX}x{t}"), ox.NamedNode(EX + "p"), ox.NamedNode(EX + "y"))
    return StreamElement(S, f"{EX}g{t}", t, t, (triple,))


STEP = 0.01
SETTLE = 1.0
"""Virtual seconds of silence the loop turns through before the test looks: a turn reads the
clock at most twice, so some fifty turns after the last element went in (at most three
readings after the input fell quiet), far past the 0.2 s timeout and the 7 ms to 10."""
DEADLINE = 600.0
"""Real seconds a wait may take on a loaded machine (a full suite beside it) before the test
fails; only a failing run waits this long."""


class VirtualClock:
    """The driver's seconds: each reading advances them by ``STEP``."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += STEP
        return self.now


def wait_until(condition: Callable[[], bool], what: str) -> None:
    end = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < end, f"gave up after {DEADLINE:.0f} s waiting for {what}"
        time.sleep(0.01)


def settle(clock: VirtualClock, thread: threading.Thread) -> None:
    """Until the driver's loop has turned through ``SETTLE`` virtual seconds from now."""
    since = clock.now
    wait_until(lambda: clock.now >= since + SETTLE or not thread.is_alive(),
               f"the driver to turn through {SETTLE} virtual seconds")  # fmt: skip


def live(
    times: list[int], resume: threading.Event, later: list[int], quiet: threading.Event
) -> Iterator[Sourced]:
    """The elements at `times`, then silence (`quiet` set) until `resume`, then `later`."""
    for t in times:
        yield element(t), "-"
    quiet.set()
    resume.wait(DEADLINE)
    for t in later:
        yield element(t), "-"


def drive(idle_timeout: float | None, later: list[int], on_error: str = "stop"):
    """Run the driver on a thread; return what was written once the input had been quiet
    for ``SETTLE`` virtual seconds, then everything, and the error that ended the run."""
    session = Session()
    session.register(QUERY, "q")
    written: list[Result] = []
    feed = Feed(
        ReadOptions(on_error, errors=lambda _e: None),
        follow=True,
        idle_timeout=idle_timeout,
        poll=0.01,
    )
    clock = VirtualClock()
    driver = Driver(session, written.extend, feed, clock=clock)
    resume, quiet = threading.Event(), threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            driver.live({S: live([1, 3], resume, later, quiet)})
        except Exception as error:
            failure.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    wait_until(quiet.is_set, "the input to fall quiet")
    settle(clock, thread)
    during = list(written)
    resume.set()
    thread.join(DEADLINE)
    assert not thread.is_alive(), "the run did not end once its input did"
    return during, written, failure


def reference(times: list[int]) -> list[tuple[int, str]]:
    results = evaluate(parse_query(QUERY), {S: [element(t) for t in times]}, name="q")
    return [(r.t, str(dict(r.binding)["x"])) for r in results]


def found(results: list[Result]) -> list[tuple[int, str]]:
    return [(r.t, str(dict(r.binding)["x"])) for r in results]


def test_without_an_idle_timeout_a_quiet_input_holds_the_window_back():
    during, written, failure = drive(None, [])
    assert during == [] and not failure
    assert found(written) == reference([1, 3])


def test_an_idle_timeout_lets_the_clock_close_the_window():
    during, written, failure = drive(0.2, [])
    expected = [(t, x) for t, x in reference([1, 3]) if t <= 10]
    assert expected == [(10, f"<{EX}x1>"), (10, f"<{EX}x3>")]
    assert found(during)[: len(expected)] == expected
    assert not failure and found(written)[: len(expected)] == expected


def test_an_element_older_than_the_idle_clock_is_late():
    _, _, failure = drive(0.2, [5])
    assert len(failure) == 1 and isinstance(failure[0], LateElement)
    assert "--idle-timeout" in str(failure[0])


def test_an_idle_input_stops_holding_the_others_back():
    """Two inputs: :s brings 1 and 3 then stays silent; :t brings 12 at once. Without the
    timeout, 12 waits for :s to show a time at or after it; with it, :s goes idle, 12 goes
    in and the window (0, 10] closes, from :t's element alone."""
    session = Session()
    session.register(QUERY, "q")
    written: list[Result] = []
    feed = Feed(ReadOptions(), follow=True, idle_timeout=0.2, poll=0.01)
    clock = VirtualClock()
    driver = Driver(session, written.extend, feed, clock=clock)
    resume, quiet = threading.Event(), threading.Event()
    other = iter([(StreamElement(EX + "t", EX + "h", 12, 12, ()), "-")])
    inputs = {S: live([1, 3], resume, [], quiet), EX + "t": other}
    thread = threading.Thread(target=driver.live, args=(inputs,))
    thread.start()
    wait_until(lambda: len(written) >= 2 or not thread.is_alive(), "the window's results")
    settle(clock, thread)  # and nothing more comes
    during = list(written)
    resume.set()
    thread.join(DEADLINE)
    assert found(during) == [(10, f"<{EX}x1>"), (10, f"<{EX}x3>")]
