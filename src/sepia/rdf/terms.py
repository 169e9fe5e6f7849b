"""RDF terms are pyoxigraph's; this module converts them to and from N-Triples text.

N-Triples text is the one external form of a term in Sepia: the dictionary keys on it,
the jsonl writer prints it, and Spark rows carry it when they carry terms at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

import pyoxigraph as ox

from sepia.rdf.vocabulary import RDF, XSD

Term = ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple

_STRING = XSD + "string"
_LANG_STRING = f"{RDF}langString"
CANONICAL_LEXICAL = {
    XSD + "integer": r"-?[1-9][0-9]{0,17}|0",
    XSD + "decimal": r"-?[1-9][0-9]{0,17}(?:\.[0-9]{0,17}[1-9])?|-?0\.[0-9]{0,17}[1-9]|0",
}
"""Lexical forms pyoxigraph keeps as they are, the common ones checked without a query
(within its integer and decimal ranges; ``-0`` is ``0``). Plain regular expressions, so
that the columnar reader can match them on columns too."""
_ALREADY_CANONICAL = {datatype: re.compile(form) for datatype, form in CANONICAL_LEXICAL.items()}
PADDED_DECIMAL = r"(-?)(0|[1-9][0-9]{0,17})\.([0-9]{0,17}0)"
"""An ``xsd:decimal`` lexical form whose only departure from the canonical form is trailing
zeros in its fraction (``"25.30"``, ``"-0.0"``, a tenth of the prices a feed writes with two
decimals), within the digits pyoxigraph reads exactly: its canonical form is
``decimal_text`` of the three groups, found without a query. A plain regular expression,
so that the columnar reader strips such decimals on columns too."""
_PADDED = re.compile(PADDED_DECIMAL)
_DECIMAL = XSD + "decimal"
_CANONICAL_STORE = ox.Store()

_SUBJECT = "<urn:sepia:s> "
_PREDICATE = "<urn:sepia:p> "


def canonical(term: Term) -> Term:
    """The term as pyoxigraph's store and queries hold it, which the reference evaluator
    answers with: a literal of a datatype it knows in its canonical form, sometimes of
    another datatype (``"007"^^xsd:int`` is ``"7"^^xsd:integer``, ``"102.10"^^xsd:decimal``
    is ``"102.1"``, a language tag in lower case). The engine's dictionary encodes terms so,
    for both evaluators to give one answer (docs/semantics.md)."""
    if not isinstance(term, ox.Literal):
        return term
    datatype = term.datatype.value
    if datatype == _STRING:
        return term
    if datatype == _LANG_STRING:
        language = term.language or ""
        return term if language == language.lower() else _held(term)
    kept = _ALREADY_CANONICAL.get(datatype)
    if kept is not None and kept.fullmatch(term.value):
        return term
    padded = _PADDED.fullmatch(term.value) if datatype == _DECIMAL else None
    if padded is not None:
        return ox.Literal(decimal_text(*padded.groups()), datatype=term.datatype)
    return _held(term)


def decimal_text(sign: str, whole: str, fraction: str) -> str:
    """pyoxigraph's text of the decimal ``sign whole . fraction`` (``PADDED_DECIMAL``'s
    groups): no trailing zero after the point, no point without a fraction, no ``-0``."""
    fraction = fraction.rstrip("0")
    text = f"{whole}.{fraction}" if fraction else whole
    return "0" if text == "0" else sign + text


@lru_cache(maxsize=65536)
def _held(term: ox.Literal) -> Term:
    """pyoxigraph's own form of a literal: the value a query binds a variable to it with
    (a pure function of the literal: a bounded process-wide cache keyed by value)."""
    solutions = _CANONICAL_STORE.query(
        "SELECT ?v WHERE {}", substitutions={ox.Variable("v"): term}
    )
    assert isinstance(solutions, ox.QuerySolutions)
    (solution,) = solutions
    return solution["v"]


def make_triple(s: Term, p: Term, o: Term) -> ox.Triple:
    """A triple of three terms read back (from ids or N-Triples) that were one: a literal
    subject or a predicate that is no IRI is refused here, where the type checker cannot
    see it."""
    if isinstance(s, ox.Literal) or not isinstance(p, ox.NamedNode):
        raise ValueError(f"not a triple: {s} {p} {o}")
    return ox.Triple(s, p, o)


def literal_parts(text: str) -> tuple[str, str]:
    """A literal's N-Triples text cut at its closing quote: the lexical form as written
    (escapes kept) and what follows ("", "@lang" or "^^<datatype>"). Canonical text
    escapes every quote inside the form, so the last quote closes it."""
    end = text.rindex('"')
    return text[1:end], text[end + 1 :]


def term_to_nt(term: Term) -> str:
    """The N-Triples form of a term (pyoxigraph's ``str`` is exactly that)."""
    return str(term)


@lru_cache(maxsize=65536)
def parse_term(text: str) -> Term:
    """Parse one term written in N-Triples syntax, as found in jsonl results or dictionary rows
    (a pure function of the text: a bounded process-wide cache keyed by value)."""
    try:
        quads = list(ox.parse(_SUBJECT + _PREDICATE + text + " .", format=ox.RdfFormat.N_TRIPLES))
    except SyntaxError as error:
        raise ValueError(f"not an RDF term in N-Triples syntax: {text!r} ({error})") from None
    if len(quads) != 1:
        raise ValueError(f"not a single RDF term: {text!r}")
    return quads[0].object


_BARE = {  # Turtle's shorthand: these lexical forms written bare denote exactly that literal
    XSD + "integer": re.compile(r"[+-]?[0-9]+"),
    XSD + "decimal": re.compile(r"[+-]?[0-9]*\.[0-9]+"),
    XSD + "boolean": re.compile(r"true|false"),
}
_LOCAL_NAME = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?")


def turtle_term(term: Term, prefixes: Mapping[str, str]) -> str:
    """A term as Turtle writes it: `ex:name` for an IRI under a declared prefix (the longest
    namespace wins), `3` / `true` for numbers and booleans in Turtle's forms, else N-Triples."""
    if isinstance(term, ox.NamedNode):
        return _prefixed(term.value, prefixes) or term_to_nt(term)
    if isinstance(term, ox.Literal) and not term.language:
        datatype = term.datatype.value
        bare = _BARE.get(datatype)
        if bare is not None and bare.fullmatch(term.value):
            return term.value
        if datatype != XSD + "string":
            short = _prefixed(datatype, prefixes)
            if short:
                return term_to_nt(ox.Literal(term.value)) + "^^" + short
    if isinstance(term, ox.Triple):
        return "<< " + " ".join(turtle_term(part, prefixes) for part in term) + " >>"
    return term_to_nt(term)


def _prefixed(iri: str, prefixes: Mapping[str, str]) -> str | None:
    best = None
    for name, namespace in prefixes.items():
        local = iri[len(namespace):]
        if (iri.startswith(namespace) and (local == "" or _LOCAL_NAME.fullmatch(local))
                and (best is None or len(namespace) > len(prefixes[best]))):
            best = name
    return None if best is None else f"{best}:{iri[len(prefixes[best]):]}"
