"""CQELS-CEP (Dao-Tran, Le Phuoc: "Towards Enriching CQELS with Complex Event Processing
and Path Navigation"), Example 6: stations ?s where a subway ?v was delayed twice within
10 minutes with no arrival after, and a subway line leads from ?s to :c."""

from paper_runs import MINUTE, answer, trig

EX = """@prefix : <http://example.org/> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> ."""
MAP = EX + """
:transportationMap {
  :v1 rdf:type :subway . :v3 rdf:type :subway . :v2 rdf:type :bus .
  :l1 :beg :s1 ; :means :subway ; :end :c .
  :l2 :beg :s2 ; :means :bus ; :end :c .
}"""
TRANSPORT = trig(
    EX,
    (1 * MINUTE, ":v1 :delayAt :s1 ."),
    (3 * MINUTE, ":v1 :delayAt :s1 ."),
    (4 * MINUTE, ":v2 :delayAt :s1 ."),
    (5 * MINUTE, ":v2 :delayAt :s1 ."),
    (6 * MINUTE, ":v1 :delayAt :s2 ."),
    (7 * MINUTE, ":v1 :delayAt :s2 ."),
    (20 * MINUTE, ":v3 :delayAt :s1 ."),
    (31 * MINUTE, ":v3 :delayAt :s1 ."),
)


def test_example_6_finds_the_twice_delayed_subway_station():
    """SEQ(P1, P1, !P2) inside W = [RANGE 10m] (slide 1 ms: W at t is (t - 10m, t]) pairs
    two delays of one ?v at one ?s, the first ending before the second starts; NO_TAIL looks
    for an arrival in (second delay, t], none here; the match is pushed at the second delay.
    Pairs: v1 s1 at 1m and 3m; v2 s1 at 4m, 5m; v1 s2 at 6m, 7m; v3 s1 at 20m and 31m is
    not one (W at 31m is (21m, 31m]).
    The graph pattern keeps ?v of rdf:type :subway (not v2, a bus) and ?s with a line
    (^:beg) whose :means is :subway and whose :end is :c, one or more times: s1 by l1, not
    s2 (l2 is a bus line). One row: s1, over [1m, 3m], at 3m."""
    assert answer("cqels-cep-example-6", {"http://example.org/publicTransport": TRANSPORT},
                  MAP) == [(3 * MINUTE, (1 * MINUTE, 3 * MINUTE), "s=s1")]
