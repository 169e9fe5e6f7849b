"""Sepia's incremental engine in-process (`sepia run --engine local`): the workload's query
over its stream files, results counted, latency from the arrival of the element that made a
result due to the result (the push loop measures both on the wall clock)."""

from __future__ import annotations

import time
from pathlib import Path

from sepia.bench.generators import Kind, Workload
from sepia.bench.systems.base import RunOutcome
from sepia.bench.workload import Manifest, Variant


class LocalEngine:
    name = "local"
    description = "Sepia, local runtime (--engine local)"

    def unavailable(self) -> str | None:
        return None

    def cannot_express(self, workload: Workload, variant: Variant) -> str | None:
        """Only queries without one; a query the engine refuses fails its row with the
        engine's reason (the query text lives with the generated data, not known here)."""
        return "no query" if workload.kind is Kind.INGEST or variant.query is None else None

    def run(self, data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
        from sepia.io.background import load_background
        from sepia.io.streams import read_stream
        from sepia.rdf.stream import StreamSet
        from sepia.runtime.local import Session

        graphs = manifest.graphs_of(variant)
        background = load_background([(g, data / p) for g, p in graphs]) or None
        session = Session(background)
        assert variant.query is not None
        session.register((data / variant.query).read_text(encoding="utf-8"), variant.name)
        streams = manifest.streams_of(variant)
        merged = StreamSet({s.iri: read_stream(data / s.path, s.iri) for s in streams}).merged()
        elements = triples = results = 0
        latencies: list[float] = []
        for element in merged:
            arrived = time.perf_counter()
            out = session.push(element)
            done = time.perf_counter()
            results += len(out)
            latencies += [(done - arrived) * 1000] * len(out)
            elements += 1
            triples += len(element.triples)
            if done > deadline:
                return RunOutcome(elements, triples, results, tuple(latencies), complete=False)
        results += len(session.flush())
        return RunOutcome(elements, triples, results, tuple(latencies))

