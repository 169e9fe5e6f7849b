"""What the engine tests share: the background store and result comparison."""

from __future__ import annotations

from collections import Counter

import pyoxigraph as ox

from sepia.io.results import Result
from sepia.lang import parse_query
from sepia.runtime.local import run
from sepia.semantics import evaluate

from .generators import BACKGROUND, SCHEMA


def background(schema: bool = False) -> ox.Store:
    """The tests' background data, with an RDFS schema over their vocabulary if asked."""
    store = ox.Store()
    store.load(BACKGROUND.encode(), format=ox.RdfFormat.TRIG)
    if schema:
        store.load(SCHEMA.encode(), format=ox.RdfFormat.TURTLE)
    return store


def canonical(results: list[Result]) -> Counter:
    """Rows grouped into matches: a Kleene match's rows stay together, its name dropped
    (the reference numbers matches once the whole input is known, the engine as they
    complete); every other row is its own group."""
    groups: dict[object, list] = {}
    for r in results:
        key = (r.t, r.interval, r.match) if r.match is not None else object()
        groups.setdefault(key, []).append((r.t, r.op, r.binding, r.triples, r.boolean, r.interval))
    return Counter(tuple(sorted(rows, key=repr)) for rows in groups.values())


def assert_agrees(text: str, data: dict) -> None:
    """The engine's answer is the reference's (matches up to renaming), in time order."""
    query = parse_query(text)
    expected = evaluate(query, data, background(), name="q")
    got = list(run([("q", query)], data, background()))
    assert canonical(got) == canonical(expected), text
    assert [r.t for r in got] == sorted(r.t for r in got)
