"""SPAseq sequences (seed 002, Definitions 7-15) with semantics.md's choices, by hand.

Each test gives a timeline of events, each tagged with the GPM it matches and its bindings.
"""

from __future__ import annotations

import pytest

from sepia.semantics import spaseq as sq
from sepia.semantics.mappings import EventMapping

from .support import mu


def ev(time: int, name: str, **bindings: str) -> EventMapping:
    return EventMapping(mu(**bindings), time, time, frozenset({("s", name)}))


def run(timeline, spec, within=None, tumbling=False, end=None):
    """Match ``spec`` (a list of (operator, label, modifier)) over ``timeline`` (a list of
    (time, label, bindings)); returns {(start, end, reported_at, ((row values), ...))}."""
    events = [(t, label, ev(t, f"{label}{t}", **b)) for t, label, b in timeline]
    variables = {label: frozenset(b) for _, label, b in timeline}
    elements = [
        sq.Element(
            frozenset(e for _, lab, e in events if lab == label),
            operator,
            modifier,
            variables.get(label, frozenset()),
        )
        for operator, label, modifier in spec
    ]
    times = tuple(sorted({t for t, _, _ in timeline}))
    bounds = sq.Bounds(times, end if end is not None else times[-1], within, tumbling)
    return {
        (
            m.start,
            m.end,
            m.reported_at,
            tuple(tuple(sorted(r[k].value[19:] for k in r)) for r in m.rows()),
        )
        for m in sq.sequence(elements, bounds)
    }


# semantics.md E4: S1 power events, S2 weather events; A and B join on ?l
E4 = [
    (10, "A", {"h": "H1", "l": "L1"}),
    (12, "B", {"w": "W0", "l": "L2"}),
    (15, "A", {"h": "H2", "l": "L1"}),
    (20, "B", {"w": "W1", "l": "L1"}),
    (25, "B", {"w": "W2", "l": "L1"}),
]


def pair(h, w, start, end):
    return (start, end, end, ((h, "L1", w),))


@pytest.mark.parametrize(
    ("operator", "expected"),
    [
        (
            ":",
            {
                pair("H1", "W1", 10, 20),
                pair("H2", "W1", 15, 20),
                pair("H1", "W2", 10, 25),
                pair("H2", "W2", 15, 25),
            },
        ),
        (";", {pair("H1", "W1", 10, 20), pair("H2", "W1", 15, 20)}),
        (",", {pair("H2", "W1", 15, 20)}),  # W0@12 sits right after H1@10
    ],
)
def test_e4_selection_strategies(operator, expected):
    assert run(E4, [(None, "A", ""), (operator, "B", "")], within=50) == expected


def test_within_bounds_each_match():
    assert run(E4, [(None, "A", ""), (":", "B", "")], within=10) == {
        pair("H1", "W1", 10, 20),
        pair("H2", "W1", 15, 20),
        pair("H2", "W2", 15, 25),
    }
    # tumbling windows of 20: [0, 20) and [20, 40): no match crosses 20
    assert run(E4, [(None, "A", ""), (":", "B", "")], within=20, tumbling=True) == set()


def test_strict_contiguity_with_equal_timestamps_on_two_streams():
    timeline = [(10, "A", {"x": "a"}), (10, "X", {"y": "y"}), (11, "B", {"x": "a"})]
    # the other stream's event at 10 is not strictly between A@10 and B@11
    assert run(timeline, [(None, "A", ""), (",", "B", "")]) == {(10, 11, 11, (("a",),))}


KLEENE = [
    (10, "A", {"h": "H1", "l": "L1"}),
    (20, "B", {"w": "W1", "l": "L1"}),
    (25, "B", {"w": "W2", "l": "L1"}),
    (30, "B", {"w": "W3", "l": "L2"}),
    (35, "B", {"w": "W4", "l": "L1"}),
]


