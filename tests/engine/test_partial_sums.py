"""PARTIAL_SUM: a group's exact SUM / AVG state, reported by a split query's buckets
(`sepia.engine.plan.partials`) and merged after them, finishes to exactly the unsplit
query's SUM and AVG, on both engine paths."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

import pyoxigraph as ox
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sepia.algebra.expression import AggregateFunction
from sepia.algebra.pattern import Group
from sepia.engine.columnar.query import ColumnarQuery
from sepia.engine.hosts.session import Session
from sepia.engine.plan.partials import partial_query
from sepia.engine.r2r.aggregates import MaintainedGroups
from sepia.lang import parse_query
from sepia.rdf.aggregates import PARTIAL, finished, partial_literal, total
from sepia.rdf.numbers import PARTIAL_SUM_TYPE, Sum, number_of
from sepia.rdf.stream import StreamElement
from sepia.runtime.local import run

XSD = "http://www.w3.org/2001/XMLSchema#"
S = "http://example.org/trades"
EX = "http://example.org/"
QUERY = (
    f"PREFIX : <{EX}>\nSELECT ?company (SUM(?price) AS ?total) (AVG(?price) AS ?average) "
    f"(COUNT(?price) AS ?n) FROM STREAM <{S}> [RANGE 4 STEP 2] "
    "WHERE { ?trade :company ?company ; :price ?price } GROUP BY ?company"
)


def typed(text: str, kind: str) -> ox.Literal:
    return ox.Literal(text, datatype=ox.NamedNode(XSD + kind))


def decimal_text(mantissa: int, digits: int) -> str:
    return format(Decimal(mantissa).scaleb(-digits), "f")


SPECIAL = st.sampled_from(["NaN", "INF", "-INF"])
VALUES = st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(lambda n: typed(str(n), "integer")),
    st.builds(decimal_text, st.integers(-(10**30), 10**30), st.integers(0, 18)).map(
        lambda text: typed(text, "decimal")),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: typed(repr(x), "double")),
    st.floats(width=32, allow_nan=False, allow_infinity=False).map(
        lambda x: typed(repr(x), "float")),
    SPECIAL.map(lambda text: typed(text, "double")),
    SPECIAL.map(lambda text: typed(text, "float")),
    st.just(ox.Literal("cheap")),  # not a number: an error
)


def merged_literals(literals) -> Sum:
    """The states of PARTIAL_SUM literals merged, as the merging stage merges their texts."""
    texts = []
    for literal in literals:
        assert literal.datatype == PARTIAL
        texts.append(literal.value)
    return Sum.from_state_texts(texts)


def state_of(values: list[ox.Literal]) -> Sum:
    state = Sum()
    for value in values:
        state.add(number_of(value), 1)
    return state


@given(st.lists(VALUES, max_size=12), st.data())
def test_merged_parts_finish_to_the_whole_sum_and_average(values, data) -> None:
    parts_count = data.draw(st.integers(1, 4))
    owner = data.draw(st.lists(st.integers(0, parts_count - 1), min_size=len(values),
                               max_size=len(values)))  # fmt: skip
    parts: list[list[ox.Literal]] = [[] for _ in range(parts_count)]
    for value, part in zip(values, owner, strict=True):
        parts[part].append(value)
    by_text = Sum.from_state_texts(state_of(part).state_text() for part in parts)
    by_literal = merged_literals(partial_literal(state_of(part).state_text()) for part in parts)
    for merged in (by_text, by_literal):
        assert merged.state_text() == state_of(values).state_text()
        for average in (False, True):
            assert finished(merged, average) == total(values, average)


@pytest.mark.parametrize(
    ("parts", "summed", "averaged"),
    [
        ([["1.5", "2"], ["0.25"]], typed("3.75", "decimal"), typed("1.25", "decimal")),
        ([["2", "3"], [], ["4"]], typed("9", "integer"), typed("3", "decimal")),
        ([["1e0"], ["2.5e0", "0.5"]], typed("4", "double"), typed("1.3333333333333333", "double")),
        ([["1"], ["INF"], ["-INF"]], typed("NaN", "double"), typed("NaN", "double")),
        ([["1"], ["x"]], None, None),
        ([[], []], typed("0", "integer"), typed("0", "integer")),
    ],
)
def test_merged_parts_by_hand(parts, summed, averaged) -> None:
    """Known answers: decimals exact, AVG truncated, doubles promoted, INF and -INF NaN,
    a non-number an error, no values 0."""

    def literal(text: str) -> ox.Literal:
        if text == "x":
            return ox.Literal(text)
        kind = "double" if "e" in text or "INF" in text else "decimal" if "." in text else (
            "integer")  # fmt: skip
        return typed(text, kind)

    merged = merged_literals(
        partial_literal(state_of([literal(t) for t in p]).state_text()) for p in parts)
    assert finished(merged, False) == summed
    assert finished(merged, True) == averaged


def test_a_state_text_is_the_whole_state() -> None:
    state = state_of([typed("1.5", "decimal"), typed("0.1", "double"), typed("INF", "float"),
                      ox.Literal("x")])  # fmt: skip
    text = state.state_text()
    assert text == "4;1;0,1,1,1;1500000000000000000;3602879701896397/36028797018963968;0,1,0"
    assert Sum.from_state_texts([text]).state_text() == text
    assert partial_literal(text).datatype.value == PARTIAL_SUM_TYPE
    with pytest.raises(ValueError):
        Sum.from_state_texts(["4;1;0,1,1;15;3/2;0,1,0"])  # three kinds
    with pytest.raises(ValueError):
        Sum.from_state_texts(["4;1;0,1,1,1;15;3;0,1,0"])  # no denominator
    with pytest.raises(ValueError):
        Sum.from_state_texts([text, "4;1;0,1,1;15;3/2;0,1,0"])


def test_partial_query_replaces_only_the_group_s_plain_sums() -> None:
    text = QUERY.replace("(COUNT(?price) AS ?n)", "(COUNT(?price) AS ?n) (MAX(?price) AS ?m) "
                         "(SUM(DISTINCT ?price) AS ?d)")  # fmt: skip
    group = _group(partial_query(parse_query(text)).expression)
    functions = [(b.aggregate.function, b.aggregate.distinct) for b in group.aggregates]
    assert functions == [
        (AggregateFunction.PARTIAL_SUM, False), (AggregateFunction.PARTIAL_SUM, False),
        (AggregateFunction.COUNT, False), (AggregateFunction.MAX, False),
        (AggregateFunction.SUM, True),
    ]
    assert _group(parse_query(text).expression).aggregates[0].aggregate.function is (
        AggregateFunction.SUM)  # the original is left as it was


@pytest.mark.parametrize("reader", ["HAVING (AVG(?price) > 1)", "ORDER BY ?total"])
def test_partial_query_refuses_a_sum_read_above_the_group(reader) -> None:
    with pytest.raises(ValueError):
        partial_query(parse_query(f"{QUERY} {reader}"))


def _group(node) -> Group:
    while not isinstance(node, Group):
        node = node.inner
    return node


def trades() -> list[StreamElement]:
    """Four trades per instant over ten instants: three among three companies at integer,
    decimal, double and float prices (doubles whose sum's rounding depends on the order
    they are added in; "bad" has one price that is not a number), one of "plain" at
    integer and decimal prices only (the columnar core's vector path)."""
    price = ox.NamedNode(EX + "price")
    company = ox.NamedNode(EX + "company")
    prices = [typed("3", "integer"), typed("0.1", "double"), typed("2.75", "decimal"),
              typed("1e16", "double"), typed("0.3", "float"), typed("1.000000000000000001",
              "decimal"), typed("-1e16", "double"), typed("7", "integer")]  # fmt: skip
    elements = []
    for t in range(1, 11):
        triples = []
        for k in range(4):
            trade = ox.NamedNode(f"{EX}trade{t}-{k}")
            name = ["acme", "beta", "bad", "plain"][(t + k) % 3 if k < 3 else 3]
            value = ox.Literal("n/a") if (name, t) == ("bad", 5) else prices[(t * 3 + k) % 8]
            if name == "plain":
                value = typed(f"{t}.5", "decimal") if t % 4 == 0 else typed(str(t), "integer")
            triples += [ox.Triple(trade, company, ox.NamedNode(EX + name)),
                        ox.Triple(trade, price, value)]  # fmt: skip
        elements.append(StreamElement(S, f"{EX}g{t}", t, t, tuple(triples)))
    return elements


def split(elements: list[StreamElement], parts: int) -> list[list[StreamElement]]:
    """Each element's triples shared among ``parts`` by their subject (a split by
    ?trade); every part steps through every instant, as Spark's buckets do."""
    shares: list[list[StreamElement]] = [[] for _ in range(parts)]
    for e in elements:
        for n, share in enumerate(shares):
            mine = tuple(t for t in e.triples if int(t.subject.value[-1]) % parts == n)
            share.append(StreamElement(e.stream, e.graph, e.start, e.end, mine))
    return shares


def on_path(query, elements: list[StreamElement], path: str):
    """The results of ``query`` over ``elements``, asserted to run on ``path``."""
    session = Session()
    engine = session.register(query, "q")
    if path == "columnar":
        assert isinstance(engine, ColumnarQuery)
    else:
        assert not isinstance(engine, ColumnarQuery)
        assert isinstance(engine.delta, MaintainedGroups)
    return [r for e in elements for r in session.push(e)] + session.flush()


@pytest.mark.parametrize("path", ["rows", "columnar"])
@pytest.mark.parametrize("parts", [1, 2, 3])
def test_split_partial_sums_merge_to_the_unsplit_answer(monkeypatch, path, parts) -> None:
    monkeypatch.setenv("SEPIA_ENGINE_PATH", path)
    query = parse_query(QUERY)
    elements = trades()
    expected = {
        (r.t, r.binding["company"]): (r.binding.get("total"), r.binding.get("average"))
        for r in run([("q", query)], {S: elements})
    }
    assert len(expected) > 8
    assert any(v[0] is None for v in expected.values())  # "bad" over its error
    assert {v[0].datatype.value for v in expected.values() if v[0]} == {
        XSD + "double", XSD + "decimal", XSD + "integer"}
    states: dict[tuple, list[list[ox.Literal]]] = defaultdict(lambda: [[], []])
    for share in split(elements, parts):
        for r in on_path(partial_query(query), share, path):
            key = (r.t, r.binding["company"])
            for n, name in enumerate(("total", "average")):
                states[key][n].append(r.binding[name])  # always bound
    got = {
        key: (finished(merged_literals(sums), False), finished(merged_literals(means), True))
        for key, (sums, means) in states.items()
    }
    assert got == expected


def test_both_paths_write_the_same_partial_literals(monkeypatch) -> None:
    """The row engine's states (one value at a time) and the columnar core's (vector sums
    for integers and decimals) are the same states, kinds counted alike."""
    query = partial_query(parse_query(QUERY))
    found = []
    for path in ("rows", "columnar"):
        monkeypatch.setenv("SEPIA_ENGINE_PATH", path)
        found.append(sorted(str(sorted(r.binding.items())) for r in on_path(query, trades(), path)))
    assert found[0] == found[1]
    assert found[0] and all(row.count(PARTIAL_SUM_TYPE) == 2 for row in found[0])
