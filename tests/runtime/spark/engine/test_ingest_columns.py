"""A live source's ingest rows routed by columns (`ingest_columns`, `job.route` where every
unit is on one key): the key is handed the very elements the row-by-row fold gives, their
terms canonical, whatever way Spark's Arrow batches cut them."""

from __future__ import annotations

import io
from itertools import pairwise

import pyarrow as pa
import pyoxigraph as ox
import pytest

from sepia.lang import parse_query
from sepia.rdf.terms import canonical
from sepia.runtime.spark.element_batches import unpack
from sepia.runtime.spark.elements import (
    CLOCK_GRAPH,
    END_GRAPH,
    PACKED_TERMS,
    element_rows,
    to_element,
)
from sepia.runtime.spark.host import job_spec
from sepia.runtime.spark.ingest import IngestOptions, source_batches
from sepia.runtime.spark.ingest_columns import CanonicalTexts, aligned, plain, starts
from sepia.runtime.spark.job import ROUTED_SCHEMA, route
from sepia.runtime.spark.units import units_of

A, B = "http://e/a", "http://e/b"
DOCUMENT = """\
@prefix e: <http://e/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
e:g1 { e:s1 e:p "007"^^xsd:int . e:s1 e:q _:b1 . e:s1 e:r "x\\ny"@EN . }
e:g1 prov:generatedAtTime 1 .
e:g2 { e:s2 e:p "102.10"^^xsd:decimal . }
e:g2 prov:generatedAtTime 2 .
e:g3 { e:s3 e:p e:o3 . e:s3 e:p e:o4 . e:s3 e:p "plain" . e:s3 e:p "5"^^xsd:integer . }
e:g3 prov:generatedAtTime 3 .
"""
QUERY = """
PREFIX e: <http://e/>
REGISTER RSTREAM <http://e/out> AS SELECT ?s ?o
FROM NAMED WINDOW <http://e/w> ON <http://e/a> [RANGE PT10S STEP PT10S]
WHERE { WINDOW <http://e/w> { ?s e:p ?o } }
"""


def ingest(stream: str, document: str = DOCUMENT) -> pa.Table:
    read = source_batches(stream, io.BytesIO(document.encode()), "doc.trig", "trig",
                          IngestOptions())  # fmt: skip
    return pa.Table.from_batches(list(read))


def cut(table: pa.Table, *at: int) -> list[pa.RecordBatch]:
    """The table as Arrow batches cut at the rows `at` (inside elements, too)."""
    bounds = [0, *at, table.num_rows]
    return [b for a, z in pairwise(bounds) for b in table.slice(a, z - a).to_batches()]


def elements_of(rows: list[tuple]) -> list:
    """The elements a key is handed, in order, each triple's terms canonical."""
    found, _, _ = unpack(rows)
    out = []
    for row in sorted(found, key=lambda r: (r[0], r[5], r[2])):
        element = to_element(row)
        triples = sorted(str(ox.Triple(*map(canonical, triple))) for triple in element.triples)
        out.append((row[:7], element.graph, element.start, element.end, triples))
    return out


def routed(batches: list[pa.RecordBatch], spec) -> list[tuple]:
    out = pa.Table.from_batches(list(route(iter(batches), spec)), schema=ROUTED_SCHEMA)
    return [tuple(r.values())[2:] for r in out.to_pylist()]


@pytest.fixture
def spec():
    return job_spec(units_of([("q", parse_query(QUERY))]), None, streams=(A, B))


@pytest.mark.parametrize("at", [(), (1,), (2, 5), (1, 2, 3, 4, 5, 6, 7)])
def test_columns_hand_the_key_the_elements_the_row_fold_gives(spec, at):
    table = pa.concat_tables([ingest(A), ingest(B)])
    batches = cut(table, *at)
    got = routed(batches, spec)
    assert {row[3] for row in got} == {PACKED_TERMS}
    folded = [row for row in element_rows(batches, "stop") if row[0] == A]  # the unit's
    assert elements_of(got) == elements_of(folded)
    assert len(elements_of(got)) == 3


def test_terms_travel_in_canonical_form(spec):
    got = routed(cut(ingest(A)), spec)
    texts = {str(row[7]) for row in unpack(got)[0]}
    joined = "\x1f".join(sorted(texts))
    assert '"7"^^<http://www.w3.org/2001/XMLSchema#integer>' in joined
    assert '"102.1"^^<http://www.w3.org/2001/XMLSchema#decimal>' in joined
    assert '"x\\ny"@en' in joined and "_:b1" in joined


def test_blocks_end_where_elements_end():
    table = ingest(A)  # rows: 3, 1 and 4 triples
    assert starts(table).tolist() == [True, False, False, True, True, False, False, False]
    blocks = list(aligned(cut(table, 1, 4, 6)))
    assert [b.num_rows for b in blocks] == [3, 1, 4]


def test_error_end_and_clock_rows_are_not_plain():
    table = ingest(A)
    assert plain(table)
    for graph in (END_GRAPH, CLOCK_GRAPH):
        names = pa.array([graph] * table.num_rows)
        assert not plain(table.set_column(3, "element", names))
    bad = ingest(A, DOCUMENT + "e:g4 { e:s4 e:p e:o4 }\ne:g4 prov:generatedAtTime 0 .\n")
    assert not plain(bad)


def test_a_block_with_an_end_marker_is_folded_row_by_row(spec):
    marker = pa.Table.from_pylist([{
        "stream": A, "file": "end", "seq": 0, "element": END_GRAPH, "start": 9, "end": 9,
        "kind": "abstract", "s": None, "p": None, "o": None, "line": None, "error": None,
    }], schema=ingest(A).schema)  # fmt: skip
    got = routed([*cut(ingest(A)), *marker.to_batches()], spec)
    assert [row[3] for row in got][-1] == END_GRAPH
    assert {row[3] for row in got[:-1]} == {PACKED_TERMS}
    assert len(elements_of(got[:-1])) == 3


def test_canonical_texts_keep_iris_and_blank_nodes_as_they_are():
    texts = CanonicalTexts()
    assert texts("<http://e/x>") == "<http://e/x>"
    assert texts("_:b") == "_:b"
    assert texts('"01"^^<http://www.w3.org/2001/XMLSchema#integer>') == (
        '"1"^^<http://www.w3.org/2001/XMLSchema#integer>'
    )
