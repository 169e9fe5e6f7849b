"""Measurements of RDFS reasoning: EP-SPARQL's stream-reasoning test and the background
closure (docs/reasoning.md reports them).

EP-SPARQL (seed 003, section 6, Test 2, after Streaming Knowledge Bases) listens to streamed
triples and decides whether each subject is an instance of a class of concern with 40,080
subclasses, class hierarchy at most 8 deep, and reports the delay reasoning adds per triple.
Here the hierarchy is generated (:func:`class_hierarchy`), the stream types each subject with
a random class, and the per-triple delay of the precomputed-schema expansion is measured next
to two brute-force baselines: a SPARQL ``rdfs:subClassOf*`` query per triple (pyoxigraph) and
re-closing hierarchy plus triple per triple (the reference evaluator's closure).

Run ``python -m sepia.reasoning.bench`` or call :func:`stream_reasoning_delays` and
:func:`background_timings`; both return plain dicts of numbers.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections import deque
from collections.abc import Callable, Sequence

import pyoxigraph as ox

from sepia.rdf.vocabulary import XSD
from sepia.reasoning.background import OxTriple, as_tuple, close_background
from sepia.reasoning.rdfs import entailed
from sepia.reasoning.schema import Schema, Vocabulary
from sepia.reasoning.support import SupportCounter
from sepia.semantics.entailment import rdfs_closure

PLANTS = "http://example.org/plants#"
V = Vocabulary.terms()
XSD_STRING = f"{XSD}string"


def class_hierarchy(
    classes: int, depth: int, root: ox.NamedNode, seed: int = 0, prefix: str = "C"
) -> list[OxTriple]:
    """``classes`` classes below ``root`` (rdfs:subClassOf triples), each hung under a random
    earlier class that is less than ``depth`` deep: a random tree of height at most depth."""
    rng = random.Random(seed)
    open_nodes: list[tuple[ox.NamedNode, int]] = [(root, 0)]
    triples: list[OxTriple] = []
    for i in range(classes):
        parent, level = open_nodes[rng.randrange(len(open_nodes))]
        node = ox.NamedNode(f"{PLANTS}{prefix}{i}")
        triples.append((node, V.sub_class, parent))
        if level + 1 < depth:
            open_nodes.append((node, level + 1))
    return triples


def _delays(check: Callable[[OxTriple], bool], stream: Sequence[OxTriple]) -> tuple[dict, int]:
    """Per-triple delay statistics in microseconds, and how many triples the check accepted."""
    times, found = [], 0
    for triple in stream:
        start = time.perf_counter()
        found += check(triple)
        times.append((time.perf_counter() - start) * 1e6)
    times.sort()
    return {
        "mean_us": statistics.fmean(times),
        "median_us": times[len(times) // 2],
        "p99_us": times[int(len(times) * 0.99)],
    }, found


def stream_reasoning_delays(
    classes: int = 40_000,
    depth: int = 8,
    triples: int = 10_000,
    reclose_sample: int = 5,
    window: int = 1_000,
    seed: int = 0,
) -> dict:
    """EP-SPARQL's Test 2: per-triple delay of deciding whether a streamed triple's subject
    is an instance of the class of concern, by expansion and by two brute-force baselines."""
    concern = ox.NamedNode(PLANTS + "Tracheobionta")
    other = ox.NamedNode(PLANTS + "Fungi")
    hierarchy = class_hierarchy(classes, depth, concern, seed)
    hierarchy += class_hierarchy(max(classes // 40, 1), depth, other, seed + 1, prefix="F")
    every_class = [t[0] for t in hierarchy] + [concern, other]
    rng = random.Random(seed + 2)
    stream = [
        (ox.NamedNode(f"{PLANTS}plant{i}"), V.type, rng.choice(every_class))
        for i in range(triples)
    ]
    start = time.perf_counter()
    schema = Schema.of(hierarchy, V)
    schema_s = time.perf_counter() - start

    def expansion(t: OxTriple) -> bool:
        return (t[0], V.type, concern) in entailed(t, schema)

    counter: SupportCounter = SupportCounter(schema)
    held: deque[OxTriple] = deque()

    def support_counts(t: OxTriple) -> bool:
        """A count-based window of ``window`` triples: the oldest leaves as one arrives."""
        counter.add(t)
        held.append(t)
        if len(held) > window:
            counter.remove(held.popleft())
        return (t[0], V.type, concern) in counter

    store = ox.Store()
    store.extend(ox.Quad(*t) for t in hierarchy)
    ask = f"ASK {{ ?c <{V.sub_class.value}>* {concern} }}"

    def sparql_path(t: OxTriple) -> bool:
        return bool(store.query(ask, substitutions={ox.Variable("c"): t[2]}))

    schema_triples = [ox.Triple(*t) for t in hierarchy]

    def reclose(t: OxTriple) -> bool:
        closed = rdfs_closure([ox.Triple(*t)], schema_triples)
        return ox.Triple(t[0], V.type, concern) in closed

    results: dict = {"classes": len(every_class), "depth": depth, "triples": triples,
                     "schema_closure_s": schema_s}
    answers = {}
    for name, check, sample in [
        ("expansion", expansion, stream),
        ("support_counter", support_counts, stream),
        ("sparql_path", sparql_path, stream),
        ("reclose", reclose, stream[:reclose_sample]),
    ]:
        stats, answers[name] = _delays(check, sample)
        results[name] = {**stats, "triples": len(sample), "found": answers[name]}
    results["instances_of_concern"] = answers["expansion"]
    fast = ("expansion", "support_counter", "sparql_path")
    results["agree"] = len({answers[name] for name in fast}) == 1
    results["reclose_agrees"] = answers["reclose"] == sum(
        expansion(t) for t in stream[:reclose_sample]
    )
    return results


def background_graph(triples: int, seed: int = 0) -> list[OxTriple]:
    """A generated background: a class hierarchy (500 classes), 40 properties in chains of
    sub-properties with domains and ranges, and instance triples (types, links, literals)."""
    rng = random.Random(seed)
    thing = ox.NamedNode(PLANTS + "Thing")
    graph = class_hierarchy(500, 6, thing, seed, prefix="K")
    classes = [t[0] for t in graph]
    props = [ox.NamedNode(f"{PLANTS}p{i}") for i in range(40)]
    for i, p in enumerate(props):
        if i % 4:
            graph.append((p, V.sub_property, props[i - 1]))
        graph.append((p, V.domain if i % 2 else V.range, rng.choice(classes)))
    while len(graph) < triples:
        s = ox.NamedNode(f"{PLANTS}x{rng.randrange(triples // 5)}")
        kind = rng.random()
        if kind < 0.3:
            graph.append((s, V.type, rng.choice(classes)))
        elif kind < 0.6:
            graph.append((s, rng.choice(props), ox.Literal(str(rng.random()))))
        else:
            o = ox.NamedNode(f"{PLANTS}x{rng.randrange(triples // 5)}")
            graph.append((s, rng.choice(props), o))
    return graph


def _from_rdflib(term: object) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    import rdflib

    if isinstance(term, rdflib.Literal):
        if term.language:
            return ox.Literal(str(term), language=term.language)
        return ox.Literal(str(term), datatype=ox.NamedNode(str(term.datatype or XSD_STRING)))
    if isinstance(term, rdflib.BNode):
        return ox.BlankNode(str(term))
    return ox.NamedNode(str(term))


def _to_rdflib(term: ox.NamedNode | ox.BlankNode | ox.Literal) -> object:
    import rdflib

    if isinstance(term, ox.Literal):
        return rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype.value))
    return rdflib.URIRef(term.value)


def background_timings(triples: int = 100_000, seed: int = 0) -> dict:
    """Closing a generated background of ``triples`` triples: this module's schema approach
    against the ``reasonable`` OWL 2 RL reasoner (bench extra), and how their outputs differ:
    triples of reasonable's that mention OWL terms, others it has that the spec's closure has
    not, and spec triples it misses."""
    import reasonable

    graph = background_graph(triples, seed)
    store = ox.Store()
    store.extend(ox.Quad(*t) for t in graph)
    start = time.perf_counter()
    closed, _ = close_background(store)
    schema_s = time.perf_counter() - start
    ours = {as_tuple(q) for q in closed}

    converted = [tuple(map(_to_rdflib, t)) for t in graph]
    start = time.perf_counter()
    reasoner = reasonable.PyReasoner()
    reasoner.from_graph(converted)
    inferred = reasoner.reason()
    reasonable_s = time.perf_counter() - start
    theirs = {tuple(map(_from_rdflib, t)) for t in inferred}
    owl = {t for t in theirs if any("2002/07/owl#" in str(x) for x in t)}
    return {
        "triples": len(graph),
        "schema_approach_s": schema_s,
        "schema_approach_closure": len(ours),
        "reasonable_s": reasonable_s,
        "reasonable_closure": len(theirs),
        "reasonable_owl_only": len(owl),
        "reasonable_extra": len(theirs - owl - ours),
        "reasonable_misses": len(ours - theirs),
    }


def main(arguments: Sequence[str]) -> dict:
    """``python -m sepia.reasoning.bench``: both measurements; with ``stream CLASSES TRIPLES
    RECLOSE``, the stream test alone at that size (what `sepia bench reasoning` runs)."""
    if arguments and arguments[0] == "stream":
        classes, triples, reclose = (int(a) for a in arguments[1:4])
        return stream_reasoning_delays(classes, triples=triples, reclose_sample=reclose)
    return {"stream": stream_reasoning_delays(), "background": background_timings()}


if __name__ == "__main__":
    import sys

    print(json.dumps(main(sys.argv[1:]), indent=2))
