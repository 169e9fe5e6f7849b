"""EP-SPARQL operators (seed 003, section 4.2) and semantics.md's E5 built from them.

E5 stream: acme 100@1, beta 50@2, acme 60@3, beta 20@4, acme 110@5, beta 40@40.
"""

from __future__ import annotations

import pyoxigraph as ox

from sepia.semantics import epsparql as ep
from sepia.semantics.mappings import EventMapping, Mu

from .support import em, iri

PRICES = [("acme", 100, 1), ("beta", 50, 2), ("acme", 60, 3), ("beta", 20, 4), ("acme", 110, 5)]
PRICES.append(("beta", 40, 40))


def price_pattern(var: str) -> set[EventMapping]:
    """{?c :price ?var} over the triple occurrences."""
    return {
        EventMapping(
            Mu(
                {
                    "c": iri(c),
                    var: ox.Literal(
                        str(p), datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")
                    ),
                }
            ),
            t,
            t,
        )
        for c, p, t in PRICES
    }


def value(m: EventMapping, var: str) -> int:
    return int(m.mu[var].value)


def drop_then_rise(m: EventMapping) -> bool:
    """E5's FILTER with sigma applied: getDURATION() is t_omega - t_alpha."""
    p1, p2, p3 = value(m, "p1"), value(m, "p2"), value(m, "p3")
    return p2 < p1 * 0.7 and p3 > p1 * 1.05 and m.end - m.start < 30


def test_e5_one_match():
    sequence = ep.seq_join(
        ep.seq_join(price_pattern("p1"), price_pattern("p2")), price_pattern("p3")
    )
    # 3 acme prices give C(3,3) = 1 ordered triple, beta likewise: 2 sequences in all
    assert len(sequence) == 2
    (match,) = ep.filter_(drop_then_rise, sequence)
    assert (match.mu["c"], match.start, match.end) == (iri("acme"), 1, 5)
    assert [value(match, v) for v in ("p1", "p2", "p3")] == [100, 60, 110]


def test_bgp_over_occurrences_spans_times():
    # {?c :price ?p . ?c :name ?n}: triples from 3 and 9 make one solution over [3, 9]
    price = {em(3, 3, c="acme", p="x")}
    name = {em(9, 9, c="acme", n="y"), em(4, 4, c="other", n="z")}
    assert ep.bgp([price, name]) == {em(3, 9, c="acme", p="x", n="y")}


def test_join_covers_and_eq_join_needs_equal_intervals():
    assert ep.join({em(1, 2, x="a")}, {em(5, 6, y="b")}) == {em(1, 6, x="a", y="b")}
    assert ep.eq_join({em(1, 2, x="a")}, {em(1, 2, y="b"), em(1, 3, y="c")}) == {
        em(1, 2, x="a", y="b")
    }
    assert ep.seq_join({em(1, 2, x="a")}, {em(2, 3, y="b")}) == set()  # 2 < 2 fails
    assert ep.union({em(1, 1, x="a")}, {em(1, 1, x="a")}) == {em(1, 1, x="a")}


def always(_: EventMapping) -> bool:
    return True


def test_seq_right_join_optional_part_first():
    optional = {em(1, 1, x="a", o="early"), em(7, 7, x="b", o="late")}
    required = {em(5, 5, x="a"), em(5, 5, x="b")}
    # a has an optional partner before it; b's only partner comes after: b stays alone
    assert ep.seq_right_join(optional, required, always) == {
        em(1, 5, x="a", o="early"),
        em(5, 5, x="b"),
    }
    # a filter that rejects the pair leaves a alone as well
    short = ep.seq_right_join(optional, required, lambda m: m.end - m.start < 2)
    assert short == {em(5, 5, x="a"), em(5, 5, x="b")}


def test_eq_left_join():
    left = {em(2, 4, x="a"), em(2, 4, x="b")}
    right = {em(2, 4, x="a", y="1"), em(2, 5, x="b", y="2")}
    assert ep.eq_left_join(left, right, always) == {em(2, 4, x="a", y="1"), em(2, 4, x="b")}


def test_left_join_needs_the_optional_part_to_end_first():
    left = {em(1, 6, x="a"), em(1, 6, x="b")}
    right = {em(2, 3, x="a", y="1"), em(2, 6, x="b", y="2")}
    assert ep.left_join(left, right, always) == {em(1, 6, x="a", y="1"), em(1, 6, x="b")}
