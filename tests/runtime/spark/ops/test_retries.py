"""A transient failure is retried by the job itself, in local mode too.

Under load one run in eleven failed at its end-of-input batch with "Python worker failed to
connect back" and ended; the same checkpoint then finished correctly. Two levels:
- a failed task: Spark retries it on a cluster, but a `local[N]` master means one attempt;
  Sepia's session asks for four. A test makes a task's first attempt fail inside the job's
  own Python stage, and the run still gives every result.
- a failed query: the worker that missed Spark's fixed 10 s to connect back may be the
  driver-side one of transformWithState, while the batch is planned (this suite hit it
  under load), where no task retry helps. The run starts the query again from its
  checkpoint, up to four times, for these causes only; a bad element stops it at once.
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

import pyoxigraph as ox
import pytest
from pyspark.errors import StreamingQueryException

from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.runtime.spark.api import continuous_query
from sepia.runtime.spark.errors import one_line, transient
from sepia.runtime.spark.interrupts import Interrupts
from sepia.runtime.spark.job import END_GRAPH, END_TIME
from sepia.runtime.spark.progress import ProgressLog
from sepia.runtime.spark.run import QUERY_ATTEMPTS, RunStopped, SparkRunError, _await
from sepia.runtime.spark.session import (
    TASK_ATTEMPTS,
    SparkConfig,
    session_settings,
    with_task_retries,
)
from sepia.semantics import evaluate

EX = "http://example.org/"
QUERY = """PREFIX : <http://example.org/>
SELECT ?c ?p FROM NAMED WINDOW :w ON :s [RANGE 2 STEP 2]
WHERE { WINDOW :w { ?c :price ?p } }"""
SCHEMA = "element string, start bigint, end bigint, s string, p string, o string"


@pytest.mark.parametrize(
    ("master", "retried"),
    [
        ("local", "local[1,4]"),
        ("local[2]", "local[2,4]"),
        ("local[*]", "local[*,4]"),
        ("local[2,9]", "local[2,9]"),  # the user's own count
        ("spark://h:7077", "spark://h:7077"),  # spark.task.maxFailures: 4 already
    ],
)
def test_a_local_master_retries_its_tasks(master: str, retried: str) -> None:
    assert with_task_retries(master) == retried
    assert session_settings(SparkConfig(master=master))["spark.master"] == retried
    assert TASK_ATTEMPTS == 4


def row(t: int, s: str, p: str, o: str, element: str | None = None) -> dict:
    return {"element": element or f"{EX}g{t}", "start": t, "end": t, "s": s, "p": p, "o": o}


def flaky(marker: Path):
    """A mapInPandas body whose first call fails as a worker that could not connect back."""

    def body(frames):
        if not marker.exists():
            marker.touch()
            raise ConnectionError("a task's first attempt failed (simulated)")
        yield from frames

    return body


@pytest.mark.spark
def test_a_task_that_fails_once_is_retried_and_the_run_completes(spark, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    rows = [row(t, f"<{EX}c{t}>", f"<{EX}price>", f'"{t}"') for t in (1, 2, 3)]
    rows.append(row(END_TIME, f"<{END_GRAPH}>", f"<{EX}end>", f"<{EX}end>", END_GRAPH))
    (folder / "0.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    marker = tmp_path / "failed-once"
    frame = spark.readStream.schema(SCHEMA).json(str(folder))
    frame = frame.mapInPandas(flaky(marker), SCHEMA)
    results = continuous_query(spark, QUERY, {EX + "s": frame}, name="q")
    writer = results.writeStream.format("memory").queryName("retried")
    for attempt in range(QUERY_ATTEMPTS):  # as the run does: a loaded machine may need it
        try:
            writer.trigger(availableNow=True).start().awaitTermination()
            break
        except StreamingQueryException as error:
            if not transient(str(error)) or attempt == QUERY_ATTEMPTS - 1:
                raise
    assert marker.exists()  # the first attempt did fail
    lines = [json.loads(r.line) for r in spark.table("retried").collect()]
    got = sorted((r["t"], r["binding"]["c"]) for r in lines)
    assert got == expected_windows() and len(got) >= 3


def expected_windows() -> list[tuple[int, str]]:
    """The reference evaluator's answer on the same three elements."""
    price = ox.NamedNode(EX + "price")
    elements = [
        StreamElement(EX + "s", f"{EX}g{t}", t, t,
                      (ox.Triple(ox.NamedNode(f"{EX}c{t}"), price, ox.Literal(str(t))),))
        for t in (1, 2, 3)
    ]  # fmt: skip
    results = evaluate(parse_query(QUERY), {EX + "s": elements}, name="q")
    return sorted((r.t, str(dict(r.binding)["c"])) for r in results)


CONNECT_BACK = (
    "[STREAM_FAILED] Query [id = 3a93, runId = 5adc] terminated with exception: Python worker "
    "failed to connect back. SQLSTATE: XXKST\n=== Streaming Query ===\nIdentifier: q"
)
BAD_ELEMENT = (
    "[STREAM_FAILED] Query terminated with exception: Job aborted ... PythonException: \n"
    "  Traceback (most recent call last):\n  ...\n"
    "sepia.runtime.spark.elements.IngestError: s.trig line 3: element :e4: no time\n"
)


