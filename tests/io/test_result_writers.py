"""Result writers (io.md "Results"): jsonl exact strings; the others parse back."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from sepia.io.streams import read_stream
from sepia.io.writers import WRITERS, writer_for
from sepia.rdf.results import Result, read_results_jsonl
from sepia.rdf.time import TimeKind

XSD = "http://www.w3.org/2001/XMLSchema#"
M = ox.NamedNode("http://example.org/m")
A1 = ox.NamedNode("http://example.org/a1")
ONE = ox.Literal("1", datatype=ox.NamedNode(XSD + "integer"))
TRIPLE = ox.Triple(ox.NamedNode("http://e/a"), ox.NamedNode("http://e/p"), ONE)

# the four lines of io.md, as results
IO_MD_RESULTS = [
    Result("q1", 16, "+", binding={"s": M}),
    Result("q1", 16, "+", binding={"v": A1}, interval=(10, 16)),
    Result("q2", 8, "+", triples=(TRIPLE,)),
    Result("q3", 8, "+", boolean=True),
]
IO_MD_LINES = [
    '{"query": "q1", "t": 16, "op": "+", "binding": {"s": "<http://example.org/m>"}}',
    '{"query": "q1", "t": 16, "op": "+", "from": 10, "to": 16, '
    '"binding": {"v": "<http://example.org/a1>"}}',
    '{"query": "q2", "t": 8, "op": "+", "triples": ["<http://e/a> <http://e/p> '
    '\\"1\\"^^<http://www.w3.org/2001/XMLSchema#integer> ."]}',
    '{"query": "q3", "t": 8, "op": "+", "boolean": true}',
]


def written(fmt: str, results: list[Result], **options) -> str:
    out = io.StringIO()
    writer = writer_for(fmt, out, **options)
    for result in results:
        writer.write(result)
    writer.close()
    return out.getvalue()


def test_jsonl_is_exactly_the_contract_of_io_md(tmp_path: Path) -> None:
    text = written("jsonl", IO_MD_RESULTS)
    assert text.splitlines() == IO_MD_LINES
    path = tmp_path / "r.jsonl"
    path.write_text(text)
    assert read_results_jsonl(path) == IO_MD_RESULTS


def test_jsonl_match_dstream_unbound_and_datetime(tmp_path: Path) -> None:
    results = [
        Result("k", 1704067200000, "-", binding={"b": M, "a": A1}, match="m7",
               interval=(1704067199000, 1704067200000)),
    ]
    text = written("jsonl", results, time_kind=TimeKind.DATETIME)
    assert text == (
        '{"query": "k", "t": "2024-01-01T00:00:00.000Z", "op": "-", '
        '"from": "2023-12-31T23:59:59.000Z", "to": "2024-01-01T00:00:00.000Z", "match": "m7", '
        '"binding": {"a": "<http://example.org/a1>", "b": "<http://example.org/m>"}}\n'
    )
    path = tmp_path / "r.jsonl"
    path.write_text(text)
    assert read_results_jsonl(path) == results


def test_result_equality_ignores_binding_order_and_rejects_bad_shapes() -> None:
    one = Result("q", 1, binding={"a": M, "b": A1})
    assert one == Result("q", 1, binding={"b": A1, "a": M, "c": None})  # None is unbound
    assert len({one, Result("q", 1, binding=(("b", A1), ("a", M)))}) == 1
    assert one.values == {"a": M, "b": A1}
    with pytest.raises(ValueError):
        Result("q", 1)
    with pytest.raises(ValueError):
        Result("q", 1, binding={}, boolean=True)
    with pytest.raises(ValueError):
        Result("q", 1, "*", boolean=True)  # type: ignore[arg-type]


def test_bad_jsonl_line_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(IO_MD_LINES[0] + "\n" + '{"query": "q1", "t": 16}\n')
    with pytest.raises(ValueError, match=r"r.jsonl:2: not a result line"):
        read_results_jsonl(path)


SELECTS = [
    Result("q1", 4, "+", binding={"s": M, "o": ox.Literal("a, \"b\"\nc", language="en")}),
    Result("q1", 4, "+", binding={"s": A1}),
    Result("q1", 6, "-", binding={"s": M, "o": ONE}, interval=(2, 6), match="x1"),
]


def test_sparql_json_one_document_per_evaluation_parses_back() -> None:
    lines = written("json", SELECTS, variables=["s", "o"]).splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first["sepia"] == {"query": "q1", "t": 4, "op": "+"}
    assert second["sepia"] == {"query": "q1", "t": 6, "op": "-",
                               "rows": [{"from": 2, "to": 6, "match": "x1"}]}
    solutions = ox.parse_query_results(lines[0], format=ox.QueryResultsFormat.JSON)
    assert [v.value for v in solutions.variables] == ["s", "o"]
    rows = [(s["s"], s["o"]) for s in solutions]
    assert rows == [(M, ox.Literal("a, \"b\"\nc", language="en")), (A1, None)]
    (row,) = ox.parse_query_results(lines[1], format=ox.QueryResultsFormat.JSON)
    assert row["o"] == ONE
    ask = written("json", [IO_MD_RESULTS[3]])
    assert ox.parse_query_results(ask, format=ox.QueryResultsFormat.JSON)


def test_csv_follows_the_w3c_format_and_parses_back() -> None:
    text = written("csv", SELECTS, variables=["s", "o"])
    assert text.startswith("query,t,op,from,to,match,s,o\r\n")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[1:] == [
        ["q1", "4", "+", "", "", "", "http://example.org/m", 'a, "b"\nc'],
        ["q1", "4", "+", "", "", "", "http://example.org/a1", ""],
        ["q1", "6", "-", "2", "6", "x1", "http://example.org/m", "1"],
    ]


def test_tsv_follows_the_w3c_format_and_parses_back() -> None:
    text = written("tsv", SELECTS, variables=["s", "o"])
    assert text.splitlines()[0] == "?query\t?t\t?op\t?from\t?to\t?match\t?s\t?o"
    solutions = ox.parse_query_results(text, format=ox.QueryResultsFormat.TSV)
    rows = [[s[v] for v in solutions.variables] for s in solutions]
    q1, plus, minus = ox.Literal("q1"), ox.Literal("+"), ox.Literal("-")
    n = [ox.Literal(str(i), datatype=ox.NamedNode(XSD + "integer")) for i in range(7)]
    assert rows == [
        [q1, n[4], plus, None, None, None, M, ox.Literal("a, \"b\"\nc", language="en")],
        [q1, n[4], plus, None, None, None, A1, None],
        [q1, n[6], minus, n[2], n[6], ox.Literal("x1"), M, ONE],
    ]


def test_delimited_writers_refuse_what_does_not_fit() -> None:
    with pytest.raises(ValueError, match="CONSTRUCT"):
        written("csv", [IO_MD_RESULTS[2]])
    with pytest.raises(ValueError, match="does not fit"):
        written("tsv", [IO_MD_RESULTS[0], IO_MD_RESULTS[1]])
    with pytest.raises(ValueError, match="clash"):
        written("csv", [Result("q", 1, binding={"t": M})])


def test_trig_output_reads_back_as_a_stream() -> None:
    results = [
        Result("q2", 8, "+", triples=(TRIPLE,)),
        Result("q2", 8, "+", triples=()),
        Result("q 2", 9, "+", triples=(TRIPLE, ox.Triple(M, M, A1))),
    ]
    text = written("trig", results)
    elements = list(read_stream(io.BytesIO(text.encode()), "urn:s", name="out.trig"))
    assert [(e.start, e.end, set(e.triples)) for e in elements] == [
        (8, 8, {TRIPLE}), (9, 9, {TRIPLE, ox.Triple(M, M, A1)})
    ]
    assert len({e.graph for e in elements}) == 2
    dated = written("trig", [Result("q", 1704067200000, triples=(TRIPLE,))],
                    time_kind=TimeKind.DATETIME)
    (element,) = read_stream(io.BytesIO(dated.encode()), "urn:s", name="out.trig")
    assert element.end == 1704067200000
    with pytest.raises(ValueError, match="DStream"):
        written("trig", [Result("q", 1, "-", triples=(TRIPLE,))])


def test_ntriples_output_parses_back() -> None:
    text = written("ntriples", [IO_MD_RESULTS[2], Result("q2", 9, "-", triples=(TRIPLE,))])
    assert text.splitlines()[0] == "# query q2, t 8, op +"
    parsed = [q.triple for q in ox.parse(text.encode(), format=ox.RdfFormat.N_TRIPLES)]
    assert parsed == [TRIPLE, TRIPLE]


def test_table_groups_rows_by_evaluation() -> None:
    text = written("table", [*SELECTS, IO_MD_RESULTS[3]], variables=["s", "o"])
    titles = [line.strip() for line in text.splitlines() if line.strip().startswith("q")]
    assert titles == ["q1  t=4  +", "q1  t=6  -", "q3  t=8  +"]
    assert "<http://example.org/a1>" in text
    assert "x1" in text


def test_registry_and_unknown_format() -> None:
    assert set(WRITERS) == {"jsonl", "table", "json", "csv", "tsv", "ntriples", "trig"}
    with pytest.raises(ValueError, match="unknown result format 'xml'"):
        writer_for("xml", io.StringIO())


def test_tsv_datetime_times_are_typed_literals() -> None:
    text = written("tsv", [Result("q", 1704067200000, boolean=False)], time_kind=TimeKind.DATETIME)
    (row,) = ox.parse_query_results(text, format=ox.QueryResultsFormat.TSV)
    assert row["t"] == ox.Literal("2024-01-01T00:00:00.000Z",
                                  datatype=ox.NamedNode(XSD + "dateTime"))
    assert row["boolean"] == ox.Literal("false", datatype=ox.NamedNode(XSD + "boolean"))
