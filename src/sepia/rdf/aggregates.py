"""SPARQL's set functions given one answer where SPARQL leaves it open (docs/semantics.md,
"Aggregates: one answer").

SPARQL 1.1 (section 18.5.1) orders MIN / MAX's values as ORDER BY does, which leaves equal
values of different terms (``1``, ``1.0``, ``1.0E0``) unordered, lets SAMPLE return any
value and GROUP_CONCAT join in any order, and adds SUM's values in an order it leaves open
(doubles round differently in each): pyoxigraph answers as its store holds the data, so
two stores holding the same data differently answer differently. Here the ties are broken
by the total order on terms (``rdf.order.term_key``): MIN takes the least of the tied
terms, MAX the greatest, SAMPLE the least value of all, GROUP_CONCAT joins its strings in
that order; SUM and AVG add floats and doubles exactly and round once (``rdf.numbers``).

Both evaluators run SPARQL on pyoxigraph with these functions in place of the built-in ones
(``custom``: the query printer writes ``MIN(?x)`` as ``<urn:sepia:aggregate:min>(?x)``);
the engine's maintained GROUP BY computes with ``extreme`` and ``rdf.numbers`` too.
pyoxigraph calls a custom aggregate only over values without errors (an unbound or
erroneous value unbinds it, as it does its own MIN, MAX, SUM and AVG), once per group.

PARTIAL_SUM, Sepia's own set function (no query text parses to it), is the engine's only:
a group's ``Sum`` as a literal (``partial_literal``), which a split query's buckets report
for a stage after them to merge (``Sum.from_state_texts``) and finish (``finished``) as
SUM or AVG.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from functools import partial
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

import pyoxigraph as ox

from sepia.rdf.numbers import (
    DATATYPES,
    FLOAT,
    PARTIAL_SUM_TYPE,
    Sum,
    mean,
    number_of,
    number_text,
)
from sepia.rdf.order import term_key
from sepia.rdf.terms import Term, canonical
from sepia.rdf.vocabulary import XSD

if TYPE_CHECKING:
    from pyoxigraph import AggregateFunctionAccumulator

AGGREGATE = "urn:sepia:aggregate:"
MIN, MAX, SAMPLE, SUM, AVG, SUM_DISTINCT, AVG_DISTINCT = (
    ox.NamedNode(AGGREGATE + name)
    for name in ("min", "max", "sample", "sum", "avg", "sum-distinct", "avg-distinct")
)
CONCAT = AGGREGATE + "group-concat:"
CONCAT_IRI = re.compile(re.escape(f"<{CONCAT}") + r"(distinct|all):([^>]*)>")
STRINGS = frozenset({XSD + "string", "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"})
FLOATING = frozenset({XSD + "double", XSD + "float"})
EXACT = frozenset({XSD + "integer", XSD + "decimal"})
NUMBERS = EXACT | FLOATING
PARTIAL = ox.NamedNode(PARTIAL_SUM_TYPE)


def extreme(values: Sequence[Term], maximum: bool) -> Term | None:
    """MIN / MAX of the values (None for none) in SPARQL's order, equal values of different
    terms broken by the total order on terms: numbers compare by value, promoted as SPARQL
    promotes them (a decimal or an integer compared with a double is a double), any other
    mix of terms as pyoxigraph orders it."""
    if not values:
        return None
    keys = _numeric_keys(values)
    pick = max if maximum else min
    if keys is None:
        tied = _tied_in_store(values, maximum)
    else:
        best = pick(keys)
        tied = [v for v, k in zip(values, keys, strict=True) if k == best]
    return pick(tied, key=term_key)


def sample(values: Sequence[Term]) -> Term | None:
    """SAMPLE: the least value in the total order on terms (None for none)."""
    return min(values, key=term_key, default=None)


def total(values: Sequence[Term], average: bool) -> Term | None:
    """SUM or AVG of the values (``rdf.numbers``: floats and doubles summed exactly and
    rounded once); None when one is not a number or an integer or decimal sum overflows."""
    state = Sum()
    for value in values:
        state.add(number_of(value), 1)
    return finished(state, average)


def finished(state: Sum, average: bool) -> Term | None:
    """SUM (or AVG) of a state's values, the literal ``total`` gives (None: unbound)."""
    found = mean(state) if average else state.total()
    if found is None:
        return None
    literal = ox.Literal(number_text(found), datatype=DATATYPES[found[0]])
    return canonical(literal) if found[0] == FLOAT else literal  # a float as a store writes it


def partial_literal(text: str) -> ox.Literal:
    """PARTIAL_SUM's literal of a state's text (``Sum.state_text``), always bound (errors
    are counted in it: the merged state is the error)."""
    return ox.Literal(text, datatype=PARTIAL)


