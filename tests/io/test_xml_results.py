"""SPARQL 1.1 Query Results XML (`--format xml`): every W3C results file of the SPARQL
1.1 test suites, read by pyoxigraph's own parser, written by Sepia, and read back by that
parser, is the same result; the evaluation is named in a `<link>` of the head."""

from __future__ import annotations

import io
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pyoxigraph as ox
import pytest

from sepia.io.writers import SPARQL_RESULTS, writer_for
from sepia.rdf.results import Result

sys.path.insert(0, str(Path(__file__).parents[1] / "conformance"))
from syntax_manifest import W3C

SRX = sorted(W3C.rglob("*.srx")) if W3C.is_dir() else []
NS = {"r": SPARQL_RESULTS}


def parse(data: bytes):
    return ox.parse_query_results(data, format=ox.QueryResultsFormat.XML)


def as_results(parsed) -> list[Result]:
    if isinstance(parsed, ox.QueryBoolean):
        return [Result("q", 8, boolean=bool(parsed))]
    names = [v.value for v in parsed.variables]
    return [Result("q", 8, binding=dict(zip(names, solution, strict=True)))
            for solution in parsed]  # fmt: skip


def written(results: list[Result], variables: list[str] | None = None) -> str:
    out = io.StringIO()
    writer = writer_for("xml", out, variables=variables)
    for result in results:
        writer.write(result)
    writer.close()
    return out.getvalue()


@pytest.mark.skipif(not SRX, reason="W3C suites not found (set SEPIA_SHARED)")
def test_every_w3c_results_file_round_trips_through_the_writer():
    checked = 0
    for path in SRX:
        try:
            expected = parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue  # a results file the parser itself refuses
        boolean = isinstance(expected, ox.QueryBoolean)
        variables = None if boolean else [v.value for v in expected.variables]
        results = as_results(expected)
        if not results:  # no solution: nothing to write in a continuous run
            continue
        documents = written(results, variables).splitlines()
        assert len(documents) == 1, path
        again = parse(documents[0].encode())
        if boolean:
            assert bool(again) == bool(results[0].boolean), path
        else:
            assert [v.value for v in again.variables] == variables, path
            got = Counter(Result("q", 8, binding=dict(zip(variables, s, strict=True)))
                          for s in again)  # fmt: skip
            assert got == Counter(results), path
        checked += 1
    assert checked > 300  # 433 files in the suites, some empty or boolean


def test_a_document_per_evaluation_named_in_its_head():
    a = ox.NamedNode("http://example.org/a")
    rows = [Result("q1", 16, binding={"s": a}, interval=(10, 16)),
            Result("q1", 16, binding={"s": a}), Result("q3", 8, boolean=True)]
    first, second = written(rows).splitlines()
    head = ET.fromstring(first).find("r:head", NS)
    links = [link.get("href") for link in head.findall("r:link", NS)]
    assert links == ["urn:sepia:evaluation?query=q1&t=16&op=%2B",
                     "urn:sepia:row?row=1&from=10&to=16"]
    assert [v.get("name") for v in head.findall("r:variable", NS)] == ["s"]
    assert len(list(parse(first.encode()))) == 2
    assert bool(parse(second.encode())) is True


def test_a_literal_with_line_breaks_stays_on_its_line():
    value = ox.Literal("two\nlines\r\nhere", language="en")
    (document,) = written([Result("q", 1, binding={"v": value})]).splitlines()
    (solution,) = parse(document.encode())
    assert solution["v"] == value


def test_construct_results_are_refused_with_what_to_use():
    triple = ox.Triple(ox.NamedNode("http://e/a"), ox.NamedNode("http://e/p"),
                       ox.NamedNode("http://e/o"))
    with pytest.raises(ValueError, match="use trig"):
        written([Result("q", 1, triples=(triple,))])
