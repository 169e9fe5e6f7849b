"""The journal writes a jsonl line as the host made it when its time is of the writer's
kind (`sinks.ResultJournal._write_jsonl`): that holds only if reading a line back into a
result and writing it again gives the very same text, checked here on every shape of
result, and if `dated` tells the kinds apart whatever the query's name."""

from __future__ import annotations

import json

import pyoxigraph as ox
import pytest

from sepia.io.writers import JsonlWriter
from sepia.rdf.results import Result, jsonl_line, result_from_json
from sepia.rdf.time import TimeKind
from sepia.runtime.spark.sinks import dated

EX = "http://example.org/"
TRIPLE = ox.Triple(ox.BlankNode("b1"), ox.NamedNode(EX + "p"), ox.Literal("x\ny", language="en"))
DECIMAL = ox.NamedNode("http://www.w3.org/2001/XMLSchema#decimal")
RESULTS = [
    Result("q", 5, binding={"a": ox.NamedNode(EX + "é"), "b": ox.Literal("1.5", datatype=DECIMAL)}),
    Result('odd ", "t": 1', 1_700_000_000_123, "-",
           binding={"z": ox.BlankNode("n0"), "y": ox.Literal('say "hi"\t')}),
    Result("c", 7, triples=(TRIPLE,), interval=(3, 7)),
    Result("ask", 0, boolean=False, match="m1"),
    Result("seq", 9, binding={"e": ox.Literal("日本", language="ja")}, interval=(1, 9), match="2"),
]  # fmt: skip


@pytest.mark.parametrize("kind", [TimeKind.ABSTRACT, TimeKind.DATETIME])
@pytest.mark.parametrize("result", RESULTS, ids=lambda r: r.query)
def test_a_line_read_back_and_written_again_is_the_same_text(result, kind, tmp_path):
    line = jsonl_line(result, kind)
    with (tmp_path / "out.jsonl").open("w", encoding="utf-8") as out:
        JsonlWriter(out, time_kind=kind).write(result_from_json(json.loads(line)))
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8") == line + "\n"
    assert dated(line) is (kind is TimeKind.DATETIME)
