"""`sepia run ... | head -3`: when the reader of the results closes the pipe early, the run
ends promptly and quietly (no traceback, no "Exception ignored"), on every engine; on Spark
the query is stopped rather than left waiting on a write that can never finish (it used to
hang there, Python and the JVM idle, after `head` had exited)."""

from __future__ import annotations

import subprocess
import sys

import pytest

QUERY = """PREFIX : <http://example.org/>
REGISTER RSTREAM :q AS SELECT ?s FROM NAMED WINDOW :w ON :s [RANGE 3 STEP 1]
WHERE { WINDOW :w { ?s :p ?o } }
"""
ELEMENTS = 3000
"""Three results per instant: far more output than a pipe holds (64 KiB), so the writer
still has results to write when the reader goes."""


LOCAL_DEADLINE, SPARK_DEADLINE = 120.0, 600.0
"""Seconds a run may take to end once its reader goes, on a loaded 2-core machine (a second or
two idle; Spark stops its query and JVM): only a run left hanging waits this long."""


@pytest.fixture(scope="module")
def run_files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    folder = tmp_path_factory.mktemp("pipes")
    stream = folder / "s.trig"
    lines = ["@prefix : <http://example.org/> .", "@prefix prov: <http://www.w3.org/ns/prov#> ."]
    lines += [f":e{i} {{ :s{i} :p :o }} :e{i} prov:generatedAtTime {i} ." for i in range(ELEMENTS)]
    stream.write_text("\n".join(lines) + "\n")
    query = folder / "q.rq"
    query.write_text(QUERY)
    return [str(query), "--stream", f"http://example.org/s={stream}"]


def _read_then_close(
    run: list[str], engine: str, fmt: str, lines: int, deadline: float
) -> tuple[int, str]:
    """Run `sepia run RUN` into a pipe, read `lines` lines, close the pipe (as `head` does),
    and wait at most `deadline` seconds for the run to end: its status and stderr."""
    command = [sys.executable, "-m", "sepia", "run", *run, "--engine", engine, "--format", fmt]
    if engine == "spark":
        command.append("--no-progress")
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        read = [process.stdout.readline() for _ in range(lines)]
        assert all(read), f"fewer than {lines} lines: {read}"
        process.stdout.close()  # the reader goes away with results still to come
        process.wait(timeout=deadline)
        return process.returncode, process.stderr.read()
    finally:
        process.kill()


@pytest.mark.parametrize("fmt", ["table", "jsonl", "csv"])
def test_a_local_run_ends_quietly_when_its_reader_goes(run_files: list[str], fmt: str) -> None:
    code, errors = _read_then_close(run_files, "local", fmt, 3, deadline=LOCAL_DEADLINE)
    assert errors == ""
    assert code == 1  # as click's commands end on a closed pipe


SPARK_TABLE_ONLY_SLOW = (
    "45 s of a JVM: Spark's sink handles a closed pipe one way whatever the format (the jsonl "
    "case in the default run), and the table writer raising it is the local [table] case"
)


@pytest.mark.parametrize(
    "fmt", [pytest.param("table", marks=pytest.mark.slow(reason=SPARK_TABLE_ONLY_SLOW)), "jsonl"]
)
@pytest.mark.long
def test_a_spark_run_stops_its_query_when_its_reader_goes(run_files: list[str], fmt: str) -> None:
    code, errors = _read_then_close(run_files, "spark", fmt, 3, deadline=SPARK_DEADLINE)
    assert "Traceback" not in errors and "Exception" not in errors, errors
    assert code == 1
