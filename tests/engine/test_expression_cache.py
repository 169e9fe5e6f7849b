"""The expression cache: a batch that overflows it is still answered in full (a W8 run
once failed with a KeyError when the cache was cleared under a batch's known keys)."""

from __future__ import annotations

import pyoxigraph as ox

from sepia.engine import expressions
from sepia.engine.expressions import ExpressionEvaluator
from sepia.engine.rows import Slots
from sepia.lang import parse_query
from sepia.rdf.dictionary import Dictionary


def test_a_batch_overflowing_the_cache_is_answered_in_full(monkeypatch):
    monkeypatch.setattr(expressions, "CACHE_LIMIT", 4)
    query = parse_query("SELECT * WHERE { ?s ?p ?x FILTER(?x > 2) }")
    condition = query.pattern.inner.expression  # Project(Filter(...))
    dictionary = Dictionary()
    slots = Slots.of(["x"])
    test = ExpressionEvaluator(condition, slots, dictionary, boolean=True)
    rows = [(dictionary.encode(ox.Literal(n)),) for n in range(6)]
    assert test.truths(rows[:3]) == [False, False, False]  # 0, 1, 2 now cached
    assert test.truths(rows) == [False, False, False, True, True, True]  # overflows
