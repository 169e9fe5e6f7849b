"""The route stage leaves out the triples no key reads (`job.read_predicates`): where every
unit is one query stepped as columns on one key or on buckets on the columnar core, the
predicates its plan scans; else (a PARTITION BY query on one key, a variable predicate,
the reference adapter) every triple. The
answers stay the local engine's: the protocol tests' rows drop the same triples
(`protocol.element_row`), and the job's own runs are the example tests'."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from sepia.engine.hosts.engine_path import engine_path
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.runtime.spark.elements import TermTexts
from sepia.runtime.spark.host import job_spec
from sepia.runtime.spark.job import read_predicates
from sepia.runtime.spark.units import units_of

EX = "http://e/"
S1, S2 = EX + "s1", EX + "s2"
SEQUENCE = f"""PREFIX : <{EX}>
SELECT ?p ?v1 ?v2 WITHIN 30 MINUTES
FROM STREAM S1 <{S1}> FROM STREAM S2 <{S2}>
WHERE {{
  SEQ(A, B)
  DEFINE GPM A ON S1 {{ ?a :observed ?p . ?a :value ?v1 . FILTER(?v1 > 3) }}
  DEFINE GPM B ON S2 {{ ?b :observed ?p . ?b :value ?v2 }}
}}"""
WINDOW = f"""PREFIX : <{EX}>
SELECT ?x ?y FROM NAMED WINDOW :w ON <{S1}> [RANGE 10 STEP 5]
WHERE {{ WINDOW :w {{ ?x ?q ?y }} }}"""


def spec_of(text: str, engine: str = "incremental", buckets: int = 1):
    units = units_of([("q", parse_query(text))])
    return job_spec(units, None, engine=engine, streams=(S1, S2), buckets=buckets)


@pytest.mark.skipif(engine_path() == "rows", reason="keys on the row engine read every triple")
def test_a_sequence_on_one_key_reads_the_predicates_its_patterns_name():
    assert read_predicates(spec_of(SEQUENCE)) == {EX + "observed", EX + "value"}


@pytest.mark.skipif(engine_path() == "rows", reason="keys on the row engine read every triple")
def test_buckets_on_the_columnar_core_read_the_predicates_their_patterns_name():
    partitioned = SEQUENCE.replace("WHERE {", "PARTITION BY ?p\nWHERE {", 1)
    assert read_predicates(spec_of(partitioned, buckets=4)) == {EX + "observed", EX + "value"}


def test_every_triple_is_read_where_a_key_may_read_it():
    assert read_predicates(spec_of(WINDOW)) is None  # a variable predicate
    assert read_predicates(spec_of(SEQUENCE, engine="reference")) is None
    partitioned = SEQUENCE.replace("WHERE {", "PARTITION BY ?p\nWHERE {", 1)
    assert read_predicates(spec_of(partitioned, buckets=1)) is None  # one key: not asked


def test_a_row_keeps_the_triples_of_the_predicates_read_only():
    def triple(s: str, p: str, o: ox.Literal | ox.NamedNode) -> ox.Triple:
        return ox.Triple(ox.NamedNode(EX + s), ox.NamedNode(EX + p), o)

    five = ox.Literal("05", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer"))
    element = StreamElement(S1, EX + "g", 1, 1, (
        triple("a", "type", ox.NamedNode(EX + "Obs")),
        triple("a", "observed", ox.NamedNode(EX + "speed")),
        triple("a", "value", five), triple("a", "by", ox.NamedNode(EX + "sensor")),
    ))  # fmt: skip
    texts = TermTexts(frozenset({EX + "observed", EX + "value"}))
    assert str(texts("f", 0, element)[7]).split("\x1f") == [
        f"<{EX}a>", f"<{EX}observed>", f"<{EX}speed>",
        f"<{EX}a>", f"<{EX}value>", '"5"^^<http://www.w3.org/2001/XMLSchema#integer>',
    ]  # fmt: skip
    assert str(TermTexts(frozenset({EX + "other"}))("f", 0, element)[7]) == ""
    assert str(TermTexts()("f", 0, element)[7]).count("\x1f") == 11
