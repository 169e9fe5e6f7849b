"""Helpers for the semantics tests: terms and stream elements from short names."""

from __future__ import annotations

import pyoxigraph as ox

from sepia.algebra import pattern as gp
from sepia.rdf.stream import StreamElement
from sepia.semantics.mappings import EventMapping, Mu

EX = "http://example.org/"


def iri(name: str) -> ox.NamedNode:
    return ox.NamedNode(EX + name)


def mu(**bindings: str) -> Mu:
    """A solution mapping whose values are example.org IRIs named by the strings."""
    return Mu({k: iri(v) for k, v in bindings.items()})


def em(start: int, end: int, support: str = "", **bindings: str) -> EventMapping:
    """An event mapping; ``support`` names the element it came from (window 'w')."""
    occurrences = frozenset({("w", support)}) if support else frozenset()
    return EventMapping(mu(**bindings), start, end, occurrences)


def element(time: int, *triples: tuple[str, str, str], stream: str = "s", end: int | None = None):
    """A stream element at ``time`` (or [time, end]) named g<time>-<first subject>."""
    graph = f"g{time}-{triples[0][0]}" if triples else f"g{time}"
    return StreamElement(
        stream,
        graph,
        time,
        time if end is None else end,
        tuple(ox.Triple(iri(s), iri(p), iri(o)) for s, p, o in triples),
    )


def var(name: str) -> ox.Variable:
    return ox.Variable(name)


def _term(x: object) -> object:
    """'?v' is a variable, another string an example.org IRI, anything else itself."""
    if isinstance(x, str):
        return var(x[1:]) if x.startswith("?") else iri(x)
    return x


def bgp(*triples: tuple[object, object, object]) -> gp.Bgp:
    """A BGP from (s, p, o) triples written with ``_term``'s shorthand."""
    return gp.Bgp(tuple(gp.TriplePattern(*map(_term, t)) for t in triples))  # type: ignore[arg-type]


def project(inner: gp.GraphPattern, *names: str) -> gp.Project:
    return gp.Project(inner, tuple(var(n) for n in names))
