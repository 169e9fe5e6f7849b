"""RSEP-QL (Dell'Aglio, Dao-Tran, Calbimonte, Le Phuoc, Della Valle: "A Query Model to
Capture Event Pattern Matching in RDF Stream Processing Query Languages"), Example 4:
EVENT w1 {?x :p ?y} SEQ EVENT w2 {?y :q ?z}, w1 a landmark window from 1 and w2 a sliding
window (alpha 5, beta 1) over the same stream."""

from paper_runs import answer, trig

S = "http://example.org/s"
STREAM = trig(
    "@prefix : <http://example.org/> .",
    (0, ":z :p :b ."),  # before the landmark's start: never in w1
    (2, ":a :p :b ."),
    (4, ":b :q :c ."),
    (5, ":d :p :b ."),
    (9, ":b :q :e ."),
)


def test_example_4_pairs_each_q_with_the_earlier_p_events():
    """Eq. 7: SEQ pairs a right mapping [t3, t4] of w2 with left mappings of w1 that end
    before t3, the pair stamped [t1, t4]; an event query pushes each match once, when its
    last event arrives.
    w1 = LANDMARK FROM 1 holds every element stamped 1 or later: not z p b at 0.
    At 4: w2 shows (0, 4] ∋ b q c; left events before 4 with ?y = b: a p b at 2, so
    (a, b, c) over [2, 4]. d p b at 5 comes after b q c: no pair with it.
    At 9: w2 shows (4, 9] ∋ b q e; left events before 9 with ?y = b: a p b at 2 and
    d p b at 5: (a, b, e) over [2, 9] and (d, b, e) over [5, 9]."""
    assert answer("rsepql-example-4", {S: STREAM}) == [
        (4, (2, 4), "x=a y=b z=c"),
        (9, (2, 9), "x=a y=b z=e"),
        (9, (5, 9), "x=d y=b z=e"),
    ]
