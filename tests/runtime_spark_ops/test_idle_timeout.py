"""An idle live input does not hold results back for ever (`--idle-timeout`), local runtime.

A live stream brings x1 at 1 and x3 at 3, then falls silent without ending. The window
(0, 10] closes at 10: without an idle timeout nothing is due before a later element comes;
with one of 0.2 s, time moves on with the clock from 3 once the input has been quiet for
0.2 s, passes 10 some 7 ms later, and the window's result (x1, x3 at 10) leaves while the
input is still open, as the reference gives it. An element stamped 5 that arrives after
that is late.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

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


def live(times: list[int], resume: threading.Event, later: list[int]) -> Iterator[Sourced]:
    """The elements at `times`, then silence until `resume`, then those at `later`."""
    for t in times:
        yield element(t), "-"
    resume.wait(30)
    for t in later:
        yield element(t), "-"


def drive(idle_timeout: float | None, later: list[int], on_error: str = "stop"):
    """Run the driver on a thread; return what was written in the first 1.5 s of silence,
    then everything, and the error that ended the run (if any)."""
    session = Session()
    session.register(QUERY, "q")
    written: list[Result] = []
    feed = Feed(
        ReadOptions(on_error, errors=lambda _e: None),
        follow=True,
        idle_timeout=idle_timeout,
        poll=0.05,
    )
    driver = Driver(session, written.extend, feed)
    resume = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            driver.live({S: live([1, 3], resume, later)})
        except Exception as error:
            failure.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(1.5)
    during = list(written)
    resume.set()
    thread.join(30)
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
    feed = Feed(ReadOptions(), follow=True, idle_timeout=0.2, poll=0.05)
    driver = Driver(session, written.extend, feed)
    resume = threading.Event()
    other = iter([(StreamElement(EX + "t", EX + "h", 12, 12, ()), "-")])
    thread = threading.Thread(
        target=driver.live, args=({S: live([1, 3], resume, []), EX + "t": other},)
    )
    thread.start()
    time.sleep(1.0)
    during = list(written)
    resume.set()
    thread.join(30)
    assert found(during) == [(10, f"<{EX}x1>"), (10, f"<{EX}x3>")]
