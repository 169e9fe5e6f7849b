"""Numeric comparisons in Python (``sepia.engine.r2r.numeric``) never disagree with pyoxigraph:
on random literals of every numeric kind (odd lexical forms, huge and tiny values, NaN,
INF, invalid forms, other datatypes, IRIs, unbound), wherever the Python path answers, its
answer is pyoxigraph's; elsewhere it leaves the row to pyoxigraph."""

from __future__ import annotations

import pyoxigraph as ox
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.engine.r2r.expressions import ExpressionEvaluator
from sepia.engine.r2r.numeric import UNSURE
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
    "?a < ?b && ?a > 1", "?a > ?b || ?b > 2.5", "?a < ?b && (?a = 1 || ?b < 0)",
    "?a > 0 && ?b > 0 && ?a * 2 < ?b",
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


def test_a_false_side_settles_a_conjunction_whatever_the_other():
    """false && error is false, true || error is true (SPARQL 17.2): answered in Python
    though the other side is left to pyoxigraph."""
    both = parse_query("SELECT * WHERE { ?s ?p ?o FILTER(?a > 1 && ?b > 1) }").pattern
    either = parse_query("SELECT * WHERE { ?s ?p ?o FILTER(?a > 1 || ?b > 1) }").pattern
    dictionary = Dictionary()
    slots = Slots.of(["a", "b"])
    conjunction = ExpressionEvaluator(both.inner.expression, slots, dictionary, boolean=True)
    disjunction = ExpressionEvaluator(either.inner.expression, slots, dictionary, boolean=True)
    one, two = (ox.Literal(str(n), datatype=ox.NamedNode(XSD + "integer")) for n in (1, 2))
    word = ox.Literal("abc")
    assert conjunction.native([one, word]) is False
    assert conjunction.native([two, word]) is UNSURE
    assert disjunction.native([two, word]) is True
    assert disjunction.native([one, word]) is UNSURE
    assert conjunction.native([two, two]) is True


def test_a_decimal_against_a_double_is_left_to_pyoxigraph():
    """Found by the test above: pyoxigraph turns the decimal 123456789012345.67 into a
    double other than Python's correctly rounded one, so it is greater than the double
    123456789012345.67 there; the Python path must not answer."""
    query = parse_query("SELECT * WHERE { ?s ?p ?o FILTER(?a > ?b) }")
    dictionary = Dictionary()
    test = ExpressionEvaluator(
        query.pattern.inner.expression, Slots.of(["a", "b"]), dictionary, boolean=True
    )
    text = "123456789012345.67"
    a = ox.Literal(text, datatype=ox.NamedNode(XSD + "decimal"))
    b = ox.Literal(text, datatype=ox.NamedNode(XSD + "double"))
    assert test.native([a, b]) is UNSURE
    assert test.truths([(dictionary.encode(a), dictionary.encode(b))]) == [True]