def test_kleene_in_a_sequence_shares_variables_and_is_contiguous():
    # first iteration skip-till-next (W1), then strictly contiguous: W2 (same ?l); W3 has
    # another ?l and ends the run, so W4 is never reached
    assert run(KLEENE, [(None, "A", ""), (";", "B", "+")]) == {
        (10, 20, 20, (("H1", "L1", "W1"),)),
        (10, 25, 25, (("H1", "L1", "W1"), ("H1", "L1", "W2"))),
    }


def test_kleene_starting_the_sequence_skips_till_next():
    timeline = [(1, "B", {"w": "W1"}), (2, "X", {"q": "q"}), (3, "B", {"w": "W2"})]
    assert run(timeline, [(None, "B", "+")]) == {
        (1, 1, 1, (("W1",),)),
        (1, 3, 3, (("W1",), ("W2",))),
        (3, 3, 3, (("W2",),)),
    }


def test_optional():
    spec = [(None, "A", ""), (",", "B", "?"), (",", "C", "")]
    abc = [(1, "A", {"x": "a"}), (2, "B", {"x": "a"}), (3, "C", {"x": "a"})]
    assert run(abc, spec) == {(1, 3, 3, (("a",),))}  # A C fails: B sits between
    assert run([(1, "A", {"x": "a"}), (2, "C", {"x": "a"})], spec) == {(1, 2, 2, (("a",),))}


@pytest.mark.parametrize(
    ("timeline", "expected"),
    [
        ([(1, "A", {"x": "a"}), (2, "B", {"x": "a"}), (3, "C", {"x": "a"})], set()),
        # B is not the very next event after A: allowed; C follows A skip-till-next
        (
            [
                (1, "A", {"x": "a"}),
                (2, "D", {"y": "d"}),
                (3, "B", {"x": "a"}),
                (4, "C", {"x": "a"}),
            ],
            {(1, 4, 4, (("a",),))},
        ),
        # the B right after A is about another ?x: not compatible, does not forbid
        (
            [(1, "A", {"x": "a"}), (2, "B", {"x": "z"}), (3, "C", {"x": "a"})],
            {(1, 3, 3, (("a",),))},
        ),
    ],
)
def test_negation_after_strict_contiguity(timeline, expected):
    assert run(timeline, [(None, "A", ""), (",", "B", "!"), (";", "C", "")]) == expected


@pytest.mark.parametrize(
    ("timeline", "expected"),
    [
        ([(1, "A", {"x": "a"}), (2, "B", {"x": "a"}), (3, "C", {"x": "a"})], set()),
        (
            [(1, "A", {"x": "a"}), (3, "C", {"x": "a"}), (4, "B", {"x": "a"})],
            {(1, 3, 3, (("a",),))},
        ),
        # a B at the same time as C is not strictly between A and C
        (
            [(1, "A", {"x": "a"}), (3, "C", {"x": "a"}), (3, "B", {"x": "a"})],
            {(1, 3, 3, (("a",),))},
        ),
    ],
)
def test_negation_in_the_middle(timeline, expected):
    assert run(timeline, [(None, "A", ""), (";", "B", "!"), (";", "C", "")]) == expected


def test_negation_at_the_head_looks_back_over_within():
    spec = [(None, "B", "!"), (";", "C", "")]
    assert run([(1, "B", {"x": "a"}), (4, "C", {"x": "a"})], spec, within=5) == set()
    assert run([(1, "B", {"x": "a"}), (10, "C", {"x": "a"})], spec, within=5) == {
        (10, 10, 10, (("a",),))
    }


def test_negation_at_the_tail_waits_for_the_horizon():
    spec = [(None, "A", ""), (";", "B", "!")]
    assert run([(1, "A", {"x": "a"}), (3, "B", {"x": "a"})], spec, within=5, end=100) == set()
    # no B in (10, 15]: the match [10, 10] is reported when the WITHIN horizon 15 passes
    assert run([(10, "A", {"x": "a"}), (20, "B", {"x": "a"})], spec, within=5, end=100) == {
        (10, 10, 15, (("a",),))
    }


