"""The Spark job's engine step on the columnar core: a key's due element rows become one
batch of columns (`columns.element_columns`) pushed at once, with the answer of a local run
that pushes element by element, whether the key's session lives on or is restored from its
state rows at every step (a restarted job); queries that make blank nodes, whose labels
follow the dictionary's ids, keep the element path."""

from __future__ import annotations

import numpy as np
import pyoxigraph as ox
import pytest

from sepia.engine import plan
from sepia.engine.codec import Codec
from sepia.engine.columnar import ColumnBatch
from sepia.engine.hosts.session import Session
from sepia.lang import parse_query
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.results import jsonl_line
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind
from sepia.runtime.local import run
from sepia.runtime.spark.columns import element_columns, feed_of, labels_by_ids
from sepia.runtime.spark.units import units_of

from ..evaluations import evaluations
from .protocol import drive, element_row

EX = "http://example.org/"
S1, S2 = EX + "s1", EX + "s2"


def _node(name: str) -> ox.NamedNode:
    return ox.NamedNode(EX + name)


def test_element_rows_as_columns_are_the_elements_columns() -> None:
    """Several triples, none, two streams, a blank node and a literal whose text holds a
    line break (written escaped: still one triple per line)."""
    p = _node("p")
    elements = [
        StreamElement(S1, EX + "g0", 1, 1, (ox.Triple(_node("a"), p, ox.Literal("x\ny")),
                                            ox.Triple(_node("a"), p, ox.BlankNode("b1")))),
        StreamElement(S2, EX + "g1", 2, 2, ()),
        StreamElement(S1, EX + "g2", 2, 2, (ox.Triple(ox.BlankNode("b1"), p, ox.Literal(7)),)),
        StreamElement(S2, EX + "g3", 5, 5, (ox.Triple(_node("c"), p, _node("a")),)),
    ]  # fmt: skip
    codec = Codec()
    got = element_columns([element_row(e, n) for n, e in enumerate(elements)], codec)
    want = ColumnBatch.from_elements(elements, codec)
    assert got.streams == want.streams == (S1, S2)
    for column in ("times", "stream", "element", "s", "p", "o"):
        assert np.array_equal(getattr(got, column), getattr(want, column)), column
    assert list(got.times) == [1, 2, 2, 5] and list(got.element) == [0, 0, 2, 3]
    assert codec.decode(int(got.o[0])) == ox.Literal("x\ny")
    assert got.o[1] == got.s[2]  # the same blank node, as a reader of the rows keeps it
    assert got.kind is TimeKind.ABSTRACT


WINDOW = """PREFIX : <http://example.org/>
{head} FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 5] WHERE {{ WINDOW :w {{ ?x :value ?v }} }}"""
SELECT = WINDOW.format(head="SELECT ?x ?v")
CONSTRUCT = WINDOW.format(head="CONSTRUCT { _:r :of ?x ; :is ?v }")


def _elements(count: int) -> list[StreamElement]:
    """Element i at time i // 3: a sensor of five and its reading i."""
    return [
        StreamElement(EX + "s", f"{EX}g{i}", i // 3, i // 3,
                      (ox.Triple(_node(f"sensor{i % 5}"), _node("value"), ox.Literal(i)),))
        for i in range(count)
    ]  # fmt: skip


@pytest.fixture
def pushes(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Calls of `Session.push` (an element) and `Session.push_columns` (a batch), with the
    columnar core taking every query it covers."""
    monkeypatch.setenv("SEPIA_ENGINE_PATH", "columnar-always")
    calls = {"push": 0, "push_columns": 0}
    for name in calls:
        method = getattr(Session, name)

        def counted(self, *args, _method=method, _name=name):
            calls[_name] += 1
            return _method(self, *args)

        monkeypatch.setattr(Session, name, counted)
    return calls


@pytest.mark.parametrize("restored", [False, True])
def test_a_columnar_key_steps_each_batch_as_columns(pushes: dict[str, int], restored: bool):
    streams = {EX + "s": _elements(300)}
    local = [jsonl_line(r, TimeKind.ABSTRACT) for r in run([("q", SELECT)], streams)]
    pushes.update(push=0, push_columns=0)  # the local run pushed element by element
    queries = units_of([("q", parse_query(SELECT))])[0].queries
    lines = drive(queries, streams, batch_size=40, forget=restored)
    assert evaluations(lines) == evaluations(local)
    assert len(local) > 100
    assert pushes["push"] == 0
    assert 8 <= pushes["push_columns"] <= 300 // 40 + 2  # one per step with due elements


def test_a_query_that_makes_blank_nodes_steps_by_element(pushes: dict[str, int]) -> None:
    assert labels_by_ids(parse_query(CONSTRUCT)) and not labels_by_ids(parse_query(SELECT))
    streams = {EX + "s": _elements(60)}
    local = [jsonl_line(r, TimeKind.ABSTRACT) for r in run([("q", CONSTRUCT)], streams)]
    pushes.update(push=0, push_columns=0)
    queries = units_of([("q", parse_query(CONSTRUCT))])[0].queries
    assert drive(queries, streams, batch_size=20) == local  # blank labels too
    assert pushes["push_columns"] == 0 and pushes["push"] == 60


PARTITIONED = """PREFIX : <http://example.org/>
SELECT ?c ?p1 ?p2 FROM STREAM S1 <http://example.org/s> PARTITION BY ?c
WHERE { SEQ(A, B) DEFINE GPM A ON S1 { ?c :price ?p1 } DEFINE GPM B ON S1 { ?c :price ?p2 } }"""


@pytest.mark.parametrize(
    ("text", "path", "said"),
    [
        (SELECT, "columnar-always", "as one batch of columns"),
        (PARTITIONED, "columnar-always", "values on the columnar core: a bucket's due"),
        (PARTITIONED, "rows", "values on the row engine: element by element"),
        (PARTITIONED.replace("SEQ(A, B)", "SEQ(A, !B)"), "columnar", "on the row engine"),
        (PARTITIONED.replace(" PARTITION BY ?c", ""), "columnar", "as one batch of columns"),
        (PARTITIONED.replace(" PARTITION BY ?c", "").replace("SEQ(A, B)", "SEQ(A | B)"),
         "columnar", "element by element, on the row engine"),
        (SELECT, "rows", "element by element, on the row engine"),
        (CONSTRUCT, "columnar-always", "labelled by the dictionary's ids"),
    ],
)
def test_explain_says_how_the_job_feeds_a_query(monkeypatch, text: str, path: str, said: str):
    monkeypatch.setenv("SEPIA_ENGINE_PATH", path)
    assert said in feed_of(plan(parse_query(text), Dictionary()))
