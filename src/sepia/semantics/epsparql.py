"""EP-SPARQL operators on sets of solutions <mu, t_alpha, t_omega> (seed 003, section 4.2).

A BGP's triples may come from occurrences at different times: its solution is stamped with
the least start and the greatest end of the occurrences used. Join combines compatible
solutions into the covering interval; SeqJoin, EqJoin, SeqRightJoin and EqLeftJoin add the
paper's temporal conditions. A filter F is a predicate on one solution: the caller builds
it with sigma_{t_alpha t_omega} already applied, i.e. getDURATION(), getSTARTTIME() and
getENDTIME() read the solution's own interval.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import reduce

from sepia.semantics.mappings import EventMapping

Psi = Iterable[EventMapping]
Filter = Callable[[EventMapping], bool]


def _covering(a: EventMapping, b: EventMapping) -> EventMapping:
    return a.combine(b, min(a.start, b.start), max(a.end, b.end))


def join(left: Psi, right: Psi) -> set[EventMapping]:
    """Join(Psi, Psi'): every compatible pair, stamped with the covering interval."""
    right = list(right)
    return {_covering(a, b) for a in left for b in right if a.compatible(b)}


def bgp(per_triple: Sequence[Psi]) -> set[EventMapping]:
    """BGP(list of triples): one occurrence per triple pattern, joined (interval covering)."""
    if not per_triple:
        raise ValueError("a BGP over triple occurrences needs at least one triple pattern")
    return reduce(join, per_triple[1:], set(per_triple[0]))


def union(left: Psi, right: Psi) -> set[EventMapping]:
    """Union(Psi, Psi')."""
    return set(left) | set(right)


def filter_(condition: Filter, psi: Psi) -> set[EventMapping]:
    """Filter(F, Psi): the solutions for which F (with sigma applied) is true."""
    return {m for m in psi if condition(m)}


def seq_join(left: Psi, right: Psi) -> set[EventMapping]:
    """SeqJoin(Psi, Psi'): compatible pairs with t_omega < t'_alpha."""
    right = list(right)
    return {_covering(a, b) for a in left for b in right if a.compatible(b) and a.end < b.start}


def eq_join(left: Psi, right: Psi) -> set[EventMapping]:
    """EqJoin(Psi, Psi'): compatible pairs with equal intervals."""
    right = list(right)
    return {
        _covering(a, b)
        for a in left
        for b in right
        if a.compatible(b) and (a.start, a.end) == (b.start, b.end)
    }


def left_join(left: Psi, right: Psi, condition: Filter) -> set[EventMapping]:
    """LeftJoin(Psi, Psi', F): joins where F holds and t'_omega < t_omega; else left alone."""
    right = list(right)
    result: set[EventMapping] = set()
    for a in left:
        joined = {
            j
            for b in right
            if a.compatible(b) and b.end < a.end and condition(j := _covering(a, b))
        }
        result |= joined or {a}
    return result


def seq_right_join(optional: Psi, required: Psi, condition: Filter) -> set[EventMapping]:
    """SeqRightJoin(Psi', Psi, F) (OPTIONALSEQ, optional part first): Filter(F,
    SeqJoin(Psi', Psi)) plus each required solution with no compatible optional one that
    ends before it starts and satisfies F."""
    optional, required = list(optional), list(required)
    joined = filter_(condition, seq_join(optional, required))
    alone = {
        m
        for m in required
        if not any(
            m.compatible(o) and m.start > o.end and condition(_covering(o, m)) for o in optional
        )
    }
    return joined | alone


def eq_left_join(left: Psi, right: Psi, condition: Filter) -> set[EventMapping]:
    """EqLeftJoin(Psi, Psi', F) (EQUALSOPTIONAL): Filter(F, EqJoin) plus each left solution
    with no compatible right one over the same interval that satisfies F."""
    left, right = list(left), list(right)
    joined = filter_(condition, eq_join(left, right))
    alone = {
        m
        for m in left
        if not any(
            m.compatible(b) and (m.start, m.end) == (b.start, b.end) and condition(_covering(m, b))
            for b in right
        )
    }
    return joined | alone
