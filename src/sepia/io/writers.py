"""Result writers, one per `--format`: jsonl, table, json, xml, csv, tsv, ntriples, trig.

Every writer takes results one at a time (`write`) and is `close`d at the end; writers that
print one block per evaluation (table, json) buffer only the current evaluation's rows.
`writer_for(format, out)` picks one from the registry `WRITERS`.

Extensions to the W3C formats, since results of a continuous query have a time:
- SPARQL JSON: one document per evaluation and line, with a leading `"sepia"` member
  `{"query", "t", "op"}` (plus `"rows"`: from / to / match per binding, when present);
- SPARQL XML: one document per evaluation and line, the evaluation named by a `<link>` in
  its head (the format's place for metadata);
- CSV / TSV: the columns query, t, op, from, to, match come before the variables;
- TriG: each CONSTRUCT result is a named graph with its time, i.e. a stream file.
"""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO
from urllib.parse import quote, urlencode

import pyoxigraph as ox
from rich.console import Console
from rich.table import Table

from sepia.rdf.results import Result, jsonl_line, triple_to_nt
from sepia.rdf.terms import Term, term_to_nt, turtle_term
from sepia.rdf.time import TimeKind, format_time
from sepia.rdf.vocabulary import PROV, XSD

XSD_INTEGER = ox.NamedNode(XSD + "integer")
XSD_DATETIME = ox.NamedNode(XSD + "dateTime")
META_COLUMNS = ("query", "t", "op", "from", "to", "match")


class ResultWriter:
    """Base of all writers: where to write, how to print times, the variables' order."""

    def __init__(
        self, out: TextIO, *, time_kind: TimeKind = TimeKind.ABSTRACT,
        variables: Sequence[str] | None = None, prefixes: Mapping[str, str] | None = None,
    ) -> None:
        self.out = out
        self.kind = time_kind
        self.variables = list(variables) if variables is not None else None
        self.prefixes = dict(prefixes or {})

    def write(self, result: Result) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Write whatever is still buffered (the base writes as it goes)."""
        self.out.flush()

    def time(self, value: int) -> int | str:
        return format_time(value, self.kind)

    def progress(self) -> dict[str, Any]:
        """What the writer has to remember of the output so far, as JSON (a header written,
        graphs numbered): a writer `resume`d with it extends that output as this one would."""
        return {}

    def resume(self, progress: dict[str, Any]) -> None:
        """Continue an output whose writer's `progress()` was `progress`."""

    def variables_of(self, results: Sequence[Result]) -> list[str]:
        """The declared variables, else every bound one in order of first appearance."""
        if self.variables is not None:
            return self.variables
        names: dict[str, None] = {}
        for result in results:
            names.update(dict.fromkeys(result.values))
        return list(names)


class JsonlWriter(ResultWriter):
    """io.md's contract: one JSON object per line."""

    def write(self, result: Result) -> None:
        self.out.write(jsonl_line(result, self.kind) + "\n")


class _PerEvaluation(ResultWriter):
    """Buffers the rows of one evaluation (query, t, op) and prints them as one block."""

    def __init__(self, out: TextIO, **options: Any) -> None:
        super().__init__(out, **options)
        self._rows: list[Result] = []

    def write(self, result: Result) -> None:
        if self._rows and self._rows[0].evaluation != result.evaluation:
            self._flush()
        self._rows.append(result)

    def close(self) -> None:
        if self._rows:
            self._flush()
        super().close()

    def _flush(self) -> None:
        rows, self._rows = self._rows, []
        self.block(rows)

    def block(self, rows: list[Result]) -> None:
        raise NotImplementedError

    def _row_meta(self, row: Result) -> dict[str, Any]:
        """A row's interval and match, for the formats that carry them beside the binding."""
        meta: dict[str, Any] = {}
        if row.interval:
            meta["from"], meta["to"] = (self.time(t) for t in row.interval)
        if row.match:
            meta["match"] = row.match
        return meta


class _Console(Console):
    """rich's console, except that a closed pipe is raised as every writer raises it
    (BrokenPipeError), for the caller to handle: rich itself would exit the process, which
    in a thread that is not the main one (Spark's foreachBatch) ends nothing."""

    def on_broken_pipe(self) -> None:
        self.quiet = True  # nothing more to print
        raise BrokenPipeError


