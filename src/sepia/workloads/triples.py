"""A plain stream of N triples, one per element, in TriG and N-Quads: the ingest benchmark
(parse, validate, and later `sepia validate` through Spark) needs the input and nothing else."""

from __future__ import annotations

import random

from sepia.workloads.rdfout import EPOCH_MS, DatasetWriter, decimal, integer, iri, string

NS = "http://example.org/ingest/"


def generate_triples(data: DatasetWriter, scale: int, rng: random.Random) -> None:
    """Subjects from a pool of 10k, five predicates, objects of four kinds (IRI, integer,
    decimal, string), one element per millisecond: the same content in both formats."""
    trig = data.stream("triples", NS + "stream", "triples.trig")
    nquads = data.stream("triples-nq", NS + "stream", "triples.nq")
    objects = (
        lambda: iri(f"{NS}o{rng.randrange(10_000)}"),
        lambda: integer(rng.randrange(1_000_000)),
        lambda: decimal(rng.uniform(0, 1000)),
        lambda: string(f"value {rng.randrange(100_000)}"),
    )
    for n in range(scale):
        kind = rng.randrange(4)
        triple = (iri(f"{NS}s{rng.randrange(10_000)}"), iri(f"{NS}p{kind}{rng.randrange(5)}"),
                  objects[kind]())
        graph = iri(f"{NS}e{n}")
        trig.element(graph, [triple], EPOCH_MS + n)
        nquads.element(graph, [triple], EPOCH_MS + n)
    data.query("trig", None, params={"streams": ["triples"]})
    data.query("nquads", None, params={"streams": ["triples-nq"]})
