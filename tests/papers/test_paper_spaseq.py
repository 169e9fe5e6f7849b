"""SPAseq (Gillani, Zimmermann, Picard, Laforest: "A Query Language for Semantic Complex
Event Processing: Syntax and Semantics"), Query 4: V-shaped stock prices, SEQ(A, B, C) of
immediately consecutive events within 60 minutes, B's price above A's and C's below B's."""

from paper_runs import MINUTE, answer, trig

EX = "@prefix pred: <http://example/> .\n@prefix : <http://example.org/> ."
GOOGLE = trig(
    EX,
    (1 * MINUTE, ":goog pred:price 10 ; pred:volume 100 ."),
    (2 * MINUTE, ":goog pred:price 12 ; pred:volume 110 ."),
    (3 * MINUTE, ":goog pred:price 11 ; pred:volume 90 ."),
    (4 * MINUTE, ":goog pred:price 15 ; pred:volume 50 ."),
    (5 * MINUTE, ":goog pred:price 14 ; pred:volume 70 ."),
    (70 * MINUTE, ":goog pred:price 10 ; pred:volume 20 ."),
    (80 * MINUTE, ":goog pred:price 20 ; pred:volume 30 ."),
    (200 * MINUTE, ":goog pred:price 5 ; pred:volume 40 ."),
)


def test_query_4_finds_each_v_within_the_hour():
    """',' is strict contiguity (Definition 12): B is the very next event after A, C the
    next after B; a run may start at every event, so an event ends one V and starts the
    next. Windows of three consecutive events and their prices:
    1-2-3: 10 < 12 > 11: a V over [1m, 3m], at 3m.   2-3-4: 12 > 11: no.
    3-4-5: 11 < 15 > 14: a V over [3m, 5m].       4-5-70: 15 > 14: no.
    5-70-80: 14 > 10: no.                        70-80-200: 10 < 20 > 5, but the run spans
    130 minutes, over WITHIN 60 MINUTES: no."""
    assert answer("spaseq-q4-v-shaped", {"http://stockmarket.org/stocks/google": GOOGLE}) == [
        (3 * MINUTE, (1 * MINUTE, 3 * MINUTE),
         "company=goog p1=10 p2=12 p3=11 vol1=100 vol2=110 vol3=90"),
        (5 * MINUTE, (3 * MINUTE, 5 * MINUTE),
         "company=goog p1=11 p2=15 p3=14 vol1=90 vol2=50 vol3=70"),
    ]
