"""A key's result rows as the stateful stage hands them to Spark (`EngineHost._frame`):
built from numpy arrays, the values and types `RESULT_DDL` names, worked out by hand for
two results of a one-key unit (`seq` counts them) and of a bucket (`Step.order` places
them, `seq` 0)."""

from __future__ import annotations

import pyoxigraph as ox

from sepia.lang import parse_query
from sepia.rdf.results import Result
from sepia.rdf.time import TimeKind
from sepia.runtime.spark.engine_protocol import Step
from sepia.runtime.spark.host import EngineHost, job_spec
from sepia.runtime.spark.units import units_of

QUERY = "SELECT ?x WHERE { ?x <http://e/p> ?y }"


def _frame(order: list[str] | None, partition: str | None):
    spec = job_spec(units_of([("q", parse_query(QUERY))]), None)
    results = [Result("q", 5, binding={"x": ox.NamedNode("http://e/a")}),
               Result("q", 7, binding={"x": ox.Literal("b")})]  # fmt: skip
    step = Step({}, results, None, TimeKind.ABSTRACT, order=order, lines=["l1", "l2"])
    return EngineHost(spec)._frame(0, partition, step)


def test_a_one_key_units_rows_count_their_results():
    frame = _frame(None, None)
    assert frame.to_dict("list") == {
        "t": [5, 7], "query_index": [0, 0], "partition": [None, None], "seq": [0, 1],
        "query": ["q", "q"], "line": ["l1", "l2"],
    }  # fmt: skip
    assert [str(t) for t in frame.dtypes] == ["int64", "int32", "object", "int32", "object",
                                              "object"]  # fmt: skip


def test_a_buckets_rows_are_placed_by_their_order():
    frame = _frame(["o2", "o1"], "0/4")
    assert frame["partition"].tolist() == ["o2", "o1"]
    assert frame["seq"].tolist() == [0, 0]
