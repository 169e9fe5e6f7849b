"""CQELS-CEP operators on sets of mappings with intervals (seed 000, section 4.2), literally.

Each function is the paper's set comprehension over ``EventMapping`` values (mu, [t1, t2]).
Negation reaches strictly between the two positive events, as SASE's SEQ WITHOUT does
(seed 000, section 2.4): a negative event [t3, t4] counts when t2 < t3 and t4 < t5.
"""

from __future__ import annotations

from collections.abc import Iterable

from sepia.semantics.mappings import EventMapping

Omega = Iterable[EventMapping]


def join(left: Omega, right: Omega) -> set[EventMapping]:
    """JOIN: compatible pairs whose intervals overlap, stamped with their intersection."""
    right = list(right)
    return {
        a.combine(b, max(a.start, b.start), min(a.end, b.end))
        for a in left
        for b in right
        if a.compatible(b) and max(a.start, b.start) <= min(a.end, b.end)
    }


def or_(left: Omega, right: Omega) -> set[EventMapping]:
    """OR: the union of both sets."""
    return set(left) | set(right)


def seq(left: Omega, right: Omega) -> set[EventMapping]:
    """SEQ: compatible pairs with end(left) < start(right), stamped [t1, t4]."""
    right = list(right)
    return {
        a.combine(b, a.start, b.end)
        for a in left
        for b in right
        if a.compatible(b) and a.end < b.start
    }


def seq_wo(left: Omega, negated: Omega, right: Omega) -> set[EventMapping]:
    """SEQ_WO(O1, O2, O3): O1 then O3 with no O2 compatible with both strictly between."""
    negated, right = list(negated), list(right)
    return {
        a.combine(c, a.start, c.end)
        for a in left
        for c in right
        if a.compatible(c)
        and a.end < c.start
        and not any(
            b.mu.compatible(a.mu.merge(c.mu)) and a.end < b.start and b.end < c.start
            for b in negated
        )
    }


def no_head(negated: Omega, right: Omega) -> set[EventMapping]:
    """NO_HEAD(O1, O2): mappings of O2 with no compatible O1 ending before they start."""
    negated = list(negated)
    return {b for b in right if not any(a.compatible(b) and a.end < b.start for a in negated)}


def no_tail(left: Omega, negated: Omega, t: int) -> set[EventMapping]:
    """NO_TAIL(O1, O2, t): mappings of O1 with no compatible O2 in (t2, t]."""
    negated = list(negated)
    return {
        a
        for a in left
        if not any(a.compatible(b) and a.end < b.start and b.end <= t for b in negated)
    }
