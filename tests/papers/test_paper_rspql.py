"""RSP-QL (Dell'Aglio, Della Valle, Calbimonte, Corcho: "RSP-QL Semantics: a Unifying Query
Model to Explain Heterogeneity of RDF Stream Processing Systems"), Example 10: shoppers near
a shop whose owner offers a coupon, over w1 = W(nearby) (alpha 5, beta 2, t0 1) and
w2 = W(coupons) (alpha 2, beta 2, t0 0), reported at w2's closes when w2 is non-empty,
joined with the shops graph."""

from paper_runs import answer, trig

EX = "@prefix : <http://example.org/> ."
SHOPS = EX + " :shops { :alice :owns :a . :bob :owns :b . }"
NEARBY = trig(EX, (2, ":diana :isNearby :a ."), (3, ":eve :isNearby :b ."),
              (7, ":carl :isNearby :a ."))
COUPONS = trig(EX, (2, ":alice :offers :c1 ."), (5, ":bob :offers :c2 ."),
               (8, ":alice :offers :c3 ."))


def test_example_10_reports_at_w2_closes_with_coupons():
    """Definition 13: windows open at t0 + k*beta and hold (o, o + alpha]; the window shown
    at t is the earliest opening one holding t.
    w2 closes at 2, 4, 6, 8 with (0,2] = {alice c1}, (2,4] = {} (no evaluation: NON EMPTY
    fails), (4,6] = {bob c2}, (6,8] = {alice c3}. The input ends at 8 (the close holding
    the last elements of both streams: w1's (3,8] and w2's (6,8]).
    w1 at 2: (1,6] so far = {diana a}: diana near a, alice owns a, offers c1.
    w1 at 6: (1,6] = {diana a, eve b}: only eve's shop b is bob's, who offers c2.
    w1 at 8: (3,8] = {carl a} (eve at 3 is left out: the window is open on the left):
    alice owns a and offers c3."""
    assert answer("rspql-example-10", {"http://example.org/nearby": NEARBY,
                                       "http://example.org/coupons": COUPONS}, SHOPS) == [
        (2, "coupon=c1 shop=a shop_owner=alice shopper=diana"),
        (6, "coupon=c2 shop=b shop_owner=bob shopper=eve"),
        (8, "coupon=c3 shop=a shop_owner=alice shopper=carl"),
    ]
