"""A key's results rendered as one batch (`result_lines.jsonl_lines`, `rendered` for several
time kinds in one pass) give the very text
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
from sepia.runtime.spark.result_lines import jsonl_lines, rendered

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


def test_kinds_rendered_in_one_pass_are_each_kinds_lines():
    kinds = (TimeKind.DATETIME, TimeKind.ABSTRACT, TimeKind.DATETIME)
    assert rendered(RESULTS * 2, kinds) == [
        [jsonl_line(r, kind) for r in RESULTS * 2] for kind in kinds
    ]


@pytest.mark.parametrize("kind", [TimeKind.ABSTRACT, TimeKind.DATETIME])
def test_a_steps_orders_are_its_instants_then_result_order(kind):
    made = [(n - 3, result) for n, result in enumerate(RESULTS)]
    orders, lines = _orders(made, kind)
    assert orders == [f"{at + FLUSHED:020d} {result_order(r)}" for at, r in made]
    assert lines == [jsonl_line(r, kind) for _, r in made]
