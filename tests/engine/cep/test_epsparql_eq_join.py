"""EP-SPARQL's EqJoin on encoded mappings (``cep.epsparql.eq_join``): a few candidate
pairs are tried one by one, more are hashed (``FEW_PAIRS``); both give the compatible
pairs over equal intervals, merged, worked out here by hand."""

from __future__ import annotations

from unittest import mock

import pytest

from sepia.engine.cep import epsparql
from sepia.engine.cep.epsparql import eq_join

PRICE = ((1, 10, None), 5, 5)
"""Slot 0 a company, 1 a price, 2 a class."""
TYPED = ((1, None, 7), 5, 5)
OTHER_COMPANY = ((2, None, 7), 5, 5)
LATER = ((1, None, 8), 6, 6)


@pytest.mark.parametrize("few", [0, 16])
def test_eq_join_pairs_compatible_mappings_over_one_interval(few):
    """Only the typing of the same company over the same interval joins the price, with
    few pairs tried one by one (16) or hashed (0)."""
    with mock.patch.object(epsparql, "FEW_PAIRS", few):
        assert eq_join([PRICE], [TYPED, OTHER_COMPANY, LATER]) == {((1, 10, 7), 5, 5)}
        assert eq_join([PRICE], []) == set()


@pytest.mark.parametrize("few", [0, 16])
def test_eq_join_of_several_on_each_side(few):
    """Two prices of two companies, each joined with its own company's typings over the
    same interval (one of them typed twice)."""
    prices = [PRICE, ((2, 11, None), 5, 5)]
    typings = [TYPED, ((1, None, 9), 5, 5), OTHER_COMPANY, LATER]
    expected = {((1, 10, 7), 5, 5), ((1, 10, 9), 5, 5), ((2, 11, 7), 5, 5)}
    with mock.patch.object(epsparql, "FEW_PAIRS", few):
        assert eq_join(prices, typings) == expected
