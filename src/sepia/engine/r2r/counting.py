"""The matches of a join of triple patterns, maintained by counting from the windows'
journals, without keeping the mappings (for ``engine.aggregates``).

Each triple pattern ("atom") keeps the triples of its graph that match it (its match set),
indexed on its variable positions. A triple that enters a window enters the match set of
each atom it matches, one atom after the other, and the mappings it creates are its join
with the other atoms' match sets as they are then: a mapping is found exactly once, when
the last of its triples enters. A triple that leaves is joined the same way before it
leaves each match set: a mapping is lost exactly once, when the first of its triples
leaves. So each evaluation costs a probe per changed triple, and nothing is stored per
mapping (``delta.WindowJoin`` keeps every mapping with the triples it uses, which
``aggregates`` does not need: it only folds the mappings' changes into per-group state).

Triples are read in pyoxigraph's canonical forms (the dictionary encodes terms so,
``rdf.terms.canonical``): the reference's store keeps "03"^^xsd:integer as "3", a graph is
a set, so two triples of one canonical form are one triple here (counted, to leave with the
last). Background atoms are matched
once; their graphs do not change (``ContinuousQuery._maintained``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sepia.engine.graph import EncodedTriple, Journal, TripleIndex
from sepia.engine.r2r import operators as po
from sepia.engine.rows import Row

Canonical = Callable[[Iterable[int]], Callable[[int], int]]
"""Learns the canonical forms of term ids, and gives the lookup of their canonical ids."""


class _Atom:
    """One triple pattern: its constants, its variables' slots, its match set."""

    __slots__ = ("binds", "by", "constants", "graph", "matched", "others", "repeats", "tests")

    def __init__(self, graph: po.GraphRef, pattern: po.EncodedPattern, form: Callable) -> None:
        self.graph = graph
        self.constants = [
            (i, form(p.id)) for i, p in enumerate(pattern) if isinstance(p, po.Constant)
        ]
        first: dict[int, int] = {}
        self.repeats: list[tuple[int, int]] = []
        """Positions that must equal an earlier one (a variable repeated in the pattern)."""
        for i, p in enumerate(pattern):
            if isinstance(p, po.Slot):
                if p.index in first:
                    self.repeats.append((i, first[p.index]))
                else:
                    first[p.index] = i
        self.others = [(i, c) for i, c in self.constants if i != 1]
        """The constants but the predicate."""
        self.tests = bool(self.others or self.repeats)
        """Whether a triple with the pattern's predicate can fail to match."""
        self.binds = [(i, slot) for slot, i in first.items()]
        """(position, slot) of each variable, at its first position."""
        self.matched: set[EncodedTriple] = set()
        self.by: dict[int, dict[int, set[EncodedTriple]]] = {}
        """The match set indexed on the variable positions other atoms probe
        (``CountedJoin._order``)."""

    def matches(self, t: EncodedTriple) -> bool:
        return all(t[i] == c for i, c in self.constants) and all(
            t[i] == t[j] for i, j in self.repeats
        )

    def admits(self, t: EncodedTriple) -> bool:
        """Whether a triple with the pattern's constant predicate matches the pattern."""
        return all(t[i] == c for i, c in self.others) and all(t[i] == t[j] for i, j in self.repeats)

    def enter(self, t: EncodedTriple) -> None:
        self.matched.add(t)
        for i, index in self.by.items():
            index.setdefault(t[i], set()).add(t)

    def leave(self, t: EncodedTriple) -> None:
        self.matched.discard(t)
        for i, index in self.by.items():
            bucket = index[t[i]]
            bucket.discard(t)
            if not bucket:
                del index[t[i]]


class _Step:
    """Extending rows with one atom's matches: probe its index on a position whose
    variable is already bound (or read all its matches), check the other bound ones, bind
    the new ones."""

    __slots__ = ("atom", "binds", "checks", "probe")

    def __init__(self, atom: _Atom, bound: set[int]) -> None:
        self.atom = atom
        known = [(i, s) for i, s in atom.binds if s in bound]
        self.probe = known[0] if known else None
        self.checks = known[1:]
        self.binds = [(i, s) for i, s in atom.binds if s not in bound]

    def extend(self, rows: list[list[int | None]]) -> list[list[int | None]]:
        out = []
        probe, checks, binds = self.probe, self.checks, self.binds
        for row in rows:
            if probe is None:
                candidates: Iterable[EncodedTriple] = self.atom.matched
            else:
                candidates = self.atom.by[probe[0]].get(row[probe[1]], ())  # type: ignore[arg-type]
            for t in candidates:
                if not checks or all(t[i] == row[s] for i, s in checks):
                    new = row.copy()
                    for i, s in binds:
                        new[s] = t[i]
                    out.append(new)
        return out


