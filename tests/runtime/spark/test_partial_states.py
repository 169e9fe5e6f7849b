"""A split's partial rows merged (`partial_states.merged`): each group's line is the one the
unsplit query gives, its SUM, AVG and COUNT finished from all of its values at once, whether
the group is merged by vector operations (integers and decimals, not negative) or line by
line (any other state: negative totals, floats, errors, totals past 30 digits)."""

from __future__ import annotations

import pyarrow as pa
import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.rdf.aggregates import finished, partial_literal
from sepia.rdf.numbers import DATATYPES, INTEGER, Sum, number_of
from sepia.rdf.results import Result, jsonl_line
from sepia.rdf.time import TimeKind
from sepia.runtime.spark import partial_states
from sepia.runtime.spark.partial_states import merged, merged_lines

XSD = "http://www.w3.org/2001/XMLSchema#"
EX = "http://example.org/"
MEMBERS = [
    (("average", "AVG"),),
    (("n", "COUNT"), ("total", "SUM")),
    (("average", "AVG"), ("n", "COUNT"), ("total", "SUM")),
]
"""A split query's merged variables, as `job.merged_splits` gives them (by name)."""

NUMBERS = st.one_of(
    st.integers(0, 10**6).map(lambda n: ox.Literal(str(n), datatype=ox.NamedNode(XSD + "integer"))),
    st.decimals(0, 10**6, places=3).map(
        lambda d: ox.Literal(str(d), datatype=ox.NamedNode(XSD + "decimal"))
    ),
)
"""Integers and decimals, not negative: the values a vector merge adds up."""
OTHERS = st.one_of(
    st.integers(-(10**19), 10**19).map(
        lambda n: ox.Literal(str(n), datatype=ox.NamedNode(XSD + "integer"))
    ),
    st.sampled_from(["-2.5", "123456789012.000000000000000001", "-0.001"]).map(
        lambda d: ox.Literal(d, datatype=ox.NamedNode(XSD + "decimal"))
    ),
    st.sampled_from(["1.5E0", "-2E10", "INF", "NaN"]).map(
        lambda d: ox.Literal(d, datatype=ox.NamedNode(XSD + "double"))
    ),
    st.just(ox.Literal("not a number")),
)
"""Values merged line by line: negative, past an integer's bound, floats, errors."""


def summed(values: list[ox.Literal]) -> Sum:
    state = Sum()
    for value in values:
        state.add(number_of(value), 1)
    return state


def line(group: tuple[int, str], members: tuple, values: list[ox.Literal], *, partial: bool) -> str:
    """The jsonl line of a group (a time and a company): a bucket's partial row over
    `values`, or the unsplit query's row over all of them."""
    t, company = group
    state = summed(values)
    binding: dict[str, ox.NamedNode | ox.Literal] = {"company": ox.NamedNode(EX + company)}
    for name, function in members:
        value: ox.Literal | None
        if function == "COUNT":
            value = ox.Literal(str(len(values)), datatype=DATATYPES[INTEGER])
        elif partial:
            value = partial_literal(state.state_text())
        else:
            value = finished(state, function == "AVG")
        if value is not None:
            binding[name] = value
    return jsonl_line(Result("q", t, binding=binding), TimeKind.DATETIME)


def table(lines: list[tuple[int, str]]) -> pa.Table:
    """Result rows of query 0 (`host.RESULT_DDL`'s columns), each bucket's rows numbered."""
    return pa.table({
        "t": pa.array([t for t, _ in lines], pa.int64()),
        "query_index": pa.array([0] * len(lines), pa.int32()),
        "partition": pa.array([f"{n % 3}/3" for n in range(len(lines))], pa.string()),
        "seq": pa.array(list(range(len(lines))), pa.int32()),
        "line": pa.array([text for _, text in lines], pa.string()),
    })  # fmt: skip


def groups(values: st.SearchStrategy) -> st.SearchStrategy:
    """Groups (time, company: an IRI with a non-ASCII letter in some) each with its
    buckets' values (one to three buckets, none to four values each)."""
    key = st.tuples(st.sampled_from([10_000, 20_000]), st.sampled_from(["acme", "bêta", "c7"]))
    buckets = st.lists(st.lists(values, max_size=4), min_size=1, max_size=3)
    return st.dictionaries(key, buckets, min_size=1, max_size=6)


def check(made: dict, members: tuple) -> None:
    rows = [(t, line((t, c), members, values, partial=True))
            for (t, c), buckets in made.items() for values in buckets]  # fmt: skip
    expected = sorted(line(key, members, [v for b in buckets for v in b], partial=False)
                      for key, buckets in made.items())  # fmt: skip
    merges = {0: members}
    got = merged(table(rows), merges)
    assert sorted(got.column("line").to_pylist()) == expected
    assert set(got.column("partition").to_pylist()) == {""}
    _, slowly = merged_lines([text for _, text in rows], members)
    assert sorted(slowly) == expected


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(MEMBERS), groups(NUMBERS))
def test_integers_and_decimals_merge_to_the_unsplit_lines(members, made) -> None:
    check(made, members)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(MEMBERS), groups(st.one_of(NUMBERS, OTHERS)))
def test_any_values_merge_to_the_unsplit_lines(members, made) -> None:
    check(made, members)


def test_integers_and_decimals_are_merged_by_vector_operations(monkeypatch) -> None:
    """W3's shape (decimal prices, not negative) never reaches the line-by-line merge;
    one negative price sends its group, and only it, there."""
    price = lambda text: ox.Literal(text, datatype=ox.NamedNode(XSD + "decimal"))  # noqa: E731
    members = MEMBERS[0]
    made = {(10_000, "acme"): [[price("12.5"), price("3")], [price("0.25")]],
            (10_000, "c7"): [[price("7.125")], [price("2.875"), price("1")]]}  # fmt: skip

    def refused(*_: object) -> None:
        raise AssertionError("merged line by line")

    with monkeypatch.context() as patched:
        patched.setattr(partial_states, "merged_lines", refused)
        check(made, members)
        made[(20_000, "bêta")] = [[price("-1")], [price("2")]]
        with pytest.raises(AssertionError, match="line by line"):
            check(made, members)
    check(made, members)
