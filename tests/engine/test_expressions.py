"""Expressions evaluated by pyoxigraph in batches, with the per-input cache."""

from __future__ import annotations

from unittest.mock import patch

import pyoxigraph as ox

from sepia.algebra import expression as ex
from sepia.engine.r2r.expressions import ExpressionEvaluator
from sepia.engine.rows import Slots
from sepia.rdf.dictionary import Dictionary

INTEGER = ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")


def number(n: int) -> ox.Literal:
    return ox.Literal(str(n), datatype=INTEGER)


@patch("sepia.engine.r2r.expressions.CACHE_LIMIT", 3)
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


def test_rows_holding_blank_nodes_are_evaluated():
    """A VALUES block cannot hold a blank node: a FILTER on a variable bound to one in a
    stream element raised SyntaxError (found by tests/engine/test_describe.py on
    ``OPTIONAL { ?x :q ?z FILTER(?z != ?y) }``). Such rows are written in the store; the
    blank node keeps its identity (isBlank, sameTerm, the value of ?y itself)."""
    dictionary = Dictionary()
    y, z = ox.Variable("y"), ox.Variable("z")
    slots = Slots.of(["y", "z"])
    blank, other, a = ox.BlankNode("k1"), ox.BlankNode("k2"), ox.NamedNode("http://e/a")
    terms = [(blank, a), (blank, blank), (blank, other), (a, a), (blank, None)]
    rows = [tuple(None if t is None else dictionary.encode(t) for t in r) for r in terms]
    differ = ex.Binary(ex.BinaryOperator.NOT_EQUAL, z, y)
    assert ExpressionEvaluator(differ, slots, dictionary, boolean=True).truths(rows) == [
        True, False, True, False, False
    ]  # fmt: skip
    blank_y = ex.Call("ISBLANK", (y,))
    assert ExpressionEvaluator(blank_y, slots, dictionary, boolean=True).truths(rows) == [
        True, True, True, False, True
    ]  # fmt: skip
    itself = ExpressionEvaluator(ex.Call("COALESCE", (z, y)), slots, dictionary, boolean=False)
    assert [dictionary.decode(v) for v in itself.values(rows)] == [a, blank, other, a, blank]