class TableWriter(_PerEvaluation):
    """For a person: one rich table per evaluation, titled with query, time and op; IRIs
    are shortened with the query's prefixes, numbers and booleans written bare (Turtle)."""

    def __init__(self, out: TextIO, **options: Any) -> None:
        super().__init__(out, **options)
        self.console = _Console(file=out, highlight=False, soft_wrap=True)

    def block(self, rows: list[Result]) -> None:
        first = rows[0]
        title = f"{first.query}  t={self.time(first.t)}  {first.op}"
        table = Table(title=title, title_justify="left")
        extra = ["from", "to"] if any(row.interval for row in rows) else []
        extra += ["match"] if any(row.match for row in rows) else []
        if first.triples is not None:
            content = ["triple"]
        elif first.boolean is not None:
            content = ["boolean"]
        else:
            content = self.variables_of(rows)
        for column in extra + content:
            table.add_column(column, overflow="fold")
        for row in rows:
            for line in self._cells(row, content):
                table.add_row(*self._extra(row, extra), *line)
        self.console.print(table)

    def _extra(self, row: Result, extra: list[str]) -> list[str]:
        values = {"match": row.match or ""}
        if row.interval:
            values["from"], values["to"] = (str(self.time(t)) for t in row.interval)
        return [values.get(name, "") for name in extra]

    def _cells(self, row: Result, content: list[str]) -> list[list[str]]:
        if row.triples is not None:
            return [[" ".join(self._term(term) for term in triple) + " ."]
                    for triple in row.triples]
        if row.boolean is not None:
            return [["true" if row.boolean else "false"]]
        values = row.values
        return [[self._term(values[name]) if name in values else "" for name in content]]

    def _term(self, term: Term) -> str:
        return turtle_term(term, self.prefixes)


class SparqlJsonWriter(_PerEvaluation):
    """SPARQL 1.1 Query Results JSON, one document per evaluation (one per line)."""

    def block(self, rows: list[Result]) -> None:
        first = rows[0]
        sepia: dict[str, Any] = {"query": first.query, "t": self.time(first.t), "op": first.op}
        if first.triples is not None:
            raise ValueError("CONSTRUCT results cannot be written as SPARQL JSON: use trig")
        if first.boolean is not None:
            for row in rows:
                self._document({"sepia": sepia, "head": {}, "boolean": row.boolean})
            return
        if any(row.interval or row.match for row in rows):
            sepia["rows"] = [self._row_meta(row) for row in rows]
        bindings = [{name: sparql_json_term(term) for name, term in row.values.items()}
                    for row in rows]
        head = {"vars": self.variables_of(rows)}
        self._document({"sepia": sepia, "head": head, "results": {"bindings": bindings}})


    def _document(self, document: dict[str, Any]) -> None:
        self.out.write(json.dumps(document, ensure_ascii=False) + "\n")


SPARQL_RESULTS = "http://www.w3.org/2005/sparql-results#"


class SparqlXmlWriter(_PerEvaluation):
    """SPARQL 1.1 Query Results XML, one document per evaluation (one per line).

    The evaluation is named where the format leaves room for metadata, a `<link>` in the
    head: `urn:sepia:evaluation?query=q&t=8&op=%2B` (plus `from`, `to`, `match` of each
    row, as `row=N&from=..` links, when present), so every document is valid as it is.
    """

    def block(self, rows: list[Result]) -> None:
        first = rows[0]
        if first.triples is not None:
            raise ValueError("CONSTRUCT results cannot be written as SPARQL XML: use trig")
        if first.boolean is not None:  # one document per answer, as the JSON writer does
            for row in rows:
                self._document([row])
            return
        self._document(rows)

    def _document(self, rows: list[Result]) -> None:
        first = rows[0]
        root = ET.Element("sparql", xmlns=SPARQL_RESULTS)
        head = ET.SubElement(root, "head")
        variables = [] if first.boolean is not None else self.variables_of(rows)
        for name in variables:
            ET.SubElement(head, "variable", name=name)
        evaluation = {"query": first.query, "t": self.time(first.t), "op": first.op}
        ET.SubElement(head, "link", href="urn:sepia:evaluation?" + urlencode(evaluation))
        for number, row in enumerate(rows, start=1):
            meta = self._row_meta(row)
            if meta:
                ET.SubElement(head, "link",
                              href="urn:sepia:row?" + urlencode({"row": number, **meta}))
        if first.boolean is not None:
            ET.SubElement(root, "boolean").text = "true" if first.boolean else "false"
        else:
            results = ET.SubElement(root, "results")
            for row in rows:
                result = ET.SubElement(results, "result")
                for name, term in row.values.items():
                    _xml_term(ET.SubElement(result, "binding", name=name), term)
        text = ET.tostring(root, encoding="unicode")
        # one document per line: line breaks inside literals become character references
        text = text.replace("\r", "&#13;").replace("\n", "&#10;")
        self.out.write('<?xml version="1.0"?>' + text + "\n")



