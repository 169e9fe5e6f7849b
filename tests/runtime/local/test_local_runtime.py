"""The local runtime: the Session API (callbacks, attached readers, watermarks), snapshot
files that resume a replay exactly, and live runs (followed folders, standard input, the
wall clock) through the real command line."""

from __future__ import annotations

import array
import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import termios
import time
from collections import Counter
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from engine.generators import BACKGROUND, S1, S2, queries, sequence_queries, streams
from engine.support import background
from sepia import Session, read_stream
from sepia.cli import app
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement, StreamSet
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import ReadOptions
from sepia.runtime.local import run
from sepia.runtime.local.feed import Driver, Feed, input_files, sourced
from sepia.semantics import evaluate

ROOT = Path(__file__).parents[3]
E3 = ROOT / "examples" / "e3-rsepql-landmark"
E3_STREAM = "http://example.org/s"
CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large]
PROV_TIME = "<http://www.w3.org/ns/prov#generatedAtTime>"


def nquads(elements: list[StreamElement], trig: bool = False) -> str:
    """Elements as an N-Quads (or TriG) stream file (io.md): each graph after its time."""
    lines = []
    for n, e in enumerate(elements):
        graph = f"<http://example.org/{e.stream.rsplit('/', 1)[-1]}/g{n}>"
        lines.append(f"{graph} {PROV_TIME} {time_literal(e)} .")
        triples = [f"{t.subject} {t.predicate} {t.object}" for t in e.triples]
        if trig:
            lines.append(graph + " { " + " . ".join(triples) + " }")
        else:
            lines += [f"{triple} {graph} ." for triple in triples]
    return "".join(line + "\n" for line in lines)


