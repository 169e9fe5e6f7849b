"""Solution mappings and event mappings, the values every operator of the papers combines.

A solution mapping mu is a partial function from variables to RDF terms (SPARQL, RSP-QL
Definition 2); two mappings are compatible when they agree on every shared variable. An
event mapping (mu, t1, t2) adds the interval of the events that justify it (RSEP-QL seed 001
section 4.2, CQELS-CEP seed 000 section 4.2, EP-SPARQL seed 003 section 4.2); a point event
has t1 = t2.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import pyoxigraph as ox

from sepia.rdf.stream import Occurrence

Term = ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple


class Mu(Mapping[str, Term]):
    """An immutable, hashable solution mapping (variable name without '?' -> term)."""

    __slots__ = ("_hash", "_items")

    def __init__(self, items: Mapping[str, Term] | Iterable[tuple[str, Term]] = ()) -> None:
        self._items: dict[str, Term] = dict(items._items if isinstance(items, Mu) else items)
        self._hash: int | None = None
        """Worked out when first asked (most mappings an evaluation makes are never hashed)."""

    def __getitem__(self, key: str) -> Term:
        return self._items[key]

    def lexical(self, key: str) -> str:
        """The value of the term bound to ``key``, one the evaluation bound itself (an
        interval end, a match name, a row number): never a quoted triple."""
        term = self._items[key]
        assert not isinstance(term, ox.Triple), key
        return term.value

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def get(self, key: str, default: Term | None = None) -> Term | None:  # type: ignore[override]
        return self._items.get(key, default)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._items.items()))
        return self._hash

    def items(self) -> ItemsView[str, Term]:
        return self._items.items()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mu) and self._items == other._items

    def __repr__(self) -> str:
        inner = ", ".join(f"?{k}={v}" for k, v in sorted(self._items.items()))
        return f"Mu({inner})"

    def compatible(self, other: Mapping[str, Term]) -> bool:
        """mu1 ~ mu2: every variable bound by both is bound to the same term."""
        theirs = other._items if isinstance(other, Mu) else other
        return all(theirs[k] == v for k, v in self._items.items() if k in theirs)

    def merge(self, other: Mapping[str, Term]) -> Mu:
        """mu1 u mu2 of two compatible mappings."""
        return Mu({**self._items, **(other._items if isinstance(other, Mu) else other)})

    def project(self, variables: Iterable[str]) -> Mu:
        """mu restricted to ``variables`` (unbound ones stay unbound)."""
        return Mu((v, self._items[v]) for v in variables if v in self._items)


@dataclass(frozen=True, slots=True)
class EventMapping:
    """(mu, t1, t2): a solution mapping justified by events spanning [t1, t2].

    ``support`` names the occurrences (``Occurrence``; SPAseq: stream, element graph) the
    mapping was built from; it is bookkeeping for consumption policies (RSEP-QL section 4.4)
    and SPAseq match identity, not part of the value: two event mappings are equal when
    (mu, t1, t2) are. Consumption keeps ``Derivation``s instead.
    """

    mu: Mu
    start: int
    end: int
    support: frozenset[tuple] = field(default=frozenset(), compare=False)

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(f"event mapping ends at {self.end} before it starts at {self.start}")

    def compatible(self, other: EventMapping) -> bool:
        return self.mu.compatible(other.mu)

    def combine(self, other: EventMapping, start: int, end: int) -> EventMapping:
        """mu1 u mu2 stamped [start, end], with the union of both supports (of this class:
        a ``Derivation`` combines into one)."""
        return type(self)(self.mu.merge(other.mu), start, end, self.support | other.support)


@dataclass(frozen=True, slots=True)
class Derivation(EventMapping):
    """An event mapping whose support is part of its identity, as consumption needs it:
    equal (mu, t1, t2) reached through different occurrences (two elements of one time, an
    interval JOIN or EQUALS of different pairs, a SEQ_WO of two left events with one start)
    are different derivations, each consumable on its own (docs/semantics.md)."""

    support: frozenset[Occurrence] = field(default=frozenset(), compare=True)