def _xml_term(parent: ET.Element, term: Term) -> None:
    """A term as the XML format writes it (a triple term as SPARQL 1.2 does)."""
    if isinstance(term, ox.NamedNode):
        ET.SubElement(parent, "uri").text = term.value
    elif isinstance(term, ox.BlankNode):
        ET.SubElement(parent, "bnode").text = term.value
    elif isinstance(term, ox.Literal):
        literal = ET.SubElement(parent, "literal")
        literal.text = term.value
        if term.language:
            literal.set("xml:lang", term.language)
        elif term.datatype.value != XSD + "string":
            literal.set("datatype", term.datatype.value)
    else:
        triple = ET.SubElement(parent, "triple")
        for name, part in zip(("subject", "predicate", "object"), term, strict=True):
            _xml_term(ET.SubElement(triple, name), part)


def sparql_json_term(term: Term) -> dict[str, Any]:
    """A term as the SPARQL 1.1 JSON format writes it (triple terms as in SPARQL 1.2)."""
    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, ox.Literal):
        found: dict[str, Any] = {"type": "literal", "value": term.value}
        if term.language:
            found["xml:lang"] = term.language
        elif term.datatype.value != f"{XSD}string":
            found["datatype"] = term.datatype.value
        return found
    parts = zip(("subject", "predicate", "object"), term, strict=True)
    return {"type": "triple", "value": {name: sparql_json_term(part) for name, part in parts}}


def _csv_term(term: Term) -> str:
    """SPARQL CSV: IRIs bare, literals as their lexical form, anything else in N-Triples."""
    return term.value if isinstance(term, ox.NamedNode | ox.Literal) else term_to_nt(term)


class _Delimited(ResultWriter):
    """CSV and TSV: a header from the first result, then one line per row."""

    header_name: Callable[[str], str]
    meta_value: Callable[[str], str]
    term: Callable[[Term], str]

    def __init__(self, out: TextIO, **options: Any) -> None:
        super().__init__(out, **options)
        self._columns: list[str] | None = None
        self._ask = False

    def write(self, result: Result) -> None:
        if result.triples is not None:
            raise ValueError("CONSTRUCT results cannot be written as CSV / TSV: use trig")
        if self._columns is None:
            self._start(result)
        assert self._columns is not None
        if (result.boolean is not None) != self._ask or set(result.values) - set(self._columns):
            raise ValueError(f"result does not fit the columns {self._columns}: {result}")
        if result.boolean is not None:
            content = ["true" if result.boolean else "false"]
        else:
            values = result.values
            content = [self.term(values[n]) if n in values else "" for n in self._columns]
        self.line(self._meta(result) + content)

    def progress(self) -> dict[str, Any]:
        return {"columns": self._columns, "ask": self._ask}

    def resume(self, progress: dict[str, Any]) -> None:
        self._columns, self._ask = progress["columns"], progress["ask"]

    def _start(self, result: Result) -> None:
        self._ask = result.boolean is not None
        self._columns = ["boolean"] if self._ask else self.variables_of([result])
        clash = set(self._columns) & set(META_COLUMNS)
        if clash:
            raise ValueError(f"variables {sorted(clash)} clash with the columns {META_COLUMNS}")
        self.line([self.header_name(name) for name in (*META_COLUMNS, *self._columns)])

    def _meta(self, result: Result) -> list[str]:
        start, end = (self.time_cell(t) for t in result.interval) if result.interval else ("", "")
        match = self.meta_value(result.match) if result.match else ""
        op = self.meta_value(result.op)
        return [self.meta_value(result.query), self.time_cell(result.t), op, start, end, match]

    def time_cell(self, t: int) -> str:
        return str(self.time(t))

    def line(self, fields: list[str]) -> None:
        raise NotImplementedError


