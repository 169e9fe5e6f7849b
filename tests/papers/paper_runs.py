"""Run a paper's query (``tests/lang/papers/<name>.rq``) on a small stream written in TriG,
through the reference evaluator and the local engine, and show the answer compactly.

Both evaluators must give the same answer, and the tests compare it with rows derived by
hand from the paper's definitions (the derivation is written beside each test)."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import pyoxigraph as ox

from sepia.io.streams import read_stream
from sepia.lang import parse_query
from sepia.rdf.results import Result
from sepia.rdf.time import TimeKind, format_time
from sepia.runtime.local import run
from sepia.semantics import evaluate

PAPERS = Path(__file__).resolve().parents[1] / "lang" / "papers"
MINUTE = 60_000
"""Durations such as ``WITHIN 60 MINUTES`` are milliseconds; element times below too."""


def short(term: ox.NamedNode | ox.BlankNode | ox.Literal) -> str:
    """An IRI's local name, a literal's lexical form."""
    if isinstance(term, ox.NamedNode):
        return term.value.rsplit("#", 1)[-1].rsplit("/", 1)[-1]
    return term.value


def row(result: Result) -> tuple:
    """``(t, "x=a y=b")``, ``(t, True)`` for ASK, ``(t, "s p o. ...")`` for CONSTRUCT; an
    event result's interval follows its time."""
    if result.triples is not None:
        body = " ".join(sorted(" ".join(map(short, t)) + "." for t in result.triples))
    elif result.boolean is not None:
        body = result.boolean
    else:
        body = " ".join(f"{k}={short(v)}" for k, v in result.values.items())
    return (result.t, body) if result.interval is None else (result.t, result.interval, body)


def answer(name: str, streams: dict[str, str], background: str = "") -> list[tuple]:
    """The rows of paper query ``name`` over ``streams`` (stream IRI -> TriG with
    ``prov:generatedAtTime`` stamps) and ``background`` (TriG), in time order; the
    reference and the engine must agree on them."""
    text = (PAPERS / f"{name}.rq").read_text(encoding="utf-8")
    query = parse_query(text, source=f"{name}.rq")
    data = {
        iri: list(read_stream(io.BytesIO(trig.encode()), iri, fmt="trig"))
        for iri, trig in streams.items()
    }
    store = ox.Store()
    if background:
        store.load(background.encode(), format=ox.RdfFormat.TRIG)
    expected = evaluate(query, data, store, name="q")
    got = list(run([("q", query)], data, store))
    assert Counter(map(row, got)) == Counter(map(row, expected)), "the engine differs"
    return sorted(map(row, expected), key=lambda r: (r[0], repr(r[1:])))


def trig(prefixes: str, *elements: tuple[int, str], dated: bool = False) -> str:
    """A stream in TriG: one named graph per (time, triples), stamped with its time (with
    ``dated``, as the xsd:dateTime that many milliseconds after 1970-01-01T00:00:00Z, for
    queries comparing durations with xsd:duration literals)."""
    lines = [prefixes, "@prefix prov: <http://www.w3.org/ns/prov#> .",
             "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> ."]
    for number, (time, triples) in enumerate(elements):
        stamp = f'"{format_time(time, TimeKind.DATETIME)}"^^xsd:dateTime' if dated else time
        name = f"<urn:e{number}>"
        lines.append(f"{name} {{ {triples} }} {name} prov:generatedAtTime {stamp} .")
    return "\n".join(lines)
