"""Numeric comparisons in Python (``sepia.engine.numeric``) never disagree with pyoxigraph:
on random literals of every numeric kind (odd lexical forms, huge and tiny values, NaN,
INF, invalid forms, other datatypes, IRIs, unbound), wherever the Python path answers, its
answer is pyoxigraph's; elsewhere it leaves the row to pyoxigraph."""

from __future__ import annotations

import pyoxigraph as ox
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.engine.expressions import ExpressionEvaluator
from sepia.engine.numeric import UNSURE
from sepia.engine.rows import Slots
from sepia.lang import parse_query
from sepia.rdf.dictionary import Dictionary

XSD = "http://www.w3.org/2001/XMLSchema#"


def typed(kind: str) -> st.SearchStrategy[ox.Literal]:
    return st.builds(lambda text: ox.Literal(text, datatype=ox.NamedNode(XSD + kind)), LEXICAL)


LEXICAL = st.one_of(
    st.integers(-10**20, 10**20).map(str),
    st.integers(-50, 50).map(str),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
    st.sampled_from([
        "1.50", ".5", "-0.0", "+3.", "0.1", "1.0000000000000000001", "01", "1e3", "-1.5E-2",
        "INF", "-INF", "+INF", "NaN", "abc", "1.5", " 2", "1e400", "123456789012345.67",
    ]),
    st.floats(allow_nan=True).map(repr),
)
TERMS = st.one_of(
    typed("integer"), typed("decimal"), typed("double"), typed("float"), typed("int"),
    st.just(ox.Literal("5")), st.just(ox.NamedNode("http://example.org/a")), st.none(),
)
FILTERS = st.sampled_from([
    "?a > ?b", "?a < ?b", "?a = ?b", "?a != ?b", "?a <= ?b", "?a >= ?b",
    "?a * 10 <= ?b", "?a + ?b > 3", "?a - 0.5 = ?b", "?a * ?b >= 1.5e0", "?a < ?b * 0.7",
    "2 > ?a", "?a * ?b * ?b != ?a",
])


@settings(max_examples=600, deadline=None)
@given(FILTERS, TERMS, TERMS)
def test_python_answers_agree_with_pyoxigraph(text, a, b):
    query = parse_query(f"SELECT * WHERE {{ ?s ?p ?o FILTER({text}) }}")
    dictionary = Dictionary()
    test = ExpressionEvaluator(
        query.pattern.inner.expression, Slots.of(["a", "b"]), dictionary, boolean=True
    )
    assert test.native is not None
    terms = [{"a": a, "b": b}[name] for name in test.names]
    (expected,) = test._query([tuple(None if t is None else dictionary.encode(t) for t in terms)])
    answer = test.native(terms)
    if answer is not UNSURE:
        assert expected == (test.truth if answer else test.falsity), (text, a, b)


def test_the_python_path_answers_the_usual_cases():
    """Prices as the generators write them: not left to pyoxigraph."""
    condition = parse_query("SELECT * WHERE { ?s ?p ?o FILTER(?a * 10 <= ?b) }").pattern
    dictionary = Dictionary()
    test = ExpressionEvaluator(condition.inner.expression, Slots.of(["a", "b"]), dictionary,
                               boolean=True)  # fmt: skip
    decimal = ox.NamedNode(XSD + "decimal")
    low, high = ox.Literal("2.75", datatype=decimal), ox.Literal("27.50", datatype=decimal)
    assert test.native([low, high]) is True
    assert test.native([ox.Literal("3", datatype=ox.NamedNode(XSD + "integer")),
                        ox.Literal("27.50", datatype=decimal)]) is False  # fmt: skip
