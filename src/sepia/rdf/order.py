"""The order of one evaluation's rows: the query's ORDER BY (SPARQL 1.1 section 15.1), per
evaluation of a continuous query, its ties broken by a total order on RDF terms. Both
evaluators order their rows with it, so one answer is written in one order.

The total order on terms (``term_key``), documented in docs/semantics.md: unbound first,
then blank nodes (by label), IRIs (by their text), then literals: numbers (the XSD numeric
datatypes) by value, booleans (false before true), then every other literal by lexical
form, datatype IRI and language tag; numbers of equal value by datatype IRI, then lexical
form; NaN after every other number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation

import pyoxigraph as ox

from sepia.rdf.results import Result
from sepia.rdf.vocabulary import XSD

NUMERIC = frozenset(XSD + name for name in (
    "integer", "decimal", "float", "double", "int", "long", "short", "byte",
    "nonNegativeInteger", "positiveInteger", "negativeInteger", "nonPositiveInteger",
    "unsignedInt", "unsignedLong", "unsignedShort", "unsignedByte",
))
Condition = tuple[str, bool]
"""An ORDER BY key: a variable's name and whether it is descending."""


def term_key(term: ox.NamedNode | ox.BlankNode | ox.Literal | None) -> tuple:
    """The term's place in the total order above (None is unbound)."""
    match term:
        case None:
            return (0,)
        case ox.BlankNode():
            return (1, term.value)
        case ox.NamedNode():
            return (2, term.value)
        case ox.Literal():
            pass
        case _:  # a quoted triple (RDF-star): after every literal, by its text
            return (4, str(term))
    datatype = term.datatype.value
    if datatype in NUMERIC:
        value = _number(term.value)
        if value is not None:
            nan = isinstance(value, float) and math.isnan(value)
            return (3, 0, nan, 0 if nan else value, datatype, term.value)
    if datatype == XSD + "boolean" and term.value in ("true", "false", "1", "0"):
        return (3, 1, term.value in ("true", "1"), datatype, term.value)
    return (3, 2, term.value, datatype, term.language or "")


def _number(text: str) -> Decimal | float | None:
    """A numeric literal's value (infinities and NaN as floats), None if ill-typed."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        return None
    return float(value) if not value.is_finite() else value


def ordered(results: Sequence[Result], conditions: Sequence[Condition]) -> list[Result]:
    """One evaluation's rows by ``conditions`` in turn (descending ones reversed), rows
    equal on them by their whole bindings in the total order (ASK and CONSTRUCT rows keep
    their order)."""
    if any(r.binding is None for r in results):
        return list(results)
    rows = sorted(results, key=lambda r: tuple((n, term_key(v)) for n, v in r.binding))  # type: ignore[union-attr]
    for name, descending in reversed(conditions):  # stable sorts: the first key decides
        rows.sort(key=lambda r, n=name: term_key(r.values.get(n)), reverse=descending)
    return rows