class Query:
    """A stand-in for a streaming query that ends at once, well or with `error`."""

    def __init__(self, error: str | None) -> None:
        self.error = error
        self.recentProgress: list = []

    def awaitTermination(self, timeout: float) -> bool:
        if self.error:
            raise StreamingQueryException(message=self.error)
        return True


class Writer:
    """Starts queries that fail with `errors` in turn, then succeed."""

    def __init__(self, *errors: str) -> None:
        self.errors = list(errors)
        self.starts = 0

    def start(self) -> Query:
        self.starts += 1
        return Query(self.errors.pop(0) if self.errors else None)


def test_a_query_failed_for_a_transient_cause_starts_again(capsys) -> None:
    writer = Writer(CONNECT_BACK, CONNECT_BACK)
    _await(writer, ProgressLog(), Interrupts())
    assert writer.starts == 3
    told = capsys.readouterr().err
    assert "Python worker failed to connect back" in told and "(3 of 4)" in told


def test_a_bad_element_stops_the_run_at_once() -> None:
    writer = Writer(BAD_ELEMENT)
    with pytest.raises(SparkRunError, match=re.escape("s.trig line 3: element :e4: no time")):
        _await(writer, ProgressLog(), Interrupts())
    assert writer.starts == 1


def test_a_transient_cause_that_does_not_pass_ends_the_run() -> None:
    writer = Writer(*[CONNECT_BACK] * QUERY_ATTEMPTS)
    with pytest.raises(SparkRunError, match="Python worker failed to connect back"):
        _await(writer, ProgressLog(), Interrupts())
    assert writer.starts == QUERY_ATTEMPTS


@pytest.mark.parametrize(
    ("message", "line"),
    [
        (
            CONNECT_BACK,
            "[STREAM_FAILED] Query [id = 3a93, runId = 5adc] terminated with "
            "exception: Python worker failed to connect back.",
        ),
        (BAD_ELEMENT, "s.trig line 3: element :e4: no time"),
        (
            "[CONFLICTING_DIRECTORY_STRUCTURES] Conflicting directory structures detected.\n"
            "Suspicious paths:\n\tfile:/tmp/a\n",
            "[CONFLICTING_DIRECTORY_STRUCTURES] Conflicting directory structures detected.",
        ),
        (
            "Job aborted.\nPythonException:\n  File x, line 2\nZeroDivisionError: division by zero",
            "ZeroDivisionError: division by zero",
        ),
    ],
)
def test_spark_errors_are_one_line(message: str, line: str) -> None:
    assert one_line(message) == line


class Interrupted(Query):
    """A query running when Ctrl-C comes: SIGINT arrives during its first wait."""

    isActive = True

    def __init__(self) -> None:
        super().__init__(None)
        self.status = {"isTriggerActive": False}
        self.lastProgress = None
        self.waits = 0
        self.stopped = False

    def awaitTermination(self, timeout: float) -> bool:
        self.waits += 1
        if self.waits == 1:
            os.kill(os.getpid(), signal.SIGINT)
        return self.stopped

    def stop(self) -> None:
        self.stopped = True


def test_ctrl_c_stops_the_query_without_raising_into_spark(capsys) -> None:
    """PySpark's handler raised KeyboardInterrupt inside a py4j command (a logged traceback,
    a broken gateway, "Gateway must be connected"); Sepia's only counts, and the wait loop
    stops the query itself. Afterwards Python's own handler is back, also when a session
    was started before (`spark_session` takes back the handler its SparkContext set)."""
    query = Interrupted()
    writer = Writer()
    writer.start = lambda: query  # type: ignore[method-assign]
    with Interrupts() as interrupts, pytest.raises(RunStopped):
        _await(writer, ProgressLog(), interrupts)
    assert query.stopped and interrupts.count == 1
    assert "stopping after the batch in progress" in capsys.readouterr().err
    # Python's own: its default, or "ignored" in a process started in the background (`&`)
    assert signal.getsignal(signal.SIGINT) in (signal.default_int_handler, signal.SIG_IGN)


class Busy(Interrupted):
    """A live query with a batch always running (an idle clock starts the next at once):
    batch 5 is in progress at Ctrl-C and ends after a few looks."""

    def __init__(self) -> None:
        super().__init__()
        self.status = {"isTriggerActive": True}
        self.looks = 0

    @property
    def lastProgress(self) -> dict:
        self.looks += 1
        return {"batchId": 4 if self.looks < 4 else 5}

    @lastProgress.setter
    def lastProgress(self, _value: object) -> None:
        pass


def test_ctrl_c_waits_for_the_batch_in_progress_not_for_a_quiet_moment() -> None:
    query = Busy()
    writer = Writer()
    writer.start = lambda: query  # type: ignore[method-assign]
    with Interrupts() as interrupts, pytest.raises(RunStopped):
        _await(writer, ProgressLog(), interrupts)
    assert query.stopped and query.looks >= 4 and interrupts.count == 1
