"""What aimed planting reads in a query's text (``generators.plantable`` and ``pool``)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from .generators import EX, OBJECTS, S1, S2, SILENT, SUBJECTS, answering, plantable, pool

SPASEQ = """SELECT * FROM STREAM S1 :s1 FROM STREAM S2 :s2
WHERE { SEQ(A ; !B , !(C & D))
DEFINE GPM A ON S1 { ?x :p ?y }
DEFINE GPM B ON S2 { ?y ?k ?z }
DEFINE GPM C ON S1 { ?x :q ?w FILTER(?w != ?y) }
DEFINE GPM D ON S2 { ?u ?i ?n FILTER(isLiteral(?n)) } }"""
CQELS = """FROM NAMED WINDOW :w1 ON :s1 [RANGE 5]
FROM NAMED WINDOW :w2 ON :s2 [RANGE 5]
WHERE { WINDOW :w1 { SEQ({ ?x :p ?y }, !{ ?y :q ?z }, { ?x :q ?w }) }
SEQ(:w1, !:w2) WINDOW :w2 { ?x ?j ?v } }"""


def test_negated_blocks_are_marked_with_their_streams():
    assert [(stream, negated, s) for stream, negated, s, _, _ in plantable(SPASEQ)] == [
        (S1, False, "?x"), (S2, True, "?y"), (S1, True, "?x"), (S2, True, "?u"),
    ]  # fmt: skip
    assert [(stream, negated, o) for stream, negated, _, _, o in plantable(CQELS)] == [
        (S1, False, "?y"), (S1, True, "?z"), (S1, False, "?w"), (S2, True, "?v"),
    ]  # fmt: skip


def test_aimed_pools_keep_the_filters():
    a = SUBJECTS[0]
    assert pool("?n", 2, SPASEQ, {}, aimed=True) == OBJECTS[3:5]  # isLiteral(?n)
    assert a not in pool("?w", 2, SPASEQ, {"?y": a}, aimed=True)  # ?w != ?y
    assert pool("?y", 2, SPASEQ, {}, aimed=True) == SUBJECTS  # a subject in B
    assert pool("?z", 2, SPASEQ, {}, aimed=False) == [*SUBJECTS, OBJECTS[4]]


@settings(max_examples=20, deadline=None)
@given(answering(st.just(f"PREFIX : <{EX}>\n{SPASEQ}"), SILENT, aimed=True, after=16))
def test_aimed_streams_start_at_1_and_each_ends_after_the_planted_elements(case):
    """A (never negated) is planted first on :s1; each stream then ends with an element
    without triples 16 or more after every planted one."""
    _, data = case
    assert data[S1][0].triples and data[S1][0].start >= 1
    planted = max(e.end for es in data.values() for e in es if e.triples)
    for elements in data.values():
        assert [e.end for e in elements] == sorted(e.end for e in elements)
        assert elements[-1].triples == () and elements[-1].end >= planted + 16
