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
from functools import partial

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


def term_key(term: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple | None) -> tuple:
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
    rows = sorted(results, key=_whole_binding)
    for name, descending in reversed(conditions):  # stable sorts: the first key decides
        rows.sort(key=partial(_value_key, name), reverse=descending)
    return rows


def _whole_binding(result: Result) -> tuple:
    """A row's key in the total order: its bindings variable by variable, by name."""
    return tuple((name, term_key(term)) for name, term in sorted(result.values.items()))


def _value_key(name: str, result: Result) -> tuple:
    """A row's key on one variable (unbound first, as SPARQL orders)."""
    return term_key(result.values.get(name))
