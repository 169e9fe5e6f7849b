"""Time-varying background graphs (RSP-QL seed 004, Definition 10): G(t) for every t.

A background graph changes by versions written the way io.md writes stream elements: a
named graph ``<v>`` of the background data is a *version* when a graph of the same data
states ``<v> prov:generatedAtTime T``. It is a version of the graph that holds that
statement: the default graph for a file loaded with ``--data PATH``, graph ``G`` for
``--data G=PATH``. Each version is a snapshot: G(t) is G's unversioned triples plus the
latest version stamped at or before t (versions sharing a time are merged), so RSP-QL
Example 4's G_shops is two versions, at 2 and at 14. The version graphs and their time
statements are bookkeeping: queries see G(t), never ``<v>`` itself.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field

import pyoxigraph as ox

from sepia.rdf.time import TimeKind, parse_time_literal
from sepia.rdf.vocabulary import PROV

GENERATED_AT = ox.NamedNode(f"{PROV}generatedAtTime")

GraphName = ox.NamedNode | ox.BlankNode | ox.DefaultGraph


@dataclass(frozen=True, slots=True)
class TimeVaryingGraph:
    """One background graph with versions: its unversioned triples and, in time order, the
    time and triples of each version."""

    static: frozenset[ox.Triple]
    times: tuple[int, ...]
    versions: tuple[frozenset[ox.Triple], ...]

    def version_at(self, t: int) -> int:
        """How many versions are stamped at or before t (0: none yet)."""
        return bisect.bisect_right(self.times, t)

    def at(self, t: int) -> frozenset[ox.Triple]:
        """The instantaneous graph G(t)."""
        n = self.version_at(t)
        return self.static | self.versions[n - 1] if n else self.static


@dataclass(frozen=True, slots=True)
class Background:
    """The background data of a run, split into graphs that never change and graphs with
    versions; ``kind`` is the kind of time the versions are stamped with (None: no version)."""

    static: dict[GraphName, list[ox.Triple]] = field(default_factory=dict)
    varying: dict[GraphName, TimeVaryingGraph] = field(default_factory=dict)
    kind: TimeKind | None = None

    @staticmethod
    def of(store: ox.Store | None) -> Background:
        """Read the versions out of a background store (see the module docstring)."""
        if store is None:
            return Background()
        graphs: dict[GraphName, list[ox.Triple]] = {}
        for q in store.quads_for_pattern(None, None, None, None):
            graphs.setdefault(q.graph_name, []).append(q.triple)
        stamps = [
            (g, t)
            for g, triples in graphs.items()
            for t in triples
            if t.predicate == GENERATED_AT and t.subject in graphs and t.subject != g
        ]
        times = [parse_time_literal(t.object) for _, t in stamps]
        kinds = {time.kind for time in times}
        if len(kinds) > 1:
            raise ValueError("background versions mix integer and xsd:dateTime times")
        for g, t in stamps:
            graphs[g].remove(t)
        stamped: dict[GraphName, dict[int, set[ox.Triple]]] = {}
        for (g, t), time in zip(stamps, times, strict=True):
            content = graphs.get(t.subject, [])  # type: ignore[arg-type]  # several stamps may name one version
            stamped.setdefault(g, {}).setdefault(time.value, set()).update(content)
        for _, t in stamps:
            graphs.pop(t.subject, None)  # type: ignore[arg-type]
        varying = {g: _varying(graphs.pop(g, []), v.items()) for g, v in stamped.items()}
        return Background(graphs, varying, next(iter(kinds), None))

    def state(self, t: int) -> tuple[int, ...]:
        """Which version of every time-varying graph holds at t (equal states: same data)."""
        return tuple(g.version_at(t) for g in self.varying.values())

    def schema_source(self) -> Iterable[ox.Triple]:
        """The triples whose schema applies to every graph: the unversioned ones."""
        return (t for triples in self.static.values() for t in triples)


def _varying(
    static: list[ox.Triple], versions: Iterable[tuple[int, set[ox.Triple]]]
) -> TimeVaryingGraph:
    ordered = sorted(versions, key=lambda v: v[0])
    return TimeVaryingGraph(
        frozenset(static), tuple(t for t, _ in ordered), tuple(frozenset(v) for _, v in ordered)
    )
