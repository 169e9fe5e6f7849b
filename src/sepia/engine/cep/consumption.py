"""RSEP-QL's consuming selection policies in the engine (seed 001, Definition 10): SEQ^c
and SEQ^r over derivations, the occurrences a match used consumed, and the notes kept per
element a window shows (graph names, starts)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence

import pyoxigraph as ox

from sepia.algebra.event import SelectionPolicy
from sepia.engine.cep.epsparql import (
    EncodedTriple,
    Matcher,
    OccurrenceLeaf,
    delta_join,
)
from sepia.engine.cep.event_trees import (
    EventSeq,
    EventTree,
    Inputs,
    Scope,
    Shown,
    tree_mappings,
)
from sepia.engine.cep.intervals import EventMapping, joined
from sepia.engine.r2r import operators as po
from sepia.engine.rows import compatible, merge
from sepia.engine.s2r.windows import WindowState
from sepia.rdf.stream import Occurrence, StreamElement

ServeKey = Callable[[EventMapping], tuple]
"""The reference's ``rsepql.serve_key`` on encoded derivations (the caller decodes terms)."""
Named = tuple[int, int, str, str, tuple[EncodedTriple, ...]]
"""(start, end, stream, graph name, triples) of one element."""


class Notes:
    """One value per element each window shows (its graph name, its start), aligned with
    the window's own deque of elements: appended as a window admits an element (call after
    inserting), dropped from the front as the window evicts. State rows: (window, value) in
    window order."""

    def __init__(self, of: Callable[[StreamElement], object]) -> None:
        self.of = of
        self.by_window: dict[ox.NamedNode, deque] = {}

    def admit(
        self, windows: dict[ox.NamedNode, WindowState], streams: dict[ox.NamedNode, str],
        elements: Sequence[StreamElement],
    ) -> None:
        if not windows:  # EP-SPARQL over occurrences alone: no window to note for
            return
        for e in elements:
            for name, window in windows.items():
                if streams[name] == e.stream and window.admits(e.time):
                    self.by_window.setdefault(name, deque()).append(self.of(e))
        for name, window in windows.items():
            notes = self.by_window.setdefault(name, deque())
            while len(notes) > len(window.elements):
                notes.popleft()

    def get(self, window: ox.NamedNode) -> deque:
        return self.by_window.get(window, deque())

    def rows(self) -> list[tuple]:
        return [(w.value, v) for w, values in self.by_window.items() for v in values]

    def restore(self, rows: Iterable[Sequence]) -> None:
        self.by_window = {}
        for window, value in rows:
            self.by_window.setdefault(ox.NamedNode(window), deque()).append(value)


class Derivations:
    """EP-SPARQL under consumption: every element so far with its name, and each occurrence
    BGP's derivations so far (one per combination of occurrences its triple patterns take),
    grown on each arrival by a delta join over the triple patterns."""

    def __init__(self, leaves: Sequence[OccurrenceLeaf]) -> None:
        self.leaves = {leaf.number: leaf for leaf in leaves}
        self.elements: list[Named] = []
        self.per_pattern: dict[int, list[list[EventMapping]]] = {
            leaf.number: [[] for _ in leaf.patterns] for leaf in leaves
        }
        self.solutions: dict[int, list[EventMapping]] = {leaf.number: [] for leaf in leaves}

    def add(self, elements: Sequence[Named], match: Matcher) -> None:
        """Elements ending now: each triple pattern's derivations on them, and the BGPs'
        derivations that use one of them."""
        self.elements += elements
        for number, leaf in self.leaves.items():
            patterns = self.per_pattern[number]
            deltas = [_occurring(plan, elements, match) for plan in leaf.patterns]
            for known, new in zip(patterns, deltas, strict=True):
                known += new
            self.solutions[number] += delta_join(patterns, deltas)

    def select(self, leaf: OccurrenceLeaf, scope: Scope) -> set[EventMapping]:
        """The BGP's derivations in ``scope``."""
        return {
            m for m in self.solutions[leaf.number]
            if m[2] <= scope.before and (scope.mu is None or compatible(m[0], scope.mu))
        }

    def rows(self) -> list[tuple]:
        """State rows: one per triple of each element (an empty element: one of Nones)."""
        return [
            (number, start, end, stream, graph, *triple)
            for number, (start, end, stream, graph, triples) in enumerate(self.elements)
            for triple in (triples or ((None, None, None),))
        ]

    def restore(self, rows: Iterable[Sequence], match: Matcher) -> None:
        self.__init__(list(self.leaves.values()))  # type: ignore[misc]
        grouped: dict[int, tuple[int, int, str, str, list[EncodedTriple]]] = {}
        for number, start, end, stream, graph, *triple in rows:
            entry = grouped.setdefault(number, (start, end, stream, graph, []))
            if triple[0] is not None:
                entry[4].append(tuple(triple))
        elements = [(*e[:4], tuple(e[4])) for _, e in sorted(grouped.items())]
        self.add(elements, match)


