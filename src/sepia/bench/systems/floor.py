"""The floor baseline: pyoxigraph parsing the variant's input files and nothing else, the
physical limit of reading the input (benchmarks.md)."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pyoxigraph as ox

from sepia.bench.generators import Workload
from sepia.bench.streamfile import END_PREDICATES, parse_quads
from sepia.bench.systems.base import RunOutcome
from sepia.bench.workload import Manifest, Variant


class Floor:
    name = "floor"
    description = "pyoxigraph parse of the same files, nothing else"

    def unavailable(self) -> str | None:
        return None

    def cannot_express(self, workload: Workload, variant: Variant) -> str | None:
        return None

    def run(self, data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
        """Counts elements (their time statements) and element triples; reads the background."""
        elements = triples = 0
        quads = itertools.chain.from_iterable(
            parse_quads(data / stream.path) for stream in manifest.streams_of(variant)
        )
        for quad in quads:
            if not isinstance(quad.graph_name, ox.DefaultGraph):
                triples += 1
            elif quad.predicate.value in END_PREDICATES:
                elements += 1
                if elements % 1024 == 0 and time.perf_counter() > deadline:
                    return RunOutcome(elements, triples, None, complete=False)
        for path in variant.background:
            for _ in parse_quads(data / path):
                pass
        return RunOutcome(elements, triples, None)
