"""Kill a running Spark job (driver and JVM, SIGKILL) at random points and restart it from its
checkpoint: the output file must hold `--engine local`'s answer (the reference evaluator's),
evaluation by evaluation, nothing lost and nothing twice. The rows of one evaluation, which
no ORDER BY orders, are compared as a bag: the columnar core lists them in an order that
depends on how its state was built (batch by batch, or rebuilt from the state rows after a
restart), as the output contract allows.

The kill points come from a seeded chooser (``SEPIA_RECOVERY_SEED``, 7 unless set; a
failure names its seed, and setting it replays the run). Each killed driver is a process of
its own (`child_run.py`, with its JVM); the last restart runs in the test's Spark session.
The default run kills each query once; ``-m slow`` adds the partitioned sequence killed
twice, and the same sequence on a standalone cluster losing a worker (`test_spark_cluster`).

The input is a watched folder of stream files, one element per file and one file per
micro-batch, so the job is killed between and inside batches. Two queries: a window, one
key; a PARTITION BY sequence, spread over buckets (4 on local[2]), each with its own state
and all stepping through every instant (stand-ins)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sepia.io.streams import read_stream
from sepia.rdf.results import jsonl_line
from sepia.runtime.inputs import load_query
from sepia.runtime.local import run
from sepia.runtime.spark.run import run_on_spark
from sepia.semantics import evaluate

from ..evaluations import evaluations
from .child_run import STREAM

pytestmark = [pytest.mark.spark]

QUERIES = {
    "window": """PREFIX : <http://example.org/>
SELECT ?x (COUNT(*) AS ?n)
FROM NAMED WINDOW :w ON :s [RANGE 6 STEP 3]
WHERE { WINDOW :w { ?x :p ?y } }
GROUP BY ?x
""",
    "rise": """PREFIX : <http://example.org/>
SELECT ?x ?y ?z WITHIN 4 FROM STREAM S1 :s PARTITION BY ?x
WHERE { SEQ(A ; B) DEFINE GPM A ON S1 { ?x :p ?y }
        DEFINE GPM B ON S1 { ?x :p ?z FILTER(?z > ?y) } }
""",
}
FILES = 8
SEED = int(os.environ.get("SEPIA_RECOVERY_SEED", "7"))


def write_stream(folder: Path) -> None:
    folder.mkdir()
    for n in range(FILES):  # one element per file, written one by one, oldest first
        t = 2 * n + 1
        path = folder / f"part-{n:02d}.trig"
        path.write_text(
            "@prefix : <http://example.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
            f":g{n} {{ :{'ab'[n % 2]} :p {n} . :c :p {n} . }} :g{n} prov:generatedAtTime {t} .\n"
        )
        os.utime(path, (1_000_000 + n, 1_000_000 + n))


def child(
    query: Path,
    folder: Path,
    checkpoint: Path,
    out: Path,
    master: str = "local[2]",
    log: Path | None = None,
    forget_terms: int | None = None,
) -> subprocess.Popen:
    """`child_run.py` in its own process session (so that killing it takes its JVM too);
    its standard error goes to `log` if given; `forget_terms`: the run's, if not the default."""
    script = Path(__file__).with_name("child_run.py")
    args = [sys.executable, str(script), *map(str, (query, folder, checkpoint, out)), master]
    args += [] if forget_terms is None else [str(forget_terms)]
    env = {**os.environ, "PYTHONPATH": str(script.parents[4] / "src")}
    errors = log.open("w") if log is not None else subprocess.DEVNULL
    return subprocess.Popen(args, start_new_session=True, env=env,
                            stdout=subprocess.DEVNULL, stderr=errors)  # fmt: skip


def batches_done(journal: Path) -> int:
    """How many micro-batches the results ledger records as written (ids count from 0)."""
    ledger = journal / "ledger.json"
    return json.loads(ledger.read_text())["batch"] + 1 if ledger.exists() else 0


def kill_after(process: subprocess.Popen, journal: Path, batches: int) -> bool:
    """SIGKILL the child's whole session once `batches` batches are journaled; False if it
    ended before."""
    while process.poll() is None and batches_done(journal) < batches:
        time.sleep(0.2)
    running = process.poll() is None
    if running:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    return running


@pytest.mark.parametrize(
    ("name", "kills"),
    [
        pytest.param("window", 1),
        pytest.param("rise", 1),
        pytest.param("rise", 2, marks=pytest.mark.slow),
    ],
)
def test_killed_and_restarted_run_equals_uninterrupted(spark, tmp_path, name, kills):
    query = tmp_path / f"{name}.rq"
    query.write_text(QUERIES[name])
    folder = tmp_path / "stream"
    write_stream(folder)
    checkpoint, out = tmp_path / "checkpoint", tmp_path / "out.jsonl"
    seed = SEED
    chooser = random.Random(seed)
    for _ in range(kills):
        done = batches_done(checkpoint / "results")
        killed = kill_after(child(query, folder, checkpoint, out), checkpoint / "results",
                            done + chooser.randint(1, 3))  # fmt: skip
        assert killed, f"the run ended before it could be killed (seed {seed})"
    # The last restart is a new driver in this process, on what the killed ones left.
    run_on_spark([load_query(query)], {STREAM: str(folder)}, checkpoint=checkpoint,
                 output=str(out), spark=spark)  # fmt: skip

    elements = [e for p in sorted(folder.iterdir()) for e in read_stream(p, STREAM)]
    answer = evaluate(load_query(query).query, {STREAM: elements}, name=name)
    reference = [jsonl_line(r, elements[0].kind) for r in answer]
    local = [jsonl_line(r, elements[0].kind)
             for r in run([(name, load_query(query).query)], {STREAM: elements})]  # fmt: skip
    assert local and sorted(local) == sorted(reference)
    assert evaluations(out.read_text().splitlines()) == evaluations(local), f"seed {seed}"
