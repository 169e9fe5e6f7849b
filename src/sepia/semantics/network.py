"""Query networks (language.md section 7) and EP-SPARQL's Q-closure (seed 003, section 4).

A CONSTRUCT query registered as a stream (``REGISTER RSTREAM <s2> AS CONSTRUCT ...``) makes
``<s2>`` a stream: each of its result graphs becomes one event graph stamped with the
result's time, or with the interval [from, to] of the event match it came from. Other
queries of the run read it like any input stream; a rule whose output stream is one of its
own inputs is fed back (the Q-closure). The network is evaluated to a fixpoint: every
query is evaluated on the inputs plus the streams derived so far, until no derived stream
changes. A stream two queries produce has both queries' elements: at one time, the
run's input first, then each producer's in the order the queries are given (the order in
which the engine hands them on).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyoxigraph as ox

from sepia.algebra import query as qa
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind
from sepia.semantics.evaluator import evaluate, time_kind

MAX_ROUNDS = 64
"""Derivations are monotone for the papers' rules; a network that keeps changing after
this many rounds is reported instead of looping forever."""


def derived_element(stream: str, result: Result, n: int, kind: TimeKind) -> StreamElement | None:
    """The event graph the n-th result of a registered CONSTRUCT query makes, stamped with
    its match interval or its time (None: no triples, no element)."""
    if not result.triples:
        return None
    start, end = result.interval or (result.t, result.t)
    graph = f"urn:sepia:derived:{result.query}:{n}"
    return StreamElement(stream, graph, start, end, result.triples, kind)


def derived_elements(stream: str, results: Sequence[Result], kind: TimeKind) -> list[StreamElement]:
    """The event graphs a registered CONSTRUCT query's results make, in time order."""
    made = (derived_element(stream, r, n, kind) for n, r in enumerate(results))
    return sorted((e for e in made if e is not None), key=lambda e: (e.end, e.start))


def evaluate_network(
    queries: Sequence[tuple[str, qa.Query]],
    streams: Mapping[str, Sequence[StreamElement]],
    background: ox.Store | None = None,
    *,
    until: int | None = None,
) -> list[Result]:
    """The results of every query of a run, registered streams fed to the others."""
    derived: dict[str, list[StreamElement]] = {}
    for _ in range(MAX_ROUNDS):
        inputs = {**streams}
        for iri, elements in derived.items():  # stable: the input's, then each producer's
            inputs[iri] = sorted([*inputs.get(iri, []), *elements], key=lambda e: e.end)
        answers = {
            name: evaluate(q, inputs, background, name=name, until=until) for name, q in queries
        }
        now: dict[str, list[StreamElement]] = {}
        for name, q in queries:  # two producers of one stream: both queries' elements
            if (out := q.output_stream) is not None:
                now.setdefault(out, []).extend(
                    derived_elements(out, answers[name], time_kind(streams))
                )
        if _graphs(now) == _graphs(derived):
            return sorted((r for rs in answers.values() for r in rs), key=lambda r: r.t)
        derived = now
    raise RuntimeError(f"the query network still derives new events after {MAX_ROUNDS} rounds")


def _graphs(derived: Mapping[str, list[StreamElement]]) -> dict[str, list[tuple]]:
    """Derived streams compared up to blank node labels (fresh in every round)."""
    return {
        s: [(e.start, e.end, frozenset(map(_unlabelled, e.triples))) for e in es]
        for s, es in derived.items()
    }


def _unlabelled(triple: ox.Triple) -> tuple[str, ...]:
    return tuple(
        "_" if isinstance(x, ox.BlankNode) else str(x)
        for x in (triple.subject, triple.predicate, triple.object)
    )
