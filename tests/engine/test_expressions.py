"""Expressions evaluated by pyoxigraph in batches, with the per-input cache."""

from __future__ import annotations

from unittest.mock import patch

import pyoxigraph as ox

from sepia.algebra import expression as ex
from sepia.engine.expressions import ExpressionEvaluator
from sepia.engine.rows import Slots
from sepia.rdf.dictionary import Dictionary

INTEGER = ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")


def number(n: int) -> ox.Literal:
    return ox.Literal(str(n), datatype=INTEGER)


@patch("sepia.engine.expressions.CACHE_LIMIT", 3)
def test_a_full_cache_is_refilled_with_the_whole_batch():
    """A batch that overflows the cache clears it, and must then compute the inputs it had
    cached too (it raised KeyError: W8 at 4,400 elements, found by the bench harness)."""
    dictionary = Dictionary()
    x = ox.Variable("x")
    greater = ex.Binary(ex.BinaryOperator.GREATER, x, number(2))
    evaluator = ExpressionEvaluator(greater, Slots.of(["x"]), dictionary, boolean=True)
    row = {n: (dictionary.encode(number(n)),) for n in range(1, 5)}
    assert evaluator.truths([row[1], row[2]]) == [False, False]
    assert evaluator.truths([row[1], row[3], row[4]]) == [False, True, True]
    assert evaluator.truths([row[4], row[2], row[1], row[3]]) == [True, False, False, True]