def _occurring(plan: po.PhysicalPlan, elements: Sequence[Named], match: Matcher) -> list:
    """A triple pattern's derivations over ``elements``: one per element and row."""
    return [
        (row, start, end, frozenset({(end, start, "*", stream, graph)}))
        for start, end, stream, graph, triples in elements
        for row in match(plan, end, triples)
    ]


class Consumption:
    """RSEP-QL SEQ^c / SEQ^r over any event pattern: the pattern re-evaluated at every
    instant, as the reference does (``sepia.semantics.events.EventEvaluator.seq_consuming``),
    on derivations (each mapping with its support, as ``Derivation``), with the consumed
    occurrences carried from one instant to the next."""

    def __init__(self, key: ServeKey, leaves: Sequence[OccurrenceLeaf] = ()) -> None:
        self.key = key
        self.consumed: frozenset[Occurrence] = frozenset()
        self.labels = Notes(lambda e: e.graph)
        """Each window's element graph names."""
        self.streams: dict[ox.NamedNode, str] = {}
        self.occurrences = Derivations(leaves)
        self._nesting = 0

    def admit(
        self, windows: dict[ox.NamedNode, WindowState], streams: dict[ox.NamedNode, str],
        elements: Sequence[StreamElement], named: Sequence[Named], match: Matcher,
    ) -> None:
        """Name the elements the windows just admitted (call after inserting them), take
        EP-SPARQL's occurrences (``named``), and forget the names, and consumed occurrences,
        of the elements that left the windows."""
        self.streams = streams
        self.labels.admit(windows, streams, elements)
        if self.occurrences.leaves and named:
            self.occurrences.add(named, match)
        shown = {(name.value, label) for name, labels in self.labels.by_window.items()
                 for label in labels}
        self.consumed = frozenset(  # graph names are unique in a stream: gone for good
            o for o in self.consumed if o[2] == "*" or (o[2], o[4]) in shown
        )

    def completed(self, tree: EventTree, inputs: Inputs) -> set[EventMapping]:
        """The pattern's mappings at t that end at t; consumption done at t is kept."""
        return {m for m in self.current(tree, inputs) if m[2] == inputs.t}

    def current(self, tree: EventTree, inputs: Inputs) -> set[EventMapping]:
        """Every mapping of the pattern at t (derivations of one mapping are one);
        consumption done at t is kept."""
        return {m[:3] for m in tree_mappings(tree, inputs, Scope(inputs.t, None), None)}

    def events(
        self, window: ox.NamedNode, plan: po.PhysicalPlan, shown: Shown, match: Matcher,
        scope: Scope,
    ) -> set[EventMapping]:
        """``EVENT w { P }``'s derivations: one per element and mapping, supported by the
        element seen through w."""
        labels, stream = self.labels.get(window), self.streams[window]
        found: set[EventMapping] = set()
        for i, start, time, triples in shown:
            support = frozenset({(time, start, window.value, stream, labels[i])})
            for row in match(plan, time, triples):
                if scope.mu is None or compatible(row, scope.mu):
                    found.add((row, start, time, support))
        return found

    def seq(self, tree: EventSeq, inputs: Inputs, scope: Scope) -> set[EventMapping]:
        """Right derivations in serve order each take the earliest (CHRONOLOGICAL) or latest
        (RECENT) compatible, earlier, unconsumed left derivation; both are consumed. A
        nested consuming SEQ consumes on a trial copy; only the outermost commits."""
        committed = self.consumed
        self._nesting += 1
        rights = tree_mappings(tree.right, inputs, scope, None)
        consumed, found = committed, set()
        for b in sorted(rights, key=self.key):
            self.consumed = consumed  # what nested SEQs inside the left side start from
            if b[3] & consumed:  # type: ignore[misc]
                continue
            mu = b[0] if scope.mu is None else merge(scope.mu, b[0])
            inner = Scope(min(b[1] - 1, scope.before), mu)
            partners = sorted(
                (a for a in tree_mappings(tree.left, inputs, inner, None)
                 if compatible(a[0], b[0]) and a[2] < b[1] and not a[3] & consumed),  # type: ignore[misc]
                key=self.key,
            )
            if partners:
                a = partners[-1] if tree.policy is SelectionPolicy.RECENT else partners[0]
                found.add(joined(a, b, a[1], b[2]))
                consumed = consumed | a[3] | b[3]  # type: ignore[misc]
        self._nesting -= 1
        self.consumed = consumed if self._nesting == 0 else committed
        return found

    def rows(self) -> list[tuple]:
        """State rows: ("label", window, graph name) in window order, ("consumed", end,
        start, source, stream, graph name), ("occurrence", ...) (``Derivations.rows``)."""
        labels = [("label", *row) for row in self.labels.rows()]
        consumed = [("consumed", *o) for o in sorted(self.consumed)]
        return labels + consumed + [("occurrence", *row) for row in self.occurrences.rows()]

    def restore(self, rows: Iterable[Sequence], match: Matcher) -> None:
        rows = list(rows)
        self.labels.restore(row[1:] for row in rows if row[0] == "label")
        self.consumed = frozenset(tuple(row[1:]) for row in rows if row[0] == "consumed")
        self.occurrences.restore((row[1:] for row in rows if row[0] == "occurrence"), match)