def test_conjunction_and_disjunction():
    a = {ev(5, "a5", x="a", l="L1"), ev(6, "a6", x="b", l="L1")}
    b = {ev(5, "b5", y="c", l="L1"), ev(6, "b6", y="d", l="L2")}
    assert sq.conj(a, b) == {EventMapping(mu(x="a", y="c", l="L1"), 5, 5)}
    assert sq.disj(a, b) == a | b


def test_a_filter_on_earlier_variables_decides_what_matches_before_selection():
    # GPM B's FILTER(?p2 > ?p1) reads A's ?p1: B@2 (p2 = 5) is no B match, so skip-till-next
    # takes B@3 (p2 = 20) rather than stopping at B@2
    def value(m, name):
        return int(m[name].value[19:])

    a = sq.Element(frozenset({ev(1, "a1", p1="10")}), None, "", frozenset({"p1"}))
    b = sq.Element(
        frozenset({ev(2, "b2", p2="5"), ev(3, "b3", p2="20")}),
        ";",
        "",
        frozenset({"p2"}),
        lambda m, _event: value(m, "p2") > value(m, "p1"),
    )
    (match,) = sq.sequence([a, b], sq.Bounds((1, 2, 3), 3))
    assert (match.start, match.end, match.common["p2"].value[19:]) == (1, 3, "20")


def test_kleene_without_own_variables_still_reports_each_iteration():
    timeline = [(1, "A", {"x": "a"}), (2, "B", {"x": "a"}), (3, "B", {"x": "a"})]
    assert run(timeline, [(None, "A", ""), (";", "B", "+")]) == {
        (1, 2, 2, (("a",),)),
        (1, 3, 3, (("a",), ("a",))),
    }


def test_negation_at_the_head_with_equal_timestamps():
    # a B at the same time as C is not before it; with WITHIN 5 a C at t looks back over
    # [t - 5, t): a B at 0 forbids a C at 5, not a C at 6
    spec = [(None, "B", "!"), (";", "C", "")]
    same = [(4, "B", {"x": "a"}), (4, "C", {"x": "a"})]
    assert run(same, spec, within=5) == {(4, 4, 4, (("a",),))}
    assert run([(0, "B", {"x": "a"}), (5, "C", {"x": "a"})], spec, within=5) == set()
    assert run([(0, "B", {"x": "a"}), (6, "C", {"x": "a"})], spec, within=5) == {
        (6, 6, 6, (("a",),))
    }


def test_negation_at_the_tail_with_equal_timestamps_and_at_the_horizon():
    spec = [(None, "A", ""), (";", "B", "!")]
    # a B at the same time as A is not after it: the match is reported at the horizon 15
    same = [(10, "A", {"x": "a"}), (10, "B", {"x": "a"})]
    assert run(same, spec, within=5, end=100) == {(10, 10, 15, (("a",),))}
    # a B exactly at the horizon 15 is still inside WITHIN and forbids the match
    assert run([(10, "A", {"x": "a"}), (15, "B", {"x": "a"})], spec, within=5, end=100) == set()
    # without WITHIN the horizon is the end of input
    assert run([(10, "A", {"x": "a"})], spec, end=40) == {(10, 10, 40, (("a",),))}


def test_optional_at_the_head_and_at_the_tail_gives_both_matches():
    # like Kleene's iteration counts, zero and one B are two matches, each reported when it
    # completes: A alone at A's time, A B at B's
    ab = [(1, "A", {"x": "a"}), (2, "B", {"x": "a"})]
    assert run(ab, [(None, "A", ""), (",", "B", "?")]) == {
        (1, 1, 1, (("a",),)),
        (1, 2, 2, (("a",),)),
    }
    assert run(ab, [(None, "A", "?"), (",", "B", "")]) == {
        (2, 2, 2, (("a",),)),
        (1, 2, 2, (("a",),)),
    }