def time_literal(e: StreamElement) -> str:
    if e.kind is TimeKind.ABSTRACT:
        return f'"{e.time}"^^<http://www.w3.org/2001/XMLSchema#integer>'
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(e.time // 1000))
    return f'"{stamp}.{e.time % 1000:03d}Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'


def e3_elements() -> list[StreamElement]:
    return list(read_stream(E3 / "stream.trig", E3_STREAM))


def jsonl(results) -> Counter:
    return Counter(json.dumps(json.loads(line), sort_keys=True) for line in results)


# --- the Session API ---------------------------------------------------------------------


def test_results_come_back_by_callback_by_iteration_and_by_return_alike():
    query = (E3 / "query.rq").read_text()
    seen = []
    session = Session(on_result=seen.append)
    session.register(query, "query")
    session.attach(read_stream(E3 / "stream.trig", E3_STREAM))
    iterated = list(session)
    expected = evaluate(parse_query(query), {E3_STREAM: e3_elements()}, name="query")
    assert Counter(iterated) == Counter(expected) and len(expected) == 4
    assert seen == iterated

    pushed = Session()
    pushed.register(query, "query")
    returned = [r for e in e3_elements() for r in pushed.push(e)] + pushed.flush()
    assert returned == iterated


@settings(max_examples=150, deadline=None, suppress_health_check=CHECKS)
@given(queries(), streams(), st.data())
def test_watermarks_release_results_early_and_change_nothing(text, data, draw):
    """A watermark w between two arrivals (w before the next element's time) fires every
    result due through w at once; the results, and their order, are those of the run. (Marks
    stay before every stream's last element: past it a live clock may fire instants that the
    end-of-input flush of the finite run never reaches.)"""
    elements = list(StreamSet(data).merged())
    last = min(stream[-1].time for stream in data.values())
    expected = list(run([("q", text)], data, background()))
    session = Session(background())
    session.register(text, "q")
    got = []
    for before, after in pairwise(elements):
        got += session.push(before)
        if before.time < min(after.time, last) and draw.draw(st.booleans()):
            mark = draw.draw(st.integers(before.time, min(after.time, last) - 1))
            got += session.watermark(mark)
            assert Counter(got) == Counter(r for r in expected if r.t <= mark)
    got += session.push(elements[-1]) + session.flush()
    assert Counter(got) == Counter(expected)
    assert [r.t for r in got] == [r.t for r in expected]


def test_an_element_at_or_before_the_watermark_is_refused():
    session = Session()
    session.register((E3 / "query.rq").read_text(), "query")
    first, second, *_ = e3_elements()
    session.push(first)
    session.watermark(second.time)
    try:
        session.push(second)
    except ValueError as error:
        assert "watermark" in str(error)
    else:
        raise AssertionError("an element behind the watermark went in")


# --- snapshot files ------------------------------------------------------------------------


def sepia_run(*args: str) -> list[str]:
    result = CliRunner().invoke(app, ["run", *args, "--engine", "local", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


@settings(max_examples=25, deadline=None, suppress_health_check=CHECKS)
@given(st.one_of(queries(), sequence_queries()), streams(), st.data())
def test_a_replay_split_anywhere_resumes_exactly_from_its_snapshot(text, data, draw):
    """Part 1 of the input run with --snapshot, part 2 with --restore: the two outputs
    together are the whole run's, in time order. (A file cannot hold an empty graph.)"""
    elements = [e for e in StreamSet(data).merged() if e.triples]
    cut = draw.draw(st.integers(0, len(elements)))
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        (home / "q.rq").write_text(text)
        (home / "bg.trig").write_text(BACKGROUND)

        def files(name: str, part: list[StreamElement]) -> list[str]:
            args = []
            for iri in (S1, S2):
                path = home / f"{name}-{iri[-2:]}.nq"
                path.write_text(nquads([e for e in part if e.stream == iri]))
                args += ["--stream", f"{iri}={path}"]
            return [str(home / "q.rq"), *args, "--data", str(home / "bg.trig")]

        whole = sepia_run(*files("whole", elements))
        snapshot = str(home / "state.json")
        first = sepia_run(*files("one", elements[:cut]), "--snapshot", snapshot)
        second = sepia_run(*files("two", elements[cut:]), "--restore", snapshot)
    assert jsonl(first + second) == jsonl(whole)
    times = [json.loads(line)["t"] for line in first + second]
    assert times == sorted(times)


def test_match_numbers_do_not_depend_on_when_terms_were_first_seen():
    """Found by the test above: two matches completed at one instant were numbered by their
    mappings' term ids, and a run resumed after element 4 had met :p later (the first part
    read only S1, which no GPM matches), so it named them m1 / m2 the other way round."""
    a, p, q, b = (ox.NamedNode(f"http://example.org/{x}") for x in "apqb")
    text = """PREFIX : <http://example.org/>
    SELECT * FROM STREAM S1 :s1 FROM STREAM S2 :s2
    WHERE { SEQ(D , B+) DEFINE GPM D ON S2 { ?x ?j ?v } DEFINE GPM B ON S2 { ?y ?k ?z } }"""
    graphs = [(S1, 0, [(a, p, a)]), (S1, 0, [(a, p, b)]), (S1, 0, [(a, p, b), (a, p, a)]),
              (S1, 1, [(a, q, b)]), (S1, 1, [(a, p, a)]), (S2, 2, [(a, p, a), (a, q, a)]),
              (S2, 3, [(a, p, a)])]  # fmt: skip
    elements = [
        StreamElement(stream, f"_:g{n}", t, t, tuple(ox.Triple(*x) for x in triples))
        for n, (stream, t, triples) in enumerate(graphs)
    ]

    def session() -> Session:
        fresh = Session(background())
        fresh.register(text, "q")
        return fresh

    whole = session()
    expected = [r for e in elements for r in whole.push(e)] + whole.flush()
    assert sorted(r.match for r in expected) == ["m1", "m2"]
    first = session()
    got = [r for e in elements[:4] for r in first.push(e)]
    second = session()
    second.restore(json.loads(json.dumps(first.snapshot())))
    got += [r for e in elements[4:] for r in second.push(e)] + second.flush()
    assert got == expected


def test_a_run_stopped_midway_resumes_from_the_same_file_without_reading_it_twice(tmp_path):
    """The snapshot counts the elements taken from each file; a run restored from it over
    the same file skips them (what a Ctrl-C then a restart does)."""
    path = tmp_path / "s.nq"
    path.write_text(nquads(e3_elements()))
    query = (E3 / "query.rq").read_text()
    snapshot = tmp_path / "state.json"

    def driven(stop_after: int | None, restore: bool) -> list:
        session = Session()
        session.register(query, "query")
        taken = session.load(snapshot) if restore else {}
        results: list = []
        feed = Feed(ReadOptions(), snapshot=snapshot if stop_after is not None else None)
        driver = Driver(session, results.extend, feed, taken)
        items = sourced(
            E3_STREAM, input_files(path, False, driver.stopping, 0.1), ReadOptions(), taken
        )

        def stopping() -> Iterator:
            for n, item in enumerate(items):
                if n == stop_after:
                    driver.stopping.set()  # as Ctrl-C does
                yield item

        driver.replay({E3_STREAM: stopping()})
        return results

    first = driven(4, restore=False)  # times 2, 4, 6, 8: the result at 6 is out
    assert json.loads(snapshot.read_text())["inputs"] == {str(path.resolve()): 4}
    second = driven(None, restore=True)
    whole = driven(None, restore=False)
    assert Counter(first + second) == Counter(whole) and len(whole) == 4
    assert first and second


def test_a_snapshot_of_other_queries_is_refused(tmp_path):
    session = Session()
    session.register((E3 / "query.rq").read_text(), "query")
    session.save(tmp_path / "state.json")
    other = Session()
    other.register((E3 / "query.rq").read_text(), "other")
    try:
        other.load(tmp_path / "state.json")
    except ValueError as error:
        assert "not other" in str(error)
    else:
        raise AssertionError("a snapshot of other queries was restored")


# --- live runs, through the command line in a process of its own -----------------------------


DEADLINE = 600.0
"""Seconds a live process may take to show what a test waits for on a loaded machine (a full
suite beside it); only a failing run waits this long."""


def asleep(pid: int) -> tuple[tuple[str, str, str], ...] | None:
    """Each thread of the process with its counts of context switches, if every one sleeps
    (None if one runs or waits for a CPU, or the process is gone)."""
    threads = []
    try:
        for task in sorted((Path("/proc") / str(pid) / "task").iterdir()):
            status = dict(
                line.split(":\t", 1) for line in (task / "status").read_text().splitlines()
            )
            if not status["State"].startswith("S"):
                return None
            switches = status["voluntary_ctxt_switches"], status["nonvoluntary_ctxt_switches"]
            threads.append((task.name, *switches))
    except OSError:
        return None
    return tuple(threads)


def unread(pipe: int) -> int:
    """Bytes written into a pipe and not yet read from it."""
    count = array.array("i", [0])
    fcntl.ioctl(pipe, termios.FIONREAD, count)
    return count[0]


class Live:
    """`sepia run --engine local ...` in a subprocess, its output lines read as they come."""

    def __init__(self, *args: str, stdin: bool = False) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        command = [sys.executable, "-m", "sepia", "run", *args, "--engine", "local"]
        self.process = subprocess.Popen(
            [*command, "--format", "jsonl"], env=env,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.out = self.process.stdout.fileno()  # type: ignore[union-attr]
        self.lines: list[str] = []  # whole lines read and not taken
        self.partial = b""

    def _read(self, timeout: float) -> bool:
        """Whatever the process wrote, waiting up to `timeout` s; False at its end of output."""
        if not select.select([self.out], [], [], timeout)[0]:
            return True
        chunk = os.read(self.out, 1 << 16)
        *whole, self.partial = (self.partial + chunk).split(b"\n")
        self.lines += [line.decode() + "\n" for line in whole]
        return bool(chunk)

    def take(self, n: int, timeout: float = DEADLINE) -> list[str]:
        """The next n result lines, failing if they do not come in time."""
        end = time.monotonic() + timeout
        while len(self.lines) < n:
            left = end - time.monotonic()
            assert left > 0, f"{n} lines not written in {timeout:.0f} s: {self.lines}"
            assert self._read(left), f"the run ended: {self.process.stderr.read()!r}"  # type: ignore[union-attr]
        taken, self.lines = self.lines[:n], self.lines[n:]
        return taken

    def nothing_more(self) -> bool:
        """No line beyond those taken, once the process has read every byte given to it
        and then an instant came when all its threads slept: two looks in a row found each
        thread asleep, with no wake-up between them (its live loop wakes every 0.2 s)."""
        stdin = self.process.stdin
        end = time.monotonic() + DEADLINE
        while (stdin is not None and unread(stdin.fileno())) or not self._settled():
            assert self.process.poll() is None, self.process.stderr.read()  # type: ignore[union-attr]
            assert time.monotonic() < end, f"the run did not settle in {DEADLINE:.0f} s"
            time.sleep(0.01)
        while select.select([self.out], [], [], 0)[0] and self._read(0):
            pass  # every line written before that instant is in the pipe
        return not self.lines and not self.partial

    def _settled(self) -> bool:
        first = asleep(self.process.pid)
        return first is not None and asleep(self.process.pid) == first

    def stop(self) -> list[str]:
        """Ctrl-C, then the lines written while stopping."""
        self.process.send_signal(signal.SIGINT)
        return self.end()

    def end(self) -> list[str]:
        """The lines written to the end of the run, which must succeed."""
        assert self.process.wait(timeout=DEADLINE) == 0, self.process.stderr.read()  # type: ignore[union-attr]
        while self._read(DEADLINE):
            pass
        rest, self.lines = self.lines, []
        return rest


def expected_e3() -> Counter:
    return jsonl((E3 / "expected.jsonl").read_text().splitlines())


def test_a_followed_folder_gives_results_as_files_arrive_and_stops_on_ctrl_c(tmp_path):
    """E3: the first file (times 2-8) releases the result at 6; a file moved in later
    (time 10) releases those at 8; Ctrl-C ends the input, which fires the one at 10."""
    elements = e3_elements()
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "001.nq").write_text(nquads(elements[:4]))
    live = Live(str(E3 / "query.rq"), "--stream", f"{E3_STREAM}={folder}", "--follow")
    first = live.take(1)
    assert live.nothing_more()  # the results at 8 wait for a later time
    (tmp_path / "002.nq").write_text(nquads(elements[4:]))
    os.replace(tmp_path / "002.nq", folder / "002.nq")  # moved in whole
    second = live.take(2)
    rest = live.stop()
    assert [json.loads(line)["t"] for line in first + second] == [6, 8, 8]
    assert jsonl(first + second + rest) == expected_e3()


def test_standard_input_is_read_as_it_comes(tmp_path):
    """An element is complete when the next one starts (io.md lets a time statement follow
    its graph), and an instant's results leave when a later time arrives: with all of E3
    written and the input still open, the elements through 8 are in and the result at 6 is
    out; closing the input takes the element at 10 and ends the run."""
    live = Live(str(E3 / "query.rq"), "--stream", f"{E3_STREAM}=-", stdin=True)
    live.process.stdin.write(nquads(e3_elements(), trig=True).encode())  # type: ignore[union-attr]
    live.process.stdin.flush()  # type: ignore[union-attr]
    seen = live.take(1)
    assert [json.loads(line)["t"] for line in seen] == [6]
    assert live.nothing_more()
    live.process.stdin.close()  # type: ignore[union-attr]
    assert jsonl(seen + live.end()) == expected_e3()


def test_the_wall_clock_fires_a_window_close_without_another_element(tmp_path):
    """A dateTime element stamped now enters a 1-second tumbling window; with --wall-clock
    its window closes (and reports) once the clock passes the close, though nothing else
    arrives and the folder stays followed. The first element of a run is never late (it
    sets the run's kind of time), so the file may land before the process is up."""
    query = tmp_path / "q.rq"
    query.write_text("""PREFIX : <http://example.org/>
REGISTER RSTREAM :out AS SELECT ?x FROM NAMED WINDOW :w ON :s [RANGE PT1S STEP PT1S]
WHERE { WINDOW :w { ?x :p ?y } }""")
    folder = tmp_path / "in"
    folder.mkdir()
    live = Live(str(query), "--stream", f"{E3_STREAM}={folder}", "--follow", "--wall-clock")
    now = int(time.time() * 1000)
    triple = ox.Triple(*(ox.NamedNode(f"http://example.org/{x}") for x in "apb"))
    element = StreamElement(E3_STREAM, "g", now, now, (triple,), kind=TimeKind.DATETIME)
    (tmp_path / "001.nq").write_text(nquads([element]))
    os.replace(tmp_path / "001.nq", folder / "001.nq")
    (line,) = live.take(1)
    reported = json.loads(line)
    assert reported["binding"] == {"x": "<http://example.org/a>"}
    assert live.stop() == []
