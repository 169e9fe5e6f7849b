"""A key's results rendered as one batch (`result_lines.jsonl_lines`, `ordered_lines` with
their order heads in one pass) give the very text
`jsonl_line` gives each alone, on every shape of result: times of both kinds, intervals,
match labels, escapes and non-ASCII text, blank nodes, language tags, an empty binding, and
the CONSTRUCT and ASK results it hands to `jsonl_line`; pieces met again (a term, a time, a
name) come from its cache with the same text."""

from __future__ import annotations

import json

import pyoxigraph as ox
import pytest

from sepia.engine.query.partition import result_order
from sepia.rdf.results import Result, jsonl_line
from sepia.rdf.time import TimeKind
from sepia.runtime.spark.incremental_engine import FLUSHED, _orders
from sepia.runtime.spark.result_lines import dated_texts, jsonl_lines, ordered_lines

from .ops.test_jsonl_lines import EX
from .ops.test_jsonl_lines import RESULTS as JSONL_RESULTS

RESULTS = [
    *JSONL_RESULTS,  # each shape of result (test_jsonl_lines), then the batch's own cases
    Result("q", 5, binding={"y": ox.Literal("line\u2028separator")}),
    Result("empty", 9, binding={}),
    Result("q", 5, binding={"a": ox.NamedNode(EX + "é"), "q": ox.Literal("q")}, interval=(5, 5)),
]


@pytest.mark.parametrize("kind", [TimeKind.ABSTRACT, TimeKind.DATETIME])
def test_a_batch_renders_each_result_as_jsonl_line_does(kind):
    assert jsonl_lines(RESULTS * 2, kind) == [jsonl_line(r, kind) for r in RESULTS * 2]


def test_a_line_by_hand():
    result = Result("seq", 60_000, binding={"v": ox.Literal("29")}, interval=(0, 60_000), match="2")
    assert jsonl_lines([result], TimeKind.DATETIME) == [
        '{"query": "seq", "t": "1970-01-01T00:01:00.000Z", "op": "+", '
        '"from": "1970-01-01T00:00:00.000Z", "to": "1970-01-01T00:01:00.000Z", '
        '"match": "2", "binding": {"v": "\\"29\\""}}'
    ]
    assert json.loads(jsonl_lines([result], TimeKind.ABSTRACT)[0])["t"] == 60_000


@pytest.mark.parametrize("kind", [TimeKind.ABSTRACT, TimeKind.DATETIME])
def test_heads_are_the_abstract_lines_up_to_the_match_or_binding(kind):
    heads, lines = ordered_lines(RESULTS * 2, kind)
    assert lines == [jsonl_line(r, kind) for r in RESULTS * 2]
    for head, result in zip(heads, RESULTS * 2, strict=True):
        whole = result_order(result)
        if result.binding is None:
            assert head == whole
        else:
            key = ', "match": ' if result.match is not None else ', "binding": {'
            assert whole.startswith(head) and head.endswith(key)
            assert key not in whole[: len(head) - len(key)].split('"op": ')[1]


def _tied(t: int) -> list[Result]:
    """Results of one query and time whose abstract lines share long prefixes: with and
    without an interval, a match or not, bounds of 1, 2 and 3 digits (text orders 100
    before 99), a negative bound, equal heads with different bindings, a repeat."""
    one, two = ox.Literal("1"), ox.NamedNode(EX + "b")
    return [
        Result("q", t, binding={"v": one}),
        Result("q", t, binding={"v": two}),
        Result("q", t, binding={"v": one}, match="m"),
        Result("q", t, binding={"v": one}, interval=(99, t)),
        Result("q", t, binding={"v": one}, interval=(100, t)),
        Result("q", t, binding={"v": one}, interval=(10, t)),
        Result("q", t, binding={"v": one}, interval=(-5, t)),
        Result("q", t, binding={"v": two}, interval=(99, t)),
        Result("q", t, binding={"v": two}, interval=(99, t), match="m"),
        Result("q", t, binding={"v": two}, interval=(99, t), match="a"),
        Result("q", t, binding={"v": one}, interval=(99, t)),
        Result("q", t, "-", binding={"v": one}),
        Result("q", t, boolean=True),
    ]


@pytest.mark.parametrize("kind", [TimeKind.ABSTRACT, TimeKind.DATETIME])
def test_a_steps_orders_then_lines_sort_as_instants_then_result_order(kind):
    """The sink sorts results of one time and query by (order, line): the same order as
    (instant, `result_order`), worked out on whole abstract lines."""
    made = [(n % 2, r) for n, r in enumerate([*_tied(1_000), *_tied(1_700_000_000_123)])]
    orders, lines = _orders(made, kind)
    assert lines == [jsonl_line(r, kind) for _, r in made]
    starts = [f"{at + FLUSHED:020d} " for at, _ in made]
    assert all(o.startswith(s) for o, s in zip(orders, starts, strict=True))
    rows = list(zip(orders, lines, [r.t for _, r in made], strict=True))
    got = [line for _, line, _ in sorted(rows, key=lambda row: (row[2], row[0], row[1]))]
    wanted = sorted(made, key=lambda m: (m[1].t, m[0], result_order(m[1])))
    assert got == [jsonl_line(r, kind) for _, r in wanted]


def test_dated_texts_are_format_times_own():
    """Times numpy writes (1970 to 2106) by hand; those outside are left to `format_time`,
    and the lines still hold its text."""
    inside = [0, 1_700_000_000_123, 951_782_400_999, (1 << 32) * 1000 - 1]
    outside = [-1, (1 << 32) * 1000, 7_258_118_400_000]
    results = [Result("q", t, binding={}) for t in [*inside, *outside]]
    assert dated_texts(results) == {
        0: '"1970-01-01T00:00:00.000Z"',
        1_700_000_000_123: '"2023-11-14T22:13:20.123Z"',
        951_782_400_999: '"2000-02-29T00:00:00.999Z"',
        (1 << 32) * 1000 - 1: '"2106-02-07T06:28:15.999Z"',
    }
    assert jsonl_lines(results, TimeKind.DATETIME) == [
        jsonl_line(r, TimeKind.DATETIME) for r in results
    ]
