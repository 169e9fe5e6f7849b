"""Helpers for the semantics tests: terms and stream elements from short names."""

from __future__ import annotations

import pyoxigraph as ox

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
