"""No reference cycle keeps a batch alive after its step (``runtime.local.collector``): a
replay runs Python's cyclic collector rarely, so every batch a cycle held stayed until a
full collection and a run's memory grew with its input (a 1,000,000-element W4 v-shape
run peaked at 408 MiB against 196 once the sequences' step made no cycle)."""

from __future__ import annotations

import gc

import pyoxigraph as ox
import pytest

from sepia.engine.columnar import ColumnBatch
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.runtime.local import Session

from ..generators import EX, S1, S2
from ..support import background, engine_path

SEQUENCE = f"""PREFIX : <{EX}>
SELECT ?x ?y ?z FROM STREAM S1 :s1 PARTITION BY ?x
WHERE {{ SEQ(A , B) DEFINE GPM A ON S1 {{ ?x :p ?y }} DEFINE GPM B ON S1 {{ ?x :q ?z }} }}"""
KLEENE = f"""PREFIX : <{EX}>
SELECT ?x ?y ?z WITHIN 10 FROM STREAM S1 :s1 PARTITION BY ?x
WHERE {{ SEQ(A , B+)
  DEFINE GPM A ON S1 {{ ?x :p ?y }}
  DEFINE GPM B ON S1 {{ ?x :q ?z }} }}"""
WINDOWS = f"""PREFIX : <{EX}>
REGISTER RSTREAM :out AS
SELECT ?x ?y ?z
FROM NAMED WINDOW :w1 ON :s1 [RANGE 10 STEP 5]
FROM NAMED WINDOW :w2 ON :s2 [RANGE 5 STEP 5]
WHERE {{ WINDOW :w1 {{ ?x :p ?y }} WINDOW :w2 {{ ?x :q ?z }} }}"""
GROUPS = f"""PREFIX : <{EX}>
REGISTER RSTREAM :out AS
SELECT ?x (SUM(?y) AS ?s)
FROM NAMED WINDOW :w1 ON :s1 [RANGE 4 STEP 2]
WHERE {{ WINDOW :w1 {{ ?x :p ?y }} }} GROUP BY ?x"""


def _element(n: int, two_streams: bool) -> StreamElement:
    """Element n at time n + 1: :q and :p in turn, on :a and :b in turn, the object n; on
    :s1, or every third on :s2 (``two_streams``)."""
    p = EX + ("p" if n % 2 else "q")
    triple = ox.Triple(ox.NamedNode(EX + "ab"[n // 2 % 2]), ox.NamedNode(p), ox.Literal(
        str(n), datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")))
    stream = S2 if two_streams and n % 3 == 2 else S1
    return StreamElement(stream, f"_:g{n}", n + 1, n + 1, (triple,))


@pytest.mark.parametrize("text", [SEQUENCE, KLEENE, WINDOWS, GROUPS],
                         ids=["sequence", "kleene", "windows", "groups"])
def test_a_step_leaves_no_cycle_holding_its_batch(text):
    """With the cyclic collector off, 300 one-element batches leave only the few batches
    the state still needs alive (a window of 10 instants at most): the rest were freed by
    reference counting."""
    with engine_path("columnar-always"):
        session = Session(background())
        session.register(parse_query(text), "q")
    assert session.columnar
    gc.collect()
    gc.disable()
    try:
        made = 0
        for n in range(300):
            batch = ColumnBatch.from_elements([_element(n, text is WINDOWS)], session.dictionary)
            made += len(session.push_columns(batch))
        alive = sum(1 for o in gc.get_objects() if isinstance(o, ColumnBatch))
    finally:
        gc.enable()
    assert made > 0
    assert alive <= 12
