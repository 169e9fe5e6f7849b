"""A MATCH's rows joined with a nested path's rows (CQELS-CEP: ``?s (^:beg/[:means
:subway]/:end)+ :c``) through the path's kept hash table: hand-derived cases for a table
that must be made again when the path's rows change (a window's new contents, a background
graph's next version), for the order of the joined rows (the results at one instant come
out in it), and a run over a time-varying map checked against the reference evaluator."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pyoxigraph as ox

from sepia.algebra import path as pa
from sepia.engine.graph import TripleIndex
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.scan import Constant, Slot
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.runtime.local import run
from sepia.semantics import evaluate

EX = "http://example.org/"
C = 99
WIDTH = 2
"""Slot 0: ?s, slot 1: ?x (a MATCH's own variable)."""


@dataclass
class Reads:
    """A context: the matches of MATCH 0 and the path's rows, both set by the test (as
    ``paths.PathRelations`` gives a new list when the graphs it reads changed)."""

    rows: list[tuple]
    reached: list[tuple]
    width: int = WIDTH
    graphs: dict = field(default_factory=dict)

    def graph(self, ref: po.GraphRef) -> TripleIndex:
        return TripleIndex()

    def matches(self, number: int) -> list[tuple]:
        return self.rows

    def path(self, node: po.NestedPath) -> list[tuple]:
        return self.reached


def _plan() -> po.MultiJoin:
    """MATCH joined with ``?s path :c``, as the planner makes it."""
    path = po.NestedPath(
        (po.BackgroundGraph(None),), Slot(0), pa.Link(ox.NamedNode(EX + "p")), Constant(C)
    )
    inputs = (po.Matches(0), path)
    return po.MultiJoin(inputs, tuple(po.certain(p) for p in inputs))


def test_new_path_rows_are_joined_not_the_kept_ones():
    """The path reaches c from 1 and 2, then (its graph changed) from 2 and 3: a match at
    subject 1 joins only the first time, one at subject 3 only the second."""
    plan = _plan()
    reads = Reads([(1, 10), (3, 30)], [(1, None), (2, None)])
    assert po.run(plan, reads) == [(1, 10)]
    reads.reached = [(2, None), (3, None)]
    assert po.run(plan, reads) == [(3, 30)]
    reads.rows = [(1, 11), (2, 21)]
    assert po.run(plan, reads) == [(2, 21)]


def test_the_same_rows_are_read_through_the_kept_table():
    """While the context gives the very same list, its table is made once."""
    plan = _plan()
    node = plan.inputs[1]
    assert isinstance(node, po.NestedPath)
    reads = Reads([(1, 10)], [(1, None), (2, None)])
    assert po.run(plan, reads) == [(1, 10)]
    kept = node.tables[(0,)][1]
    reads.rows = [(2, 20)]
    assert po.run(plan, reads) == [(2, 20)]
    assert node.tables[(0,)][1] is kept


def test_rows_come_out_in_the_order_of_the_larger_side():
    """More path rows than matches: in the path's order (c's reach listed 3, 2, 1), each
    subject's matches in theirs; no more: in the matches' order."""
    plan = _plan()
    reads = Reads([(1, 10), (2, 20), (1, 11)], [(3, None), (2, None), (1, None), (4, None)])
    assert po.run(plan, reads) == [(2, 20), (1, 10), (1, 11)]
    reads.reached = [(3, None), (2, None), (1, None)]
    assert po.run(plan, reads) == [(1, 10), (2, 20), (1, 11)]


MAP = """@prefix : <http://example.org/> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix prov: <http://www.w3.org/ns/prov#> .
:v1 rdf:type :subway .
:map1 { :k1 :beg :a ; :end :c ; :means :subway . }
:map1 prov:generatedAtTime 0 .
:map2 { :k2 :beg :b ; :end :c ; :means :subway . }
:map2 prov:generatedAtTime 5 .
"""

QUERY = f"""PREFIX : <{EX}>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
SELECT ?s
FROM NAMED WINDOW :W ON :s [RANGE 3]
WHERE {{
  WINDOW :W {{ SEQ({{ ?v :delayAt ?s }}, {{ ?v :delayAt ?s }}) }}
  ?v rdf:type :subway .
  ?s (^:beg/[:means :subway]/:end)+ :c .
}}"""


def test_a_path_over_a_changing_map_reaches_other_stations():
    """Until 5 the map's subway line runs a to c, from 5 b to c (the versions replace each
    other). Two delays of v1 at a (1, 2) and at b (3, 4) complete at 2 and 4: only a
    reaches c then. Two more at a (6, 7) and at b (8, 9) complete at 7 and 9: only b."""
    background = ox.Store()
    background.load(MAP.encode(), format=ox.RdfFormat.TRIG)
    stream = EX + "s"
    delay = lambda t, at: StreamElement(  # noqa: E731
        stream, f"{EX}e{t}", t, t,
        (ox.Triple(ox.NamedNode(EX + "v1"), ox.NamedNode(EX + "delayAt"), ox.NamedNode(EX + at)),),
    )
    elements = [delay(t, at) for t, at in [(1, "a"), (2, "a"), (3, "b"), (4, "b"),
                                            (6, "a"), (7, "a"), (8, "b"), (9, "b")]]
    query = parse_query(QUERY)
    got = list(run([("q", query)], {stream: elements}, background))
    assert Counter(got) == Counter(evaluate(query, {stream: elements}, background, name="q"))
    assert sorted((r.t, r.values["s"].value.removeprefix(EX)) for r in got) == [
        (2, "a"), (9, "b"),
    ]
