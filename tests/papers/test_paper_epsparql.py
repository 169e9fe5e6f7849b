"""EP-SPARQL (Anicic, Fodor, Rudolph, Stojanovic: "EP-SPARQL: A Unified Language for Event
Processing and Stream Reasoning"), Query 6: an ACME price followed by a running
count-and-sum point, more than ten days later, with no ACME price in between
(EQUALSOPTIONAL binds ?inbetween exactly when a price lies between them)."""

from paper_runs import answer, trig

DAY = 86_400_000
EX = "@prefix : <http://example.org/stocks#> ."
STOCKS = trig(
    EX,
    (0 * DAY, ":ACME :hasStockPrice 10 ."),
    (12 * DAY, ":p1 :hasCount 4 ; :hasSum 40 ."),
    (13 * DAY, ":ACME :hasStockPrice 20 ."),
    (30 * DAY, ":p2 :hasCount 5 ; :hasSum 60 ."),
    (31 * DAY, ":ACME :hasStockPrice 30 ."),
    (35 * DAY, ":p3 :hasCount 2 ; :hasSum 10 ."),
    dated=True,  # getDURATION() is compared with "P10D"^^xsd:duration
)


def test_query_6_pairs_a_price_with_the_next_point_ten_days_later():
    """{price} SEQ {point}: price at t1, point (both triples of one element) at t2 > t1,
    stamped [t1, t2]. The optional side {price} SEQ {inbetween} SEQ {point} has an equal
    interval exactly when another price lies strictly between them. Kept: no ?inbetween and
    a duration over 10 days.
    price 0 - p1 12: 12 days, nothing between: kept.
    price 0 - p2 30, price 0 - p3 35, price 13 - p3 35: the price at 13 (or 31) between.
    price 13 - p2 30: 17 days, nothing between: kept.
    price 31 - p3 35: 4 days: dropped.
    The SELECT divides ?sum by ?count, which the pattern never binds (it binds ?prevsum and
    ?prevcount, as the paper writes it): each row leaves ?average unbound."""
    assert answer("epsparql-query-6", {"http://example.org/stocks": STOCKS}) == [
        (12 * DAY, (0, 12 * DAY), ""),
        (30 * DAY, (13 * DAY, 30 * DAY), ""),
    ]
