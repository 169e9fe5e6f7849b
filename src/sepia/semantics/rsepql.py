"""RSEP-QL event patterns (seed 001, section 4.2-4.4): EVENT, SEQ, FIRST, LAST and the
selection and consumption policies, over sets of event mappings.

The order on intervals is by completion, then start: (t1, t2) precedes (t3, t4) when
(t2, t1) < (t4, t3). SEQ (Eq. 7), unrestricted, needs every event of the left side before the right
side starts, t2 < t3 (the W^sqcup[0, t3 - 1] restriction), and stamps [t1, t4]: the same set
as CQELS-CEP's SEQ, so ``seq`` is that function. CHRONOLOGICAL and RECENT follow
ETALIS as semantics.md says: each right mapping, in order, takes the earliest (resp. latest)
compatible earlier left mapping whose occurrences are not consumed, and both are consumed.
Occurrences are elements seen through a window (``mappings.Occurrence``): the consumption
policy works on the input of each window (Definition 10). Under consumption the mappings are
``Derivation``s (their support is part of their identity), and ``serve_key`` orders them
totally: by interval, then bindings, then support, so which one is taken never depends on
set iteration order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from sepia.rdf.stream import Occurrence, StreamElement
from sepia.semantics.cqels_cep import seq
from sepia.semantics.mappings import EventMapping, Mu

__all__ = [
    "event", "first", "last", "order_key", "seq", "seq_consuming", "seq_naive", "serve_key"
]

Omega = Iterable[EventMapping]


def order_key(m: EventMapping) -> tuple[int, int]:
    """The position of an event mapping in the order used by FIRST, LAST and the policies."""
    return (m.end, m.start)


def serve_key(m: EventMapping) -> tuple:
    """The total order consumption serves mappings in: by (end, start), then by the bindings
    (variable names in order, each term compared by its N-Triples text), then by the support
    (its occurrences earliest first, compared as a list). Two distinct event mappings, or
    derivations, of one set never tie."""
    bindings = tuple(sorted((k, str(v)) for k, v in m.mu.items()))
    return (m.end, m.start, bindings, tuple(sorted(m.support)))


def event(
    window: str,
    elements: Sequence[StreamElement],
    matches: Callable[[StreamElement], Iterable[Mu]],
    kind: type[EventMapping] = EventMapping,
) -> set[EventMapping]:
    """<<EVENT w P>>: (mu, t_k, t_k) for every element G_k the window shows and mu in [[P]]_G_k.

    ``elements`` is already W . W_w(S, t); ``matches`` evaluates P over one element's graph.
    Each mapping's support is its element seen through ``window``; as ``Derivation``s
    (``kind``), two elements giving one mapping give two.
    """
    return {
        kind(m, e.start, e.end, frozenset({occurrence(window, e)}))
        for e in elements
        for m in matches(e)
    }


def occurrence(source: str, element: StreamElement) -> Occurrence:
    """An element seen through ``source`` (a window, or "*": every stream)."""
    return (element.end, element.start, source, element.stream, element.graph)


def first(omega: Omega) -> set[EventMapping]:
    """FIRST E: the event mappings of E that no other precedes (Eq. 5)."""
    omega = list(omega)
    least = min(map(order_key, omega), default=None)
    return {m for m in omega if order_key(m) == least}


def last(omega: Omega) -> set[EventMapping]:
    """LAST E: the event mappings of E that no other follows (Eq. 6)."""
    omega = list(omega)
    greatest = max(map(order_key, omega), default=None)
    return {m for m in omega if order_key(m) == greatest}


def seq_naive(left: Omega, right: Omega) -> set[EventMapping]:
    """SEQ^n (Eq. 9), C-SPARQL's naive sequencing: the latest match of each side, in order."""
    return seq(last(left), last(right))


def seq_consuming(
    left: Omega, right: Omega, consumed: frozenset[Occurrence], recent: bool
) -> tuple[set[EventMapping], frozenset[Occurrence]]:
    """SEQ^c (chronological) or SEQ^r (recent) with its consumption policy P^c / P^r.

    Returns the matches and the occurrences consumed so far (the state carried from one
    evaluation to the next).
    """
    left = sorted(left, key=serve_key)
    results: set[EventMapping] = set()
    for b in sorted(right, key=serve_key):
        if b.support & consumed:
            continue
        partners = [
            a for a in left if a.compatible(b) and a.end < b.start and not a.support & consumed
        ]
        if partners:
            chosen = partners[-1] if recent else partners[0]
            results.add(chosen.combine(b, chosen.start, b.end))
            consumed = consumed | chosen.support | b.support
    return results, consumed
