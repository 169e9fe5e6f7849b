"""A BGP over a small graph (an event's) takes ``_scan_small``, compiled once per pattern
list; it must give exactly the rows, in the same order, of the index nested-loop joins
(``extend_all``) that larger graphs take, with or without seed rows, and the same bag as
joins ordered by index sizes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.engine.graph import SMALL, TripleIndex
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.scan import Constant, Slot, extend_all, scan

WIDTH = 4
TERMS = st.integers(1, 4)
POSITIONS = st.one_of(TERMS.map(Constant), st.integers(0, WIDTH - 1).map(Slot))


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(TERMS, TERMS, TERMS), max_size=SMALL, unique=True),
    st.lists(st.tuples(POSITIONS, POSITIONS, POSITIONS), min_size=1, max_size=3),
    st.lists(st.tuples(st.one_of(st.none(), TERMS), TERMS), max_size=3),
)
def test_small_graph_scan_equals_the_index_joins(triples, patterns, seeds):
    graph = TripleIndex(triples)
    assert graph.small
    expected = extend_all([(None,) * WIDTH], [(p, [graph]) for p in patterns], set())
    assert scan([TripleIndex(triples)], tuple(patterns), WIDTH) == expected
    # the same triples among SMALL + 1 others made of other terms: indexed, joins ordered by
    # bucket sizes; a row using another triple binds one of those terms
    indexed = TripleIndex([*triples, *((100 + i,) * 3 for i in range(SMALL + 1))])
    assert not indexed.small
    got = [r for r in scan([indexed], tuple(patterns), WIDTH) if all((v or 0) < 100 for v in r)]
    assert sorted(got, key=repr) == sorted(expected, key=repr)
    # seed rows binding slot 0 (possibly unbound in some: a wildcard) and slot 1
    rows = [(a, b, None, None) for a, b in seeds]
    expected = extend_all(rows, [(p, [graph]) for p in patterns], {0, 1})
    got = scan([TripleIndex(triples)], tuple(patterns), WIDTH, list(rows), frozenset({0, 1}))
    assert got == expected


def test_a_plan_node_keeps_its_own_compiled_scans():
    """The compiled steps live in the Scan node, so they go with its query: a node compiles
    once and reads its memo for the next event; an equal node (another query's) starts
    empty, nothing is shared through the process."""
    patterns = ((Slot(0), Constant(1), Slot(1)), (Slot(1), Constant(2), Slot(2)))
    node, other = po.Scan((po.EventGraph(),), patterns), po.Scan((po.EventGraph(),), patterns)
    assert node == other and node.compiled is not other.compiled
    events = [
        ([(5, 1, 6), (6, 2, 7)], [(5, 6, 7, None)]),
        ([(8, 1, 9), (9, 2, 3), (9, 2, 4)], [(8, 9, 3, None), (8, 9, 4, None)]),
    ]
    for triples, expected in events:
        assert scan([TripleIndex(triples)], patterns, WIDTH, compiled=node.compiled) == expected
    assert list(node.compiled) == [frozenset()]
    assert other.compiled == {}
