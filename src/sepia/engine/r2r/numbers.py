"""The values GROUP BY's aggregates fold, as both evaluators compute them.

Numbers are read from literals (``Terms``: each term id's kind and value, found once); SUM
and AVG keep exact sums per kind (``rdf.numbers.Sum``: integers and decimals as integers
times 10^18, floats and doubles as their exact values, promoted as op:numeric-add does);
results are written back as the literals pyoxigraph writes. MIN and MAX break ties as the
evaluators do (``rdf.aggregates``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Literal

import pyoxigraph as ox

from sepia.rdf import aggregates
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.numbers import (
    DATATYPES,
    DECIMAL,
    FLOAT,
    I64,
    I128,
    INTEGER,
    KINDS,
    PARTIAL_SUM_TYPE,
    SCALE,
    Number,
    Sum,
    mean,
    number_of,
    number_text,
    scaled,
)
from sepia.rdf.terms import Term
from sepia.rdf.vocabulary import XSD

CANONICAL_INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")
CANONICAL_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]{0,17}[1-9])?")
"""Integers and decimals as pyoxigraph writes them (decimals: at most 18 fractional
digits, no trailing zero, no dot when whole; never "-0")."""
NUMERIC_TEXT = re.compile(
    rf'"(?P<lexical>{CANONICAL_DECIMAL.pattern})"\^\^<{re.escape(XSD)}(?P<type>integer|decimal)>'
)
"""The N-Triples text of an integer or decimal literal in canonical form (an integer
with a dot is not one: ``_plain_text`` checks)."""


class Terms:
    """The numeric values of terms, found once per term (by writing the literals Python
    cannot read for sure to a store and asking it). The dictionary already encodes terms
    in pyoxigraph's canonical form (``rdf.terms.canonical``), so each id is its own
    canonical id."""

    def __init__(self, dictionary: Dictionary) -> None:
        self.dictionary = dictionary
        self._canonical: dict[int, int] = {}
        self.numbers: dict[int, Number | None] = {}
        """Canonical id -> its numeric value (None: not a number)."""
        self._written: dict[tuple[str, int], int] = {}
        dictionary.watch(self)

    def forget_ids(self, dropped: set[int]) -> None:
        """The dictionary forgot these terms: their values are not needed any more."""
        for table in (self._canonical, self.numbers):
            for i in dropped.intersection(table):
                del table[i]
        self._written = {k: i for k, i in self._written.items() if i not in dropped}

    def canonical(self, ids: Iterable[int | None]) -> Callable[[int], int]:
        """Learn the canonical forms of ``ids`` (one store for all the new literals); the
        lookup of canonical ids."""
        decode, text_of = self.dictionary.decode, self.dictionary.decode_text
        known = self._canonical
        new = []
        for i in set(ids).difference(known):
            if i is None:
                continue
            known[i] = i
            found = _plain_text(text_of(i))
            if found is False:
                term = decode(i)
                found = _plain(term) if isinstance(term, ox.Literal) else None
            if found is not False:
                self.numbers[i] = found
            else:
                new.append(i)
        if new:
            for i, (term, numeric) in zip(new, _stored([decode(i) for i in new]), strict=True):
                self.numbers[i] = number_of(term) if numeric else None
        return known.__getitem__

    @property
    def forms(self) -> dict[int, int]:
        """Term id -> the id of its canonical form (for the ids ``canonical`` has seen)."""
        return self._canonical

    def number(self, canonical: int | None) -> Number | None:
        """The numeric value of a term (None: not a number; IRIs and blank nodes, which
        subjects bind, are never looked up in a store)."""
        if canonical is not None and canonical not in self.numbers:
            self.canonical([canonical])  # not seen yet (a columnar cache read its text)
        return self.numbers.get(canonical)  # type: ignore[arg-type]

    def literal(self, text: str, kind: int) -> int:
        """The id of the literal of a numeric kind written ``text`` in pyoxigraph's
        canonical form (an xsd:float's is pyoxigraph's own: written to a store and read
        back)."""
        found = self._written.get((text, kind))
        if found is None and kind in (INTEGER, DECIMAL):  # the text is canonical already
            found = self._written[(text, kind)] = self.dictionary.encode_canonical(
                ox.Literal(text, datatype=DATATYPES[kind]), f'"{text}"^^<{DATATYPES[kind].value}>')
            self._canonical[found] = found
            self.numbers[found] = (kind, scaled(text))
        if found is None:
            term: Term = ox.Literal(text, datatype=DATATYPES[kind])
            if kind == FLOAT:
                ((term, _),) = _stored([term])
            found = self._written[(text, kind)] = self.dictionary.encode(term)
            self._canonical[found] = found
            self.numbers[found] = number_of(term)
        return found

    def partial(self, state: Sum) -> int:
        """The id of PARTIAL_SUM's literal of a state (``aggregates.partial_literal``),
        which no store rewrites (its datatype is Sepia's) and which is no number."""
        return self.partial_text(state.state_text())

    def partial_text(self, text: str) -> int:
        """``partial`` of the state whose text is ``text`` (``Sum.state_text``)."""
        literal = aggregates.partial_literal(text)
        found = self.dictionary.encode_canonical(literal, f'"{text}"^^<{PARTIAL_SUM_TYPE}>')
        self._canonical[found] = found
        self.numbers[found] = None
        return found


def _plain_text(text: str) -> Number | Literal[False] | None:
    """``_plain`` from a term's canonical N-Triples text, for the cases the text alone
    decides (an IRI or blank node: None; a plain string: None; a canonical integer or
    decimal in range: its value); False for the rest, which ``_plain`` decides from the
    term (a dictionary's text is canonical, so no other text is these values)."""
    if text[0] != '"':
        return None
    if text[-1] == '"':
        return None
    found = NUMERIC_TEXT.fullmatch(text)
    if found is None or found["lexical"] == "-0":
        return False
    kind = INTEGER if found["type"] == "integer" else DECIMAL
    if kind == INTEGER and "." in found["lexical"]:
        return False
    value = scaled(found["lexical"])
    bound = I64 * SCALE if kind == INTEGER else I128
    return (kind, value) if -bound <= value < bound else False


def _plain(term: ox.Literal) -> Number | Literal[False] | None:
    """The numeric value of a literal pyoxigraph keeps as it is written, None if it is a
    plain string; False if only pyoxigraph can say (a store writes it anew)."""
    datatype = term.datatype.value
    if datatype == XSD + "string":
        return None
    if term.value == "-0":
        return False
    kind = KINDS.get(datatype)
    if kind == INTEGER and CANONICAL_INTEGER.fullmatch(term.value):
        value = int(term.value)
        return (kind, value * SCALE) if -I64 <= value < I64 else False
    if kind == DECIMAL and CANONICAL_DECIMAL.fullmatch(term.value):
        found = number_of(term)
        return found if found is not None and -I128 <= found[1] < I128 else False
    return False


def _stored(terms: list[Term]) -> list[tuple[Term, bool]]:
    """Each term as a pyoxigraph store gives it back, and whether it is numeric there."""
    store = ox.Store()
    p = ox.NamedNode("urn:sepia:value")
    store.extend(ox.Quad(ox.NamedNode(f"urn:sepia:{n}"), p, t) for n, t in enumerate(terms))
    found = {}
    for s in store.query("SELECT ?s ?o (isNumeric(?o) AS ?n) WHERE { ?s ?p ?o }"):  # type: ignore[union-attr]
        found[int(s["s"].value.removeprefix("urn:sepia:"))] = (s["o"], s["n"].value == "true")
    return [found[n] for n in range(len(terms))]


def average(state: Sum, terms: Terms) -> int | None:
    """AVG: SUM / COUNT with pyoxigraph's division (0 for no values)."""
    return number_literal(mean(state), terms)


def number_literal(total: tuple[int, float | int] | None, terms: Terms) -> int | None:
    """The literal pyoxigraph writes for a number (None: unbound)."""
    return None if total is None else terms.literal(number_text(total), total[0])


def extreme(values: Counter, maximum: bool, terms: Terms) -> int | None:
    """MIN / MAX of a multiset of canonical terms (None: unbound, which makes both unbound
    in pyoxigraph): SPARQL's order, equal values of different terms broken by the total
    order on terms, as both evaluators break them (``rdf.aggregates.extreme``)."""
    if None in values or not values:  # an unbound value (an error) unbinds both, as there
        return None
    decode = terms.dictionary.decode
    found = aggregates.extreme([decode(v) for v in values], maximum)
    return None if found is None else terms.dictionary.encode(found)
