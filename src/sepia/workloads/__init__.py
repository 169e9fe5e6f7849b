"""Seeded, scalable workload generators, one module per domain, and the registry of the
workloads of design/benchmarks.md. Same workload, scale and seed: the same bytes."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from sepia.workloads import (
    creditcard,
    shops,
    smartgrid,
    stocks,
    traffic,
    transport,
    triples,
)
from sepia.workloads.manifest import Manifest
from sepia.workloads.rdfout import DatasetWriter


class Kind(Enum):
    """What the naive baseline does: SPARQL per window snapshot, nested loops, or nothing."""

    WINDOW = "window"
    EVENT = "event"
    INGEST = "ingest"


@dataclass(frozen=True, slots=True)
class Workload:
    """A benchmark workload: its generator and the scales a full and a quick run use
    (``scale`` counts stream elements; for W10 it is also the smallest background size), and
    the small scale its result counts are checked at."""

    id: str
    title: str
    source: str
    kind: Kind
    write: Callable[[DatasetWriter, int, random.Random], None]
    scale: int
    quick_scale: int
    check_scale: int | None = 300
    """Elements of the check data (results compared with the reference evaluator's; see
    ``sepia.bench.check``); None: not checked, ``unchecked`` says why."""
    unchecked: str = ""
    quick_x: tuple[float, ...] | None = None
    """The points of the cost-growth axis (``Variant.x``) a quick run measures; None: all."""


WORKLOADS: dict[str, Workload] = {w.id: w for w in (
    Workload("W1", "shops and coupons, window close + non-empty, RStream",
             "RSP-QL Example 10", Kind.WINDOW, shops.generate_w1, 100_000, 3_000, 1_500),
    Workload("W2", "shops and coupons, content change, IStream", "CQELS",
             Kind.WINDOW, shops.generate_w2, 20_000, 1_000, 700),
    Workload("W3", "sliding-window average price per company", "C-SPARQL, EP-SPARQL (5)-(6)",
             Kind.WINDOW, stocks.generate_w3, 100_000, 3_000),
    Workload("W4", "V-shape and head-and-shoulders, SC and STN, 110 companies",
             "SPAseq Q3, Q4", Kind.EVENT, stocks.generate_w4, 100_000, 3_000),
    Workload("W5", "smart grid, three streams, Kleene+ on weather, background GRAPH",
             "SPAseq Q1", Kind.EVENT, smartgrid.generate_w5, 100_000, 3_000),
    Workload("W6", "credit card big-after-small, Kleene+, stateful filter",
             "SPAseq Q2", Kind.EVENT, creditcard.generate_w6, 100_000, 3_000),
    Workload("W7", "traffic, conjunction of two streams after a sequence",
             "SPAseq Q5", Kind.EVENT, traffic.generate_w7, 30_000, 3_000),
    Workload("W8", "drop-then-rise with getDURATION (and its RDFS variant)",
             "EP-SPARQL (1)", Kind.EVENT, stocks.generate_w8, 50_000, 3_000, 1_650),
    Workload("W9", "subway delays: SEQ with a negated tail + nested path",
             "CQELS-CEP Example 6", Kind.EVENT, transport.generate_w9, 20_000, 1_000, 200),
    Workload("W10", "W6 with the background KB grown 1x, 10x, 100x",
             "SPAseq Fig. 18", Kind.EVENT, creditcard.generate_w10, 10_000, 500, 60),
    Workload("W11", "V-shape and head-and-shoulders with WITHIN 6, 60, 600 minutes",
             "SPAseq Figs. 15-17", Kind.EVENT, stocks.generate_w11, 50_000, 1_000, 150,
             quick_x=(6, 600)),  # WITHIN 60 minutes: W4's queries, measured there
    Workload("W12", "W4's queries on a price per company per minute (runs end)",
             "SPAseq Q3, Q4", Kind.EVENT, stocks.generate_w12, 100_000, 3_000, 1_000),
    Workload("W13", "W3's average price, the trades given per company (split, no PARTITION BY)",
             "C-SPARQL", Kind.WINDOW, stocks.generate_w13, 100_000, 3_000),
    Workload("triples", "N triples, one per element, TriG and N-Quads (ingest)",
             "io.md", Kind.INGEST, triples.generate_triples, 1_000_000, 20_000, None,
             "no query"),
)}


def workload(workload_id: str) -> Workload:
    """The workload named ``workload_id`` (case-insensitive), or KeyError naming the known ones."""
    for key, value in WORKLOADS.items():
        if key.lower() == workload_id.lower():
            return value
    raise KeyError(f"unknown workload {workload_id!r}; known: {', '.join(WORKLOADS)}")


def generate(
    workload_id: str, scale: int, seed: int, out: Path, compress: bool = False
) -> Manifest:
    """Write the workload's streams, background, queries and manifest under ``out``."""
    if scale < 1:
        raise ValueError(f"scale must be at least 1, got {scale}")
    spec = workload(workload_id)
    data = DatasetWriter(out, spec.id, scale, seed, compress)
    spec.write(data, scale, random.Random(seed))
    return data.finish()
