"""The order event mappings are stamped in at an instant (``query.events._in_order``): by
interval, then row with an unbound slot first; the rows compared directly where Python can,
through a key where an unbound slot meets a bound one. Orders worked out by hand."""

from __future__ import annotations

from sepia.engine.query.events import _in_order


def test_bound_rows_are_ordered_by_interval_then_values():
    """(start, end) first: (1, 5) before (2, 5); then the rows: (3, 9) before (4, 1)."""
    found = {((4, 1, None), 2, 5), ((3, 9, None), 2, 5), ((7, 7, None), 1, 5)}
    assert list(_in_order(found)) == [
        ((7, 7, None), 1, 5), ((3, 9, None), 2, 5), ((4, 1, None), 2, 5),
    ]


def test_an_unbound_slot_sorts_before_any_id():
    """(5, None) and (5, 2) differ first where one is unbound: it comes first, as -1 would;
    (4, 8) is before both by its first value."""
    found = {((5, 2), 1, 3), ((5, None), 1, 3), ((4, 8), 1, 3)}
    assert list(_in_order(found)) == [((4, 8), 1, 3), ((5, None), 1, 3), ((5, 2), 1, 3)]


def test_one_mapping_is_itself():
    found = {((1, None), 0, 0)}
    assert list(_in_order(found)) == [((1, None), 0, 0)]
