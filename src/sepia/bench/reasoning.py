"""The stream-reasoning section of `sepia bench` (issue #8): EP-SPARQL's Test 2 (seed 003,
section 6), `sepia.reasoning.bench.stream_reasoning_delays`, as rows of the benchmark table.

Streamed triples ``plant_i rdf:type C`` whose subject must be recognised as an instance of a
class of concern with a generated hierarchy of 40,000 subclasses, at most 8 deep (4,000 in
--quick). Each method is a row: the per-triple delay (p50 / p99, ms) and triples/s (one over
the mean delay), the instances it found (``results``), and ``checked``: its answers against
the reference evaluator's (``reclose``: the reference's `rdfs_closure` of hierarchy plus
triple, per triple, on the first few triples), ``ok`` when every fast method agrees with the
others and with the reference on that sample. The measurement runs in a fresh interpreter
(``python -m sepia.reasoning.bench stream ...``), like every other row.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from sepia.bench.measure import Measurement

ID = "reasoning"
TITLE = "stream reasoning: class membership under a 40,000-class hierarchy, depth 8"
SOURCE = "EP-SPARQL Test 2"
METHODS = ("expansion", "support_counter", "sparql_path", "reclose")
"""sepia.reasoning's precomputed-schema expansion and its support counts over a 1,000-triple
window; baselines: a pyoxigraph ``ASK { ?c rdfs:subClassOf* :concern }`` per triple, and the
reference evaluator's ``rdfs_closure`` of hierarchy plus triple per triple (the judge)."""


@dataclass(frozen=True, slots=True)
class Size:
    classes: int
    triples: int
    reclose: int  # triples the slow baseline (and judge) closes; the first ones of the stream

    @property
    def variant(self) -> str:
        return f"{self.classes // 1000}k-classes-depth8"


FULL = Size(40_000, 10_000, 5)
QUICK = Size(4_000, 2_000, 3)


def measure_section(size: Size) -> dict[str, Any]:
    """The stream test's numbers at ``size``, from a fresh interpreter."""
    command = [sys.executable, "-m", "sepia.reasoning.bench", "stream", str(size.classes),
               str(size.triples), str(size.reclose)]
    child = subprocess.run(command, capture_output=True, text=True, check=True)
    numbers: dict[str, Any] = json.loads(child.stdout)
    return numbers


def rows(size: Size) -> list[Measurement]:
    """One row per method; the schema's closure (once, before the stream) in the notes."""
    try:
        numbers = measure_section(size)
    except subprocess.CalledProcessError as error:
        lines = (error.stderr or "").strip().splitlines() or [f"exit code {error.returncode}"]
        return [Measurement("sepia.reasoning", size.variant, "failed", lines[-1])]
    agree = numbers["agree"] and numbers["reclose_agrees"]
    out = []
    for method in METHODS:
        stats = numbers[method]
        note = ""
        if method in ("expansion", "support_counter"):
            note = f"schema closed once before, in {numbers['schema_closure_s']:.2f} s"
        checked = "ok" if agree else "differs from the reference's closure on the sample"
        if method == "reclose":
            checked = "(the judge)"
        out.append(Measurement(
            method, size.variant, "ok", note, seconds=stats["mean_us"] * stats["triples"] / 1e6,
            elements=stats["triples"], triples=stats["triples"], results=stats["found"],
            p50_ms=stats["median_us"] / 1000, p99_ms=stats["p99_us"] / 1000, checked=checked))
    return out