def concatenation(values: Sequence[Term], separator: str) -> Term | None:
    """GROUP_CONCAT: the strings (simple, xsd:string or language-tagged; pyoxigraph's
    GROUP_CONCAT is unbound over any other value) in the total order on terms, joined by
    ``separator``, as a simple literal (SPARQL 1.1, 18.5.1.7)."""
    if not all(isinstance(v, ox.Literal) and v.datatype.value in STRINGS for v in values):
        return None
    return ox.Literal(separator.join(v.value for v in sorted(values, key=term_key)))  # type: ignore[union-attr]


def group_concat(separator: str, distinct: bool) -> ox.NamedNode:
    """The custom aggregate of ``GROUP_CONCAT([DISTINCT] ?x; SEPARATOR=separator)``: the
    separator is written in its IRI, which ``custom`` reads back."""
    flag = "distinct" if distinct else "all"
    return ox.NamedNode(f"{CONCAT}{flag}:{quote(separator, safe='')}")


def custom(query: str) -> dict[ox.NamedNode, Callable[[], AggregateFunctionAccumulator]]:
    """The aggregates to pass to pyoxigraph's ``query`` with ``query`` (its
    ``custom_aggregate_functions``): those of ``CUSTOM``, and the GROUP_CONCATs it holds."""
    found = dict(CUSTOM)
    for flag, separator in CONCAT_IRI.findall(query):
        distinct, joint = flag == "distinct", unquote(separator)
        found[group_concat(joint, distinct)] = partial(_concat_values, joint, distinct)
    return found


def _concat_values(separator: str, distinct: bool) -> _Values:
    return _Values(lambda vs: concatenation(_distinct(vs) if distinct else vs, separator))


def _distinct(values: list[Term]) -> list[Term]:
    return list(dict.fromkeys(values))


def _numeric_keys(values: Sequence[Term]) -> list[Decimal] | list[float] | None:
    """The values' numeric keys, or None unless every value is an integer, decimal, float
    or double other than NaN: exact values, or doubles when one of them is a float or
    double (a float's key is its value, which a double holds exactly)."""
    if not all(isinstance(v, ox.Literal) and v.datatype.value in NUMBERS for v in values):
        return None
    try:
        exact = [Decimal(v.value) for v in values]  # type: ignore[union-attr]
    except InvalidOperation:
        return None
    if any(x.is_nan() for x in exact):
        return None
    if not any(v.datatype.value in FLOATING for v in values):  # type: ignore[union-attr]
        return exact
    return [_float(v) for v in values]  # type: ignore[arg-type]


def _float(value: ox.Literal) -> float:
    """A number as a double (a float's value through a float: ``"0.1"^^xsd:float`` is not
    the double 0.1)."""
    if value.datatype.value == XSD + "float":
        return struct.unpack("f", struct.pack("f", float(value.value)))[0]
    return float(Decimal(value.value))


def _tied_in_store(values: Sequence[Term], maximum: bool) -> list[Term]:
    """The values equal to pyoxigraph's MIN / MAX of them (``=`` or the same term), which
    every one of them is an equal candidate for."""
    store = ox.Store()
    p = ox.NamedNode(AGGREGATE + "value")
    store.extend(
        ox.Quad(ox.NamedNode(f"{AGGREGATE}{n}"), p, v)
        for n, v in enumerate(values)
    )
    function = "MAX" if maximum else "MIN"
    found = store.query(
        f"SELECT ?s WHERE {{ {{ SELECT ({function}(?v) AS ?m) WHERE {{ ?a <{p.value}> ?v }} }}"
        f" ?s <{p.value}> ?o FILTER(sameTerm(?o, ?m) || ?o = ?m) }}"
    )
    assert isinstance(found, ox.QuerySolutions)
    return [values[int(s["s"].value.removeprefix(AGGREGATE))] for s in found]


class _Values:
    """A pyoxigraph aggregate accumulator: the group's values, then ``function`` of them."""

    __slots__ = ("accumulate", "function", "values")

    def __init__(self, function: Callable[[list[Term]], Term | None]) -> None:
        self.function = function
        self.values: list[Term] = []
        self.accumulate = self.values.append  # called once per value: no frame of ours

    def finish(self) -> Term | None:
        return self.function(self.values)


CUSTOM: dict[ox.NamedNode, Callable[[], AggregateFunctionAccumulator]] = {
    MIN: lambda: _Values(lambda vs: extreme(vs, False)),
    MAX: lambda: _Values(lambda vs: extreme(vs, True)),
    SAMPLE: lambda: _Values(sample),
    SUM: lambda: _Values(lambda vs: total(vs, False)),
    AVG: lambda: _Values(lambda vs: total(vs, True)),
    SUM_DISTINCT: lambda: _Values(lambda vs: total(_distinct(vs), False)),
    AVG_DISTINCT: lambda: _Values(lambda vs: total(_distinct(vs), True)),
}
"""The aggregates of fixed names (``custom`` adds GROUP_CONCAT's)."""