class CountedJoin:
    """The changes of a join's mappings between evaluations (see the module docstring)."""

    def __init__(
        self,
        atoms: tuple[tuple[po.GraphRef, po.EncodedPattern], ...],
        width: int,
        canonical: Canonical,
    ) -> None:
        self.width = width
        self.canonical = canonical
        form = canonical(
            p.id for _, pattern in atoms for p in pattern if isinstance(p, po.Constant)
        )
        self.atoms = [_Atom(g, pattern, form) for g, pattern in atoms]
        self._windows = list(
            dict.fromkeys(a.graph for a in self.atoms if isinstance(a.graph, po.WindowGraph))
        )
        self._dispatch: dict[po.GraphRef, tuple[dict[int, list], list]] = {
            w: ({}, []) for w in self._windows
        }
        """Per window, its atoms (with the steps joining a triple of each with the others,
        and the test a triple must pass) by their constant predicate, and those whose
        predicate is a variable."""
        for atom in self.atoms:
            if atom.graph in self._dispatch:
                by_predicate, any_predicate = self._dispatch[atom.graph]
                predicate = dict(atom.constants).get(1)
                if predicate is None:
                    any_predicate.append((atom, self._order(atom), atom.matches))
                else:
                    check = atom.admits if atom.tests else None
                    by_predicate.setdefault(predicate, []).append((atom, self._order(atom), check))
        self._built = False
        self._watched: dict[po.WindowGraph, tuple[TripleIndex, Journal]] = {}
        self._facts: dict[po.WindowGraph, dict[EncodedTriple, int]] = {}
        """Per window, its triples in canonical form, with how many triples have each."""

    def __len__(self) -> int:
        """The triples held in the match sets."""
        return sum(len(a.matched) for a in self.atoms)

    def _order(self, start: _Atom) -> list[_Step]:
        """The other atoms, each next one connected to what is bound if any is."""
        bound = {s for _, s in start.binds}
        rest = [a for a in self.atoms if a is not start]
        steps = []
        while rest:
            atom = next((a for a in rest if any(s in bound for _, s in a.binds)), rest[0])
            rest.remove(atom)
            step = _Step(atom, bound)
            if step.probe is not None:
                atom.by.setdefault(step.probe[0], {})
            steps.append(step)
            bound |= {s for _, s in atom.binds}
        return steps

    def update(
        self, graph: Callable[[po.GraphRef], TripleIndex]
    ) -> tuple[list[Row], list[Row], bool]:
        """The mappings (rows) gained and lost since the last call, and whether the match
        sets were rebuilt (first call, or new window graphs after a restore): then the
        gained are every mapping."""
        rebuilt = not self._built or any(
            self._watched.get(w, (None,))[0] is not graph(w) for w in self._windows
        )
        if rebuilt:
            self._rebuild(graph)
        entered: dict[po.WindowGraph, list[EncodedTriple]] = {}
        left: dict[po.WindowGraph, list[EncodedTriple]] = {}
        for window, (_, journal) in self._watched.items():
            by_predicate, any_predicate = self._dispatch[window]
            if not any_predicate:  # only the triples some atom's predicate can match
                journal = {t: sign for t, sign in journal.items() if t[1] in by_predicate}
            form = self.canonical(t[2] for t in journal)  # (only objects can be literals)
            facts = self._facts[window]
            entering, leaving = entered.setdefault(window, []), left.setdefault(window, [])
            for t, sign in journal.items():
                o = form(t[2])
                c = t if o == t[2] else (t[0], t[1], o)
                before = facts.get(c, 0)
                facts[c] = before + sign
                if before == 0:
                    entering.append(c)
                elif before + sign == 0:
                    del facts[c]
                    leaving.append(c)
            self._watched[window][1].clear()
        lost = [m for w, ts in left.items() for m in self._changes(w, ts, leaving=True)]
        gained = [m for w, ts in entered.items() for m in self._changes(w, ts, leaving=False)]
        return gained, lost, rebuilt

    def _rebuild(self, graph: Callable[[po.GraphRef], TripleIndex]) -> None:
        """Empty match sets, the background atoms matched, each window's triples in its
        journal as entering."""
        self._watched, self._facts = {}, {}
        for atom in self.atoms:
            atom.matched.clear()
            for index in atom.by.values():
                index.clear()
            if not isinstance(atom.graph, po.WindowGraph):  # (a store's triples: canonical)
                bound = dict(atom.constants)
                triples = list(graph(atom.graph).match(bound.get(0), bound.get(1), bound.get(2)))
                form = self.canonical(t[2] for t in triples)
                for t in triples:
                    c = (t[0], t[1], form(t[2]))
                    if atom.matches(c):
                        atom.enter(c)
        for window in self._windows:
            contents = graph(window)
            journal = contents.watch()
            journal.update(dict.fromkeys(contents.triples(), 1))
            self._watched[window], self._facts[window] = (contents, journal), {}
        self._built = True

    def _changes(
        self, window: po.WindowGraph, triples: list[EncodedTriple], leaving: bool
    ) -> list[Row]:
        """The mappings triples entering (or leaving) the window's atoms make (or end), one
        triple and one atom after the other."""
        by_predicate, any_predicate = self._dispatch[window]
        width = self.width
        found: list[Row] = []
        for t in triples:
            entries = by_predicate.get(t[1], ())
            if any_predicate:
                entries = [*entries, *any_predicate]
            for atom, steps, check in entries:
                if check is not None and not check(t):
                    continue
                if not leaving:
                    atom.enter(t)
                row: list[int | None] = [None] * width
                for i, slot in atom.binds:
                    row[slot] = t[i]
                rows = [row]
                for step in steps:
                    rows = step.extend(rows)
                found.extend(map(tuple, rows))
                if leaving:
                    atom.leave(t)
        return found