class CsvWriter(_Delimited):
    """SPARQL 1.1 CSV (lossy by design): plain header, bare IRIs and lexical forms, CRLF."""

    header_name = staticmethod(str)
    meta_value = staticmethod(str)
    term = staticmethod(_csv_term)

    def __init__(self, out: TextIO, **options: Any) -> None:
        super().__init__(out, **options)
        self._csv = csv.writer(out, lineterminator="\r\n")

    def line(self, fields: list[str]) -> None:
        self._csv.writerow(fields)


class TsvWriter(_Delimited):
    """SPARQL 1.1 TSV: `?name` header, every cell an RDF term in N-Triples syntax."""

    header_name = staticmethod("?".__add__)
    term = staticmethod(term_to_nt)

    @staticmethod
    def meta_value(value: str) -> str:
        return term_to_nt(ox.Literal(value))

    def time_cell(self, t: int) -> str:
        """A bare integer (Turtle's shorthand for xsd:integer), or a typed xsd:dateTime."""
        return time_literal(t, self.kind) if self.kind is TimeKind.DATETIME else str(t)

    def line(self, fields: list[str]) -> None:
        self.out.write("\t".join(fields) + "\n")


class NTriplesWriter(ResultWriter):
    """CONSTRUCT results as N-Triples; a comment line before each says query, t and op."""

    def write(self, result: Result) -> None:
        if result.triples is None:
            raise ValueError("only CONSTRUCT results can be written as N-Triples")
        self.out.write(f"# query {result.query}, t {self.time(result.t)}, op {result.op}\n")
        self.out.writelines(triple_to_nt(triple) + "\n" for triple in result.triples)


class TrigWriter(ResultWriter):
    """CONSTRUCT results as a stream file (io.md): one named graph per result, timed.

    A result with no triples is an empty graph, which a stream file cannot hold: it is
    left out. DStream ("-") results have no place in a stream file: they raise.
    """

    def __init__(self, out: TextIO, **options: Any) -> None:
        super().__init__(out, **options)
        self._count = 0

    def progress(self) -> dict[str, Any]:
        return {"count": self._count}

    def resume(self, progress: dict[str, Any]) -> None:
        self._count = progress["count"]

    def write(self, result: Result) -> None:
        if result.triples is None:
            raise ValueError("only CONSTRUCT results can be written as TriG")
        if result.op == "-":
            raise ValueError("DStream ('-') results cannot be written as a TriG stream: use jsonl")
        if not result.triples:
            return
        self._count += 1
        graph = ox.NamedNode(f"urn:sepia:result:{quote(result.query, safe='')}:{self._count}")
        body = " ".join(triple_to_nt(triple) for triple in result.triples)
        self.out.write(f"{graph} {{ {body} }}\n")
        time = time_literal(result.t, self.kind)
        self.out.write(f"{graph} <{PROV}generatedAtTime> {time} .\n")


def time_literal(t: int, kind: TimeKind) -> str:
    """A time as an RDF literal in N-Triples: xsd:integer, or xsd:dateTime in UTC."""
    if kind is TimeKind.DATETIME:
        return term_to_nt(ox.Literal(str(format_time(t, kind)), datatype=XSD_DATETIME))
    return term_to_nt(ox.Literal(str(t), datatype=XSD_INTEGER))


WRITERS: dict[str, type[ResultWriter]] = {
    "jsonl": JsonlWriter,
    "table": TableWriter,
    "json": SparqlJsonWriter,
    "xml": SparqlXmlWriter,
    "csv": CsvWriter,
    "tsv": TsvWriter,
    "ntriples": NTriplesWriter,
    "trig": TrigWriter,
}


def writer_for(
    fmt: str, out: TextIO, *, time_kind: TimeKind = TimeKind.ABSTRACT,
    variables: Sequence[str] | None = None, prefixes: Mapping[str, str] | None = None,
) -> ResultWriter:
    """The writer registered for `fmt` (one of `WRITERS`)."""
    try:
        writer = WRITERS[fmt]
    except KeyError:
        known = ", ".join(WRITERS)
        raise ValueError(f"unknown result format {fmt!r}: use one of {known}") from None
    return writer(out, time_kind=time_kind, variables=variables, prefixes=prefixes)
