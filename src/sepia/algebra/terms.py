"""The terms an algebra tree holds: pyoxigraph's RDF terms plus its query variables.

A blank node inside a WHERE pattern is SPARQL's non-distinguished variable (SPARQL 1.1,
section 18.2.1): it matches like a variable but is never projected by ``SELECT *``.
"""

from __future__ import annotations

import re

import pyoxigraph as ox

from sepia.rdf.vocabulary import XSD

Variable = ox.Variable
NamedNode = ox.NamedNode
BlankNode = ox.BlankNode
Literal = ox.Literal

RdfTerm = ox.NamedNode | ox.BlankNode | ox.Literal
TermPattern = ox.NamedNode | ox.BlankNode | ox.Literal | ox.Variable
"""What may stand in a subject or object position of a pattern."""

TERM_TYPES = (ox.NamedNode, ox.BlankNode, ox.Literal, ox.Variable)


_SHORT_LITERALS = {
    XSD + "integer": re.compile(r"[+-]?[0-9]+"),
    XSD + "decimal": re.compile(r"[+-]?[0-9]*\.[0-9]+"),
    XSD + "double": re.compile(r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)[eE][+-]?[0-9]+"),
    XSD + "boolean": re.compile(r"true|false"),
}


def term_text(term: TermPattern, prefixes: dict[str, str] | None = None) -> str:
    """SPARQL text of a term: ``?v``, ``<iri>`` (or ``p:local`` when a prefix fits), a literal
    (numbers and booleans in SPARQL's short form, ``42`` rather than ``"42"^^xsd:integer``)."""
    if isinstance(term, ox.Literal):
        short = _SHORT_LITERALS.get(term.datatype.value)
        if short is not None and short.fullmatch(term.value):
            return term.value
    if isinstance(term, ox.NamedNode) and prefixes:
        for prefix, namespace in prefixes.items():
            local = term.value[len(namespace):]
            if term.value.startswith(namespace) and _is_plain_local(local):
                return f"{prefix}:{local}"
    return str(term)


def _is_plain_local(local: str) -> bool:
    """A local name that needs no escaping in a prefixed name."""
    return local == "" or (local.replace("_", "a").replace("-", "a").isalnum()
                           and local[0] != "-")
