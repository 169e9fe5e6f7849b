"""CQELS-CEP operators (seed 000, section 4.2) on hand-made mappings with intervals."""

from __future__ import annotations

from sepia.semantics import cqels_cep as c

from .support import em

# Example 8: O1 = delays at 10 and 12, O2 = delays at 16 and 14, O3 = no arrivals
O1 = {em(10, 10, v="a1", s="m"), em(12, 12, v="d1", s="h")}
O2 = {em(16, 16, v="a1", s="m"), em(14, 14, v="d1", s="h")}


def test_example_8_no_tail_of_seq():
    assert c.no_tail(c.seq(O1, O2), set(), 16) == {
        em(10, 16, v="a1", s="m"),
        em(12, 14, v="d1", s="h"),
    }


def test_seq_needs_strictly_earlier_end():
    left = {em(3, 5, x="a")}
    assert c.seq(left, {em(5, 7, x="a")}) == set()  # touching intervals: 5 < 5 fails
    assert c.seq(left, {em(6, 7, x="a")}) == {em(3, 7, x="a")}
    assert c.seq(left, {em(6, 7, x="b")}) == set()  # incompatible


def test_join_intersects_intervals():
    assert c.join({em(1, 5, x="a")}, {em(3, 8, y="b")}) == {em(3, 5, x="a", y="b")}
    assert c.join({em(1, 2, x="a")}, {em(3, 8, y="b")}) == set()
    assert c.join({em(1, 3, x="a")}, {em(3, 8, x="a")}) == {em(3, 3, x="a")}  # a shared instant


def test_or_is_union():
    assert c.or_({em(1, 1, x="a")}, {em(2, 2, y="b")}) == {em(1, 1, x="a"), em(2, 2, y="b")}


def test_seq_wo_negation_in_the_middle():
    a = {em(1, 1, v="x"), em(4, 4, v="y")}
    z = {em(6, 6, v="x"), em(6, 6, v="y")}
    negated = {em(3, 3, v="x"), em(6, 6, v="y")}
    # x: a negative x at 3 lies strictly between 1 and 6; y: the negative y at 6 is not
    # strictly before the closing event at 6, so it does not count
    assert c.seq_wo(a, negated, z) == {em(4, 6, v="y")}
    # a negative event compatible with neither side's values does not block
    assert c.seq_wo(a, {em(3, 3, v="q")}, z) == {em(1, 6, v="x"), em(4, 6, v="y")}


def test_no_head_negation_at_the_head():
    right = {em(5, 5, v="x"), em(5, 5, v="y"), em(2, 2, v="z")}
    negated = {em(1, 1, v="x"), em(5, 5, v="y"), em(1, 1, v="z")}
    # x is preceded by a negative x; y's negative is simultaneous (not before); z's is before
    assert c.no_head(negated, right) == {em(5, 5, v="y")}


def test_no_tail_depends_on_evaluation_time():
    left = {em(1, 4, v="x")}
    negated = {em(7, 7, v="x")}
    assert c.no_tail(left, negated, 6) == left  # pushed at 6 ...
    assert c.no_tail(left, negated, 7) == set()  # ... retracted at 7
    assert c.no_tail(left, {em(4, 4, v="x")}, 9) == left  # a negative at 4 is not after 4
