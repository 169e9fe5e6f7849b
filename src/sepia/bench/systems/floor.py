"""The floor baseline: pyoxigraph parsing the variant's input files and nothing else, the
physical limit of reading the input (benchmarks.md)."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

from sepia.bench.streamfile import parse_quads
from sepia.bench.systems.base import RunOutcome
from sepia.workloads import Workload
from sepia.workloads.manifest import Manifest, Variant

BLOCK = 65_536  # quads consumed at C speed between two looks at the clock


class Floor:
    name = "floor"
    description = "pyoxigraph parse of the same files, nothing else"

    def unavailable(self) -> str | None:
        return None

    def cannot_express(self, workload: Workload, variant: Variant) -> str | None:
        return None

    def counts_differ(self, workload: Workload, variant: Variant) -> str | None:
        return None

    def run(self, data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
        """Parses the streams, then the background; the counts are the manifest's (checked
        against the files by the generator tests), prorated when the budget cuts it short."""
        streams = manifest.streams_of(variant)
        quads = itertools.chain.from_iterable(parse_quads(data / s.path) for s in streams)
        elements = sum(s.elements for s in streams)
        triples = sum(s.triples for s in streams)
        total, read = sum(s.quads for s in streams), 0
        while block := sum(1 for _ in itertools.islice(quads, BLOCK)):
            read += block
            if time.perf_counter() > deadline and read < total:
                share = read / total
                return RunOutcome(round(elements * share), round(triples * share), None,
                                  complete=False)
        for path in variant.background:
            for _ in parse_quads(data / path):
                pass
        return RunOutcome(elements, triples, None)
