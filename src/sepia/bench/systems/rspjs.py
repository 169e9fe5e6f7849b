"""The rsp-js peer (npm ``rsp-js``, the RSP-QL engine in TypeScript) on the window workloads.

rsp-js runs in a Node child process (``peers/rspjs/driver.js``) that reads the workload's own
stream and background files, feeds the elements synchronously and prints counts and
latencies as JSON. The query is the variant's plain SPARQL body (windows as the named graphs
<urn:sepia:window:NAME>, which become rsp-js window names) under rsp-js's own header syntax:
``REGISTER RStream <iri> AS`` and ``FROM NAMED WINDOW <w> ON STREAM <s> [RANGE ms STEP ms]``.

What rsp-js does differently from RSP-QL, so its counts may differ from the naive baseline's:
windows are [o, c) rather than (o, c]; a window is reported when the first later element of
its own stream arrives, and only the latest closed window per arrival; on a report, another
window's content is the one holding the last element of the reporting window, taken as it is
at that arrival (so it can hold elements after the close). With one window and no gap longer
than the slide, the counts agree (tests/bench_peers).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from sepia.bench.memory import TreePeak
from sepia.bench.peers import INSTALL_HINT, PEERS_DIR, install_root
from sepia.bench.systems.base import RunOutcome
from sepia.workloads import Kind, Workload
from sepia.workloads.manifest import Manifest, Variant

WINDOW_GRAPH = "urn:sepia:window:"
OUTPUT = "urn:sepia:bench:rspjs"
DRIVER = PEERS_DIR / "rspjs" / "driver.js"
NODE_MAJOR = 18


def node_modules() -> Path:
    return install_root() / "bench-peers" / "node" / "node_modules"


def _node_major(node: str) -> int:
    done = subprocess.run([node, "-p", "process.versions.node"], capture_output=True,
                          text=True, check=False)
    return int(done.stdout.split(".")[0]) if done.returncode == 0 else 0


def _wrap_where(sparql: str, graph: str) -> str:
    """The query with its WHERE group moved into GRAPH <graph> (a merged C-SPARQL window is
    the default graph in the plain query, a named graph in rsp-js)."""
    start = sparql.index("{", sparql.upper().index("WHERE"))
    depth = 0
    for position in range(start, len(sparql)):
        depth += {"{": 1, "}": -1}.get(sparql[position], 0)
        if depth == 0:
            return (f"{sparql[:start]}{{ GRAPH <{graph}> {sparql[start:position + 1]} }}"
                    f"{sparql[position + 1:]}")
    raise ValueError("unbalanced braces in the query's WHERE group")


def rspjs_query(manifest: Manifest, variant: Variant) -> str:
    """The variant's query in rsp-js's dialect (windows in ms, named by their graph IRI)."""
    windows: dict[str, dict[str, Any]] = variant.params["windows"]
    iris = {stream.name: stream.iri for stream in manifest.streams}
    header = [f"REGISTER RStream <{OUTPUT}> AS"] + [
        f"FROM NAMED WINDOW <{WINDOW_GRAPH}{name}> ON STREAM <{iris[spec['stream']]}> "
        f"[RANGE {spec['width']} STEP {spec['slide']}]"
        for name, spec in windows.items()
    ]
    sparql: str = variant.params["sparql"].strip()
    if variant.params.get("merge_windows"):
        (name,) = windows
        sparql = _wrap_where(sparql, WINDOW_GRAPH + name)
    prefixes = [line for line in sparql.splitlines() if line.strip().upper().startswith("PREFIX")]
    body = [line for line in sparql.splitlines() if line not in prefixes]
    return "\n".join(prefixes + header + body) + "\n"


def driver_job(data: Path, manifest: Manifest, variant: Variant, budget_s: float) -> dict[str, Any]:
    """What driver.js reads: the query, the files, the windows and the time budget."""
    windows = variant.params["windows"]
    iris = {stream.name: stream.iri for stream in manifest.streams}
    used = {spec["stream"] for spec in windows.values()}
    report = variant.params.get("report_window")
    return {
        "query": rspjs_query(manifest, variant),
        "streams": [{"iri": s.iri, "path": str(data / s.path)} for s in manifest.streams
                    if s.name in used],
        "background": [str(data / path) for path in variant.background],
        "windows": [{"name": WINDOW_GRAPH + name, "stream": iris[spec["stream"]],
                     "width": spec["width"], "slide": spec["slide"]}
                    for name, spec in windows.items()],
        "report_window": WINDOW_GRAPH + report if report else None,
        "budget_s": budget_s,
    }


class RspJs:
    """rsp-js in Node, fed synchronously from the workload's files."""

    name = "rsp-js"
    description = ("rsp-js 1.3.5 (npm) in Node, fed synchronously; reports a window when a "
                   "later element arrives (end of input: punctuation)")

    def unavailable(self) -> str | None:
        node = shutil.which("node")
        if node is None:
            return f"Node.js {NODE_MAJOR}+ not found on PATH"
        if _node_major(node) < NODE_MAJOR:
            return f"rsp-js needs Node.js {NODE_MAJOR}+"
        if not (node_modules() / "rsp-js" / "package.json").exists():
            return f"rsp-js is not installed in {node_modules().parent} ({INSTALL_HINT})"
        return None

    def cannot_express(self, workload: Workload, variant: Variant) -> str | None:
        if workload.kind is not Kind.WINDOW:
            return "rsp-js has windows and SPARQL only: no event patterns"
        params = variant.params
        if params.get("report") != "window-close":
            return "rsp-js reports on window close only (content-change reporting is missing)"
        if params.get("operator") != "rstream":
            return "rsp-js emits every binding (RStream) whatever the REGISTER operator"
        if params.get("merge_windows") and len(params["windows"]) > 1:
            return "rsp-js keeps each window in its own graph: no merged windows"
        return None

    def counts_differ(self, workload: Workload, variant: Variant) -> str | None:
        if len(variant.params.get("windows", ())) > 1:
            return ("rsp-js reads the other window as it is at the reporting arrival, windows "
                    "as [o, c), and reports the latest closed window only (module docstring)")
        return None

    def run(self, data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
        budget = max(0.0, deadline - time.perf_counter())
        with tempfile.TemporaryDirectory(prefix="sepia-rspjs-") as scratch:
            job = Path(scratch) / "job.json"
            job.write_text(json.dumps(driver_job(data, manifest, variant, budget)))
            # cwd: rsp-js's logger appends to ./logs/*.log when that folder exists
            node = subprocess.Popen(
                ["node", str(DRIVER), str(job)], cwd=scratch, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True,
                env={**os.environ, "NODE_PATH": str(node_modules())},
            )
            with TreePeak(node) as peak:
                stdout, stderr = node.communicate()
        if node.returncode != 0:
            raise RuntimeError(stderr.strip().splitlines()[-1] if stderr.strip()
                               else f"rsp-js driver exited with {node.returncode}")
        raw = json.loads(stdout.strip().splitlines()[-1])
        return RunOutcome(raw["elements"], raw["triples"], raw["results"],
                          tuple(raw["latencies_ms"]), raw["complete"], peak.mib)
