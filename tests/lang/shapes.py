"""Compact shapes of event trees for assertions: GPM labels and windows instead of patterns."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import sepia.algebra as a
from sepia.lang import parse_query

PAPERS = Path(__file__).parent / "papers"


def paper(name: str) -> a.Query:
    """The compiled query of tests/lang/papers/<name>.rq."""
    path = PAPERS / f"{name}.rq"
    return parse_query(path.read_text(encoding="utf-8"), source=str(path))


def shape(node: object) -> str:
    """``(seq skip-till-next A (kleene B))``: event operators with their leaves' labels (or
    windows), leaving the graph patterns out."""
    if isinstance(node, a.Event):
        return node.label or a.to_sexpr(node.window)
    if isinstance(node, a.OccurrencePattern):
        return f"occ{len(node.bgp.triples)}"
    parts = [a.tag(node)]
    for field in dataclasses.fields(node):
        value = getattr(node, field.name)
        if type(value).__module__ == a.Event.__module__ and dataclasses.is_dataclass(value):
            parts.append(shape(value))
        elif isinstance(value, a.SelectionPolicy):
            parts.append(value.value)
    return "(" + " ".join(parts) + ")"


def match_of(query: a.Query) -> a.Match:
    """The one Match node of a query's pattern."""
    found = [n for n in nodes(query.expression) if isinstance(n, a.Match)]
    assert len(found) == 1, found
    return found[0]


def nodes(node: object):
    """Every node of an algebra tree, parents first."""
    yield node
    if dataclasses.is_dataclass(node):
        for field in dataclasses.fields(node):
            yield from nodes(getattr(node, field.name))
