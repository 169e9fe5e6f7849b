"""Stream files straight to columns: text -> integer columns without an object per term.

The row path parses every quad with pyoxigraph into Python term objects and assembles
elements from them; most of a run's time went there. Files in the one-element-per-line
shape that Sepia's generators and most exporters write (TriG: a time statement line, then
``<graph> { s p o . ... }`` on one line) are read here with polars string kernels: lines are
classified by regular expressions, each element's triples are cut into terms, triples whose
predicate no query reads are dropped before anything is encoded, and only the *distinct*
terms left go through pyoxigraph (one small N-Triples document, so every term is checked by
the same parser, and literals take their canonical form) into the dictionary. Times are
parsed as columns.

Why polars and not pyarrow or numpy: polars has vectorised regex extraction and joins on
strings, which turn the line text into columns in compiled code; pyarrow's compute module
has the regexes but no fast dictionary-encoding join against Python-held ids, and numpy
has no string kernels. Measured on 100,000 W1 elements (docs/engine.md): reading the lines
is ~20x faster than pyoxigraph's parse of the same file.

Anything outside the shape (prefixed names or blank nodes inside a graph, escapes in a
literal, an interval or integer time, a time not right before its graph, times going back,
gzip) makes ``read_columns`` return None: the caller reads the file with the row reader
(``sepia.io.streams``), which keeps its own error reporting. So this path never decides
what a malformed file means.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path

import numpy as np
import polars as pl
import pyoxigraph as ox

from sepia.engine.codec import Codec
from sepia.engine.columnar.batch import ColumnBatch
from sepia.rdf.time import TimeKind

PROV_GENERATED = "http://www.w3.org/ns/prov#generatedAtTime"
XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"
IRI = r"<[A-Za-z][A-Za-z0-9+.\-]*:[^<>\"{}|^`\\\x00-\x20]*>"
LITERAL = r"\"[^\"\\\n\r]*\"(?:\^\^" + IRI + r"|@[A-Za-z]+(?:-[A-Za-z0-9]+)*)?"
TERM = f"(?:{IRI}|{LITERAL})"
PNAME = r"[A-Za-z][\w.\-]*:[\w\-]+"
_PREFIX = re.compile(r"@prefix\s+([A-Za-z][\w.\-]*)?:\s*(" + IRI + r")\s*\.\s*")
_DATETIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,3})?Z"
_SKELETON = r"^(?:T T T(?: \. T T T)*(?: \.)?)?$"


def read_columns(
    path: str | Path, stream: str, codec: Codec, predicates: Collection[str] | None = None
) -> ColumnBatch | None:
    """The elements of one stream file as columns (ids from ``codec``), keeping only the
    triples whose predicate IRI is in ``predicates`` (None: all); None when the file is
    not in the shape this reader takes (see the module docstring)."""
    path = Path(path)
    if path.suffix != ".trig":
        return None
    text = path.read_text(encoding="utf-8")
    lines = pl.Series("line", text.split("\n"), dtype=pl.String)
    prefixes, body = _prefixes(lines)
    if prefixes is None:
        return None
    times, graphs = body.gather_every(2), body.gather_every(2, offset=1)
    if len(times) != len(graphs) or not len(times):
        return None
    elements = _elements(times, graphs, prefixes)
    if elements is None:
        return None
    stamps, contents = elements
    triples = _triples(contents, predicates)
    if triples is None:
        return None
    ids = _encode(triples, codec)
    if ids is None:
        return None
    s, p, o, element = ids
    count = len(stamps)
    return ColumnBatch(
        (stream,), stamps, np.zeros(count, dtype=np.int64), np.zeros(count, dtype=np.int64),
        element, s, p, o, TimeKind.DATETIME,
    )


def _prefixes(lines: pl.Series) -> tuple[dict[str, str] | None, pl.Series]:
    """The @prefix declarations (a leading block) and the other non-blank lines."""
    stripped = lines.str.strip_chars()
    kept = stripped.filter((stripped != "") & ~stripped.str.starts_with("#"))
    declared = kept.str.starts_with("@prefix")
    head = int(declared.arg_min()) if not declared.all() else len(kept)  # type: ignore[arg-type]
    if declared.slice(head).any():
        return None, kept  # a prefix declared among the elements
    prefixes: dict[str, str] = {}
    for line in kept.slice(0, head).to_list():
        found = _PREFIX.fullmatch(line)
        if found is None:
            return None, kept
        prefixes[found.group(1) or ""] = found.group(2)[1:-1]
    return prefixes, kept.slice(head)


def _expand(term: str, prefixes: dict[str, str]) -> str | None:
    if term.startswith("<"):
        return term[1:-1]
    prefix, _, local = term.partition(":")
    base = prefixes.get(prefix)
    return None if base is None else base + local


def _elements(
    times: pl.Series, graphs: pl.Series, prefixes: dict[str, str]
) -> tuple[np.ndarray, pl.Series] | None:
    """(epoch ms per element, each element's triples text), when every element is a time
    line (prov:generatedAtTime, an xsd:dateTime in UTC) right before its graph line and
    times never go back."""
    fields = times.str.split_exact(" ", 3).struct.unnest()
    names, predicate, stamp, end = (fields[f"field_{i}"] for i in range(4))
    graph_names = graphs.str.split_exact(" ", 1).struct.field("field_0")
    if end.null_count() or (end != ".").any() or (names != graph_names).any():
        return None
    if not names.str.contains(f"^{IRI}$").all() or names.n_unique() != len(names):
        return None  # a graph name used twice: the row reader decides what that means
    contents = graphs.str.slice(graph_names.str.len_chars() + 1)
    if not (contents.str.starts_with("{") & contents.str.ends_with("}")).all():
        return None
    contents = contents.str.slice(1, contents.str.len_chars() - 2).str.strip_chars()
    lexical = stamp.str.extract(rf'^"({_DATETIME})"\^\^(?:{IRI}|{PNAME})$', 1)
    datatype = stamp.str.extract(rf'^"{_DATETIME}"\^\^({IRI}|{PNAME})$', 1)
    if lexical.null_count() or datatype.null_count():
        return None
    for used, meaning in ((predicate, PROV_GENERATED), (datatype, XSD_DATETIME)):
        if any(_expand(t, prefixes) != meaning for t in used.unique().to_list()):
            return None
    try:
        moments = lexical.str.to_datetime("%Y-%m-%dT%H:%M:%S%.fZ", time_unit="ms", time_zone="UTC")
    except pl.exceptions.PolarsError:
        return None
    stamps = moments.dt.epoch("ms").to_numpy().astype(np.int64)
    if (np.diff(stamps) < 0).any():
        return None
    return stamps, contents


def _triples(contents: pl.Series, predicates: Collection[str] | None) -> pl.DataFrame | None:
    """One row per triple (element, s, p, o as term text) of the predicates read."""
    skeleton = contents.str.replace_all(TERM, "T").str.replace_all(r"\s+", " ")
    if not skeleton.str.contains(_SKELETON).all():
        return None  # something besides full IRIs and plain literals, or not triples
    terms = pl.DataFrame({"element": np.arange(len(contents)),
                          "term": contents.str.extract_all(TERM)})
    flat = terms.explode("term").drop_nulls("term")
    term = flat["term"]
    triples = pl.DataFrame({"element": flat["element"].gather_every(3), "s": term.gather_every(3),
                            "p": term.gather_every(3, offset=1),
                            "o": term.gather_every(3, offset=2)})
    if not (triples["s"].str.starts_with("<").all() and triples["p"].str.starts_with("<").all()):
        return None  # a literal as subject or predicate: the row reader says where
    if predicates is not None:
        triples = triples.filter(pl.col("p").is_in([f"<{p}>" for p in predicates]))
    return triples


def _encode(triples: pl.DataFrame, codec: Codec) -> tuple[np.ndarray, ...] | None:
    """(s, p, o, element) as id columns: each distinct term parsed once by pyoxigraph (a
    term it refuses sends the file to the row reader) and encoded in canonical form."""
    distinct = pl.concat([triples["s"], triples["p"], triples["o"]]).unique().to_list()
    document = "".join(f"<x:s> <x:p> {term} .\n" for term in distinct)
    try:
        parsed = [quad.object for quad in ox.parse(document, format=ox.RdfFormat.N_TRIPLES)]
    except SyntaxError:
        return None
    if len(parsed) != len(distinct):
        return None
    lookup = pl.DataFrame({"term": distinct, "id": [codec.encode(t) for t in parsed]},
                          schema={"term": pl.String, "id": pl.Int64})
    columns = []
    for position in ("s", "p", "o"):
        joined = triples.select(pl.col(position).alias("term")).join(
            lookup, on="term", how="left", maintain_order="left"
        )
        columns.append(joined["id"].to_numpy().astype(np.int64))
    return (*columns, triples["element"].to_numpy().astype(np.int64))
