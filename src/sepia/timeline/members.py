"""Which stream elements an event match was made of, worked out from the result alone.

A result carries its interval [from, to] and its bindings, not the elements behind it. An
element can be a member when it lies inside the interval, comes from a stream one of the
pattern's (non-negated) basic event patterns reads, and holds every term the result binds
to that pattern's variables (under RDFS entailment: in its closure). When the pattern is a
chain of sequences the members are then fixed by order: one element per basic event
pattern, each after the previous one, the first starting at `from` and the last ending at
`to` (RSEP-QL, CQELS-CEP, EP-SPARQL and SPAseq sequences all stamp a match so). Elsewhere
(conjunction, disjunction, Kleene plus, several MATCHes) every candidate is linked.
Variables the query projects away cannot be checked, so the links are what the result
shows, not a replay of the evaluator's derivation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import pyoxigraph as ox

from sepia.algebra import event as ev
from sepia.algebra import pattern as gp
from sepia.algebra.query import Query
from sepia.algebra.scope import nodes
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import canonical
from sepia.reasoning.entailment import rdfs_closure

SEQUENCES = (ev.Seq, ev.SeqJoin, ev.SeqWithout, ev.NoTail, ev.NoHead, ev.EventFilter)
"""Operators whose non-negated operands follow each other in time, in the written order."""


@dataclass(frozen=True, slots=True)
class Leaf:
    """A basic event pattern: its variables and the stream it reads (None: any)."""

    variables: frozenset[str]
    stream: str | None


def match_members(
    query: Query,
    streams: Mapping[str, Sequence[StreamElement]],
    schema: set[ox.Triple] | None = None,
) -> Callable[[Result], list[StreamElement]]:
    """A function giving the member elements of each of ``query``'s event matches."""
    found = [list(_leaves(m.event, query, False)) for m in _matches(query.pattern)]
    leaves = [leaf for group in found for leaf in group]
    chain = len(found) == 1 and all(_is_chain(m.event) for m in _matches(query.pattern))
    elements = sorted((e for es in streams.values() for e in es), key=lambda e: (e.end, e.start))
    terms = {id(e): _terms(e, schema) for e in elements}

    def members(result: Result) -> list[StreamElement]:
        if result.interval is None:
            return []
        start, end = result.interval
        bound = result.values
        inside = [e for e in elements if start <= e.start and e.end <= end]
        candidates = [[e for e in inside if _fits(leaf, e, bound, terms[id(e)])] for leaf in leaves]
        ordered = _ordered(candidates, start, end) if chain else None
        if ordered is not None:
            return ordered
        picked = {id(e) for group in candidates for e in group}
        return [e for e in inside if id(e) in picked]

    return members


def _fits(leaf: Leaf, element: StreamElement, bound: Mapping, terms: set) -> bool:
    if leaf.stream is not None and element.stream != leaf.stream:
        return False
    return all(canonical(bound[v]) in terms for v in leaf.variables if v in bound)


def _ordered(
    candidates: list[list[StreamElement]], start: int, end: int
) -> list[StreamElement] | None:
    """One candidate per leaf, each after the previous, spanning exactly [start, end]."""

    def pick(k: int, after: int | None) -> list[StreamElement] | None:
        if k == len(candidates):
            return []
        for e in candidates[k]:
            if (after is None and e.start != start) or (after is not None and e.start <= after):
                continue
            if k == len(candidates) - 1 and e.end != end:
                continue
            rest = pick(k + 1, e.end)
            if rest is not None:
                return [e, *rest]
        return None

    return pick(0, None) if candidates else None


def _terms(element: StreamElement, schema: set[ox.Triple] | None) -> set:
    triples = rdfs_closure(element.triples, schema) if schema is not None else element.triples
    return {canonical(x) for t in triples for x in (t.subject, t.predicate, t.object)}


def _leaves(pattern: ev.EventPattern, query: Query, negated: bool) -> Iterator[Leaf]:
    """The non-negated basic event patterns, in written order."""
    match pattern:
        case ev.Event(inner, window, stream):
            if not negated:
                yield Leaf(frozenset(_variables(inner)), _stream_of(query, window, stream))
        case ev.OccurrencePattern(bgp):
            if not negated:
                for triple in bgp.triples:
                    yield Leaf(frozenset(_variables(triple)), None)
        case ev.Negation(inner):
            yield from _leaves(inner, query, True)
        case ev.NoTail(left, neg) | ev.NoHead(neg, left):
            yield from _leaves(left, query, negated)
            yield from _leaves(neg, query, True)
        case ev.SeqWithout(left, neg, right):
            yield from _leaves(left, query, negated)
            yield from _leaves(neg, query, True)
            yield from _leaves(right, query, negated)
        case _:
            for f in dataclasses.fields(pattern):
                part = getattr(pattern, f.name)
                if _is_event(part):
                    yield from _leaves(part, query, negated)


def _is_chain(pattern: ev.EventPattern) -> bool:
    """Only sequences (and their filters) above single-triple basic event patterns."""
    match pattern:
        case ev.Event():
            return True
        case ev.OccurrencePattern(bgp):
            return len(bgp.triples) == 1
        case ev.Negation():
            return True
        case _ if isinstance(pattern, SEQUENCES):
            parts = [getattr(pattern, f.name) for f in dataclasses.fields(pattern)]
            return all(_is_chain(p) for p in parts if _is_event(p))
    return False


def _stream_of(
    query: Query, window: ox.NamedNode | None, stream: ox.NamedNode | None
) -> str | None:
    if stream is not None:
        return stream.value
    decl = query.dataset.window(window) if window is not None else None
    return decl.stream.value if decl is not None else None


def _is_event(node: object) -> bool:
    return type(node).__module__ == ev.__name__ and dataclasses.is_dataclass(node)


def _variables(node: object) -> Iterator[str]:
    return (v.value for v in nodes(node, ox.Variable))


def _matches(node: object) -> list[gp.Match]:
    return nodes(node, gp.Match, inside=False)
