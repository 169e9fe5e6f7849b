"""CQELS-CEP operators over encoded event mappings (seed 000, section 4.2).

The same set comprehensions as ``sepia.semantics.cqels_cep``, on (row, from, to) tuples,
with compatible pairs found by hashing (``intervals.pairs``). Negation reaches strictly
between the two positive events (SASE's SEQ WITHOUT): a negative event [t3, t4] counts
when t2 < t3 and t4 < t5.
"""

from __future__ import annotations

from collections.abc import Collection

from sepia.engine.cep.intervals import EventMapping, joined, pairs


def join(left: Collection[EventMapping], right: Collection[EventMapping]) -> set[EventMapping]:
    """JOIN: compatible pairs whose intervals overlap, stamped with their intersection."""
    return {
        joined(a, b, max(a[1], b[1]), min(a[2], b[2]))
        for a, b in pairs(left, right)
        if max(a[1], b[1]) <= min(a[2], b[2])
    }


def seq_wo(
    left: Collection[EventMapping],
    negated: Collection[EventMapping],
    right: Collection[EventMapping],
) -> set[EventMapping]:
    """SEQ_WO(O1, O2, O3): O1 then O3 with no O2 compatible with both strictly between."""
    candidates = [
        (joined(a, c, a[1], c[2]), a[2], c[1]) for a, c in pairs(left, right) if a[2] < c[1]
    ]
    between: dict[EventMapping, list[EventMapping]] = {}
    for m, b in pairs({m for m, _, _ in candidates}, negated):
        between.setdefault(m, []).append(b)
    return {
        m
        for m, after, before in candidates
        if not any(after < b[1] and b[2] < before for b in between.get(m, ()))
    }


def no_head(
    negated: Collection[EventMapping], right: Collection[EventMapping]
) -> set[EventMapping]:
    """NO_HEAD(O1, O2): mappings of O2 with no compatible O1 ending before they start."""
    blocked = {b for b, a in pairs(right, negated) if a[2] < b[1]}
    return {b for b in right if b not in blocked}


def no_tail(
    left: Collection[EventMapping], negated: Collection[EventMapping], t: int
) -> set[EventMapping]:
    """NO_TAIL(O1, O2, t): mappings of O1 with no compatible O2 in (t2, t]."""
    blocked = {a for a, b in pairs(left, negated) if a[2] < b[1] and b[2] <= t}
    return {a for a in left if a not in blocked}
