"""A basic event pattern's kept matches read as matching the window's elements anew would:
through insertions, evictions and a restored window, for every scope a SEQ asks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.algebra import dataset as ds
from sepia.engine.cep.intervals import EventMapping
from sepia.engine.cep.leaves import LeafMatches, Leaves, needed_predicates
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.scan import Constant, Slot
from sepia.engine.rows import Row, compatible
from sepia.engine.s2r.windows import WindowOperator, WindowState

PLAN = None
"""The fake matcher below reads no plan."""


def match(_plan: object, _time: int, triples: tuple) -> list[Row]:
    """``?x :p ?y OPTIONAL {?y :q ?z}`` in miniature: (s, o, o2) per triple with p 1, the
    third slot bound only when the element also has (o, 2, o2)."""
    rows = []
    for s, p, o in triples:
        if p == 1:
            rows += [(s, o, z) for y, q, z in triples if y == o and q == 2] or [(s, o, None)]
    return rows


def anew(window: WindowState, before: int, mu: Row | None, exact: int | None) -> set:
    """What the leaf gives when every element is matched again (starts = ends)."""
    return {
        (row, time, time)
        for time, triples in window.elements
        if time <= before and (exact is None or time == exact)
        for row in match(PLAN, time, triples)
        if mu is None or compatible(row, mu)
    }


triple = st.tuples(st.integers(0, 3), st.integers(1, 2), st.integers(0, 3))
step = st.tuples(st.integers(0, 3), st.lists(st.lists(triple, max_size=3), max_size=3))
mu = st.none() | st.tuples(*[st.none() | st.integers(0, 3)] * 3)


@settings(max_examples=200, deadline=None)
@given(st.lists(step, min_size=1, max_size=12), st.integers(0, 12), st.integers(-2, 3), mu)
def test_kept_matches_equal_matching_anew(
    steps: list, at: int, back: int, scope: Row | None
) -> None:
    window = WindowState(WindowOperator(ds.Sliding(5, 1, 0)))
    kept = LeafMatches(PLAN, (0, 1))  # type: ignore[arg-type]
    seen: set[Row] = set()
    """Every row matched so far, keys alone: scopes that hit evicted elements' keys."""
    t = 0
    for i, (gap, elements) in enumerate(steps):
        t += gap + 1
        for triples in elements:
            window.insert(t, tuple(triples))
            seen |= {(s, o, None) for s, o, _ in match(PLAN, t, tuple(triples))}
        window.advance(t)
        if i == at:  # a restored window is another object: the kept matches start afresh
            window = WindowState.from_rows(window.operator, window.rows())
        kept.follow(window, None, match)
        before = t - back
        for mu in (scope, *seen):
            for exact in (None, t, t - 1):
                got: set[EventMapping] = kept.select(before, mu, exact)
                assert got == anew(window, before, mu, exact)


def test_an_evicted_element_leaves_its_index_entry():
    """Two elements with the same key: the first leaves, the second is still found."""
    window = WindowState(WindowOperator(ds.Sliding(2, 1, 0)))
    kept = LeafMatches(PLAN, (0, 1))  # type: ignore[arg-type]
    window.insert(1, ((7, 1, 8),))
    window.insert(2, ((7, 1, 8),))
    kept.follow(window, None, match)
    assert kept.select(9, (7, 8, None), None) == {((7, 8, None), 1, 1), ((7, 8, None), 2, 2)}
    window.advance(3)  # (1, 3]: the element at 1 leaves
    kept.follow(window, None, match)
    assert kept.select(9, (7, 8, None), None) == {((7, 8, None), 2, 2)}
    window.advance(5)
    kept.follow(window, None, match)
    assert kept.select(9, (7, 8, None), None) == set()
    assert kept.index == {}


def test_leaves_with_one_pattern_over_one_window_match_each_element_once():
    """``SEQ({?v :delayAt ?s}, {?v :delayAt ?s}, ...)``: both leaves read the same matches;
    another window's leaf, with the same pattern, keeps its own."""
    calls: list[int] = []

    def counted(plan: object, time: int, triples: tuple) -> list[Row]:
        calls.append(time)
        return match(plan, time, triples)

    scan = po.Scan((po.EventGraph(),), ((Slot(0), Constant(1), Slot(1)),))
    window = WindowState(WindowOperator(ds.Sliding(5, 1, 0)))
    window.insert(1, ((7, 1, 8),))
    window.insert(2, ((7, 1, 9),))
    leaves, first, second, elsewhere = Leaves(frozenset()), object(), object(), object()
    a = leaves.of(first, "W", scan, window, None, counted)
    b = leaves.of(second, "W", po.Scan(scan.graphs, scan.patterns), window, None, counted)
    assert a is b and calls == [1, 2]
    assert b.select(9, None, None) == {((7, 8, None), 1, 1), ((7, 9, None), 2, 2)}
    other = WindowState(WindowOperator(ds.Sliding(5, 1, 0)))
    other.insert(3, ((7, 1, 8),))
    c = leaves.of(elsewhere, "V", scan, other, None, counted)
    assert c is not a and calls == [1, 2, 3]
    assert c.select(9, None, None) == {((7, 8, None), 3, 3)}


def test_ends_at_reads_the_mappings_of_the_elements_stamped_then():
    """The element at 2 has no mapping (p 2 only), the one at 1 has: ends at 1, not at 2."""
    window = WindowState(WindowOperator(ds.Sliding(5, 1, 0)))
    kept = LeafMatches(PLAN, (0, 1))  # type: ignore[arg-type]
    window.insert(1, ((7, 1, 8),))
    window.insert(2, ((7, 2, 8),))
    kept.follow(window, None, match)
    assert [kept.ends_at(t) for t in (0, 1, 2, 3)] == [False, True, False, False]


def test_an_element_without_the_patterns_predicate_is_not_matched():
    """``{?x :p ?y}`` with :p = 1 over the event graph: the element at 2 holds only :q
    (2), so it is not handed to the matcher and has no mapping; the one at 3 holds both."""
    calls: list[int] = []

    def counted(plan: object, time: int, triples: tuple) -> list[Row]:
        calls.append(time)
        return [(s, o, None) for s, p, o in triples if p == 1]

    scan = po.Scan((po.EventGraph(),), ((Slot(0), Constant(1), Slot(1)),))
    window = WindowState(WindowOperator(ds.Sliding(5, 1, 0)))
    window.insert(1, ((5, 1, 6),))
    window.insert(2, ((5, 2, 6),))
    window.insert(3, ((7, 2, 8), (7, 1, 9)))
    kept = LeafMatches(scan, (0, 1))
    kept.follow(window, None, counted)
    assert calls == [1, 3]
    assert kept.select(9, None, None) == {((5, 6, None), 1, 1), ((7, 9, None), 3, 3)}
    assert [kept.ends_at(t) for t in (1, 2, 3)] == [True, False, True]


def test_only_a_bgp_over_the_event_graph_alone_needs_predicates():
    """Its constant predicates, each once; a variable predicate needs none, nor does a BGP
    that also reads the background (its triples may come from there)."""
    pattern = (Slot(0), Constant(1), Slot(1))
    assert needed_predicates(po.Scan((po.EventGraph(),), (pattern, pattern))) == (1,)
    assert needed_predicates(po.Scan((po.EventGraph(),), ((Slot(0), Slot(2), Slot(1)),))) == ()
    both = (po.EventGraph(), po.BackgroundGraph(None))
    assert needed_predicates(po.Scan(both, (pattern,))) == ()  # type: ignore[arg-type]
