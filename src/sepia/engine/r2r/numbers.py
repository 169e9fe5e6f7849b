"""The values GROUP BY's aggregates fold, exactly as pyoxigraph computes them.

Numbers are read from literals (``Terms``: each term id's kind and value, found once); SUM
and AVG keep exact sums per kind (``Sum``: integers and decimals as integers times 10^18,
floats and doubles as their exact values, promoted as op:numeric-add does); results are
written back as the literals pyoxigraph writes. MIN and MAX compare numbers in Python and
hand anything else to pyoxigraph.
"""

from __future__ import annotations

import math
import re
import struct
from collections import Counter
from collections.abc import Callable, Iterable
from decimal import Decimal
from fractions import Fraction
from typing import Literal

import pyoxigraph as ox

from sepia.rdf.dictionary import Dictionary
from sepia.rdf.order import term_key
from sepia.rdf.vocabulary import XSD

INTEGER, DECIMAL, FLOAT, DOUBLE = 0, 1, 2, 3
"""Numeric kinds in SPARQL's promotion order (op:numeric-add yields the larger)."""
KINDS = {XSD + "integer": INTEGER, XSD + "decimal": DECIMAL, XSD + "float": FLOAT,
         XSD + "double": DOUBLE}  # fmt: skip
DATATYPES = [ox.NamedNode(n) for n in KINDS]
SCALE = 10**18
"""pyoxigraph's decimals are integers times 10^-18."""
I64, I128 = 2**63, 2**127
Number = tuple[int, int | Fraction | float]
"""A numeric value: its kind, and its value: an integer or decimal times ``SCALE``, the
exact value of a finite float or double, or the float itself when infinite or NaN."""
CANONICAL_INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")
CANONICAL_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]{0,17}[1-9])?")
"""Integers and decimals as pyoxigraph writes them (decimals: at most 18 fractional
digits, no trailing zero, no dot when whole; never "-0")."""


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
        decode, known = self.dictionary.decode, self._canonical
        new = []
        for i in set(ids).difference(known):
            if i is None:
                continue
            known[i] = i
            term = decode(i)
            if not isinstance(term, ox.Literal):
                self.numbers[i] = None
            elif (found := _plain(term)) is not False:
                self.numbers[i] = found
            else:
                new.append(i)
        if new:
            for i, (term, numeric) in zip(new, _stored([decode(i) for i in new]), strict=True):
                self.numbers[i] = _number(term) if numeric else None
        return known.__getitem__

    @property
    def forms(self) -> dict[int, int]:
        """Term id -> the id of its canonical form (for the ids ``canonical`` has seen)."""
        return self._canonical

    def number(self, canonical: int | None) -> Number | None:
        """The numeric value of a term (None: not a number; IRIs and blank nodes, which
        subjects bind, are never looked up in a store)."""
        return self.numbers.get(canonical)  # type: ignore[arg-type]

    def literal(self, text: str, kind: int) -> int:
        """The id of the literal of a numeric kind written ``text`` in pyoxigraph's
        canonical form (an xsd:float's is pyoxigraph's own: written to a store and read
        back)."""
        found = self._written.get((text, kind))
        if found is None:
            term = ox.Literal(text, datatype=DATATYPES[kind])
            if kind == FLOAT:
                ((term, _),) = _stored([term])
            found = self._written[(text, kind)] = self.dictionary.encode(term)
            self._canonical[found] = found
            self.numbers[found] = _number(term)
        return found


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
        found = _number(term)
        return found if found is not None and -I128 <= found[1] < I128 else False  # type: ignore[operator]
    return False


def _stored(terms: list[ox.Term]) -> list[tuple[ox.Term, bool]]:
    """Each term as a pyoxigraph store gives it back, and whether it is numeric there."""
    store = ox.Store()
    p = ox.NamedNode("urn:sepia:value")
    store.extend(ox.Quad(ox.NamedNode(f"urn:sepia:{n}"), p, t) for n, t in enumerate(terms))
    found = {}
    for s in store.query("SELECT ?s ?o (isNumeric(?o) AS ?n) WHERE { ?s ?p ?o }"):  # type: ignore[union-attr]
        found[int(s["s"].value.removeprefix("urn:sepia:"))] = (s["o"], s["n"].value == "true")
    return [found[n] for n in range(len(terms))]


def _number(term: ox.Term) -> Number | None:
    """The numeric value of a canonical literal pyoxigraph finds numeric."""
    kind = KINDS.get(term.datatype.value) if isinstance(term, ox.Literal) else None
    if kind is None:
        return None
    text = term.value
    if kind == INTEGER:
        return kind, int(text) * SCALE
    if kind == DECIMAL:
        whole, _, part = text.partition(".")
        negative = whole.startswith("-")
        value = abs(int(whole or "0")) * SCALE + int((part + "0" * 18)[:18])
        return kind, -value if negative else value
    value = float(text)
    if kind == FLOAT:
        value = _f32(value)
    return kind, Fraction(value) if value - value == 0 else value


def _f32(x: float) -> float:
    """The nearest xsd:float (through a double)."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


class Sum:
    """An exact running sum of a multiset of values (SUM and AVG), removable."""

    __slots__ = ("count", "errors", "exact", "kinds", "scaled", "special")

    def __init__(self) -> None:
        self.errors = 0
        """Values that are not numbers (or unbound): the sum is an error while any stays."""
        self.kinds = [0, 0, 0, 0]
        self.scaled = 0
        """The integers and decimals, times ``SCALE``."""
        self.exact = Fraction(0)
        """The finite floats and doubles."""
        self.special: Counter[str] = Counter()
        """Infinite and NaN values, by their text."""
        self.count = 0

    @classmethod
    def scaled_total(cls, count: int, kind: int, scaled: int) -> Sum:
        """The sum of ``count`` integers and decimals (``kind``: DECIMAL if any is one)
        whose total times ``SCALE`` is ``scaled``, added up elsewhere (a vector sum)."""
        total = cls()
        total.count = count
        total.kinds[kind] = count
        total.scaled = scaled
        return total

    def add(self, number: Number | None, sign: int) -> None:
        self.count += sign
        if number is None:
            self.errors += sign
            return
        kind, value = number
        self.kinds[kind] += sign
        if isinstance(value, int):
            self.scaled += sign * value
        elif isinstance(value, Fraction):
            self.exact += sign * value
        else:
            self.special[repr(value)] += sign

    def total(self) -> tuple[int, float | int] | None:
        """(kind, value) of the sum: an integer or decimal times ``SCALE``, or a float; None
        for an error."""
        if self.errors:
            return None
        kind = max((k for k in range(4) if self.kinds[k]), default=INTEGER)
        if kind in (INTEGER, DECIMAL):
            bound = I64 * SCALE if kind == INTEGER else I128
            return (kind, self.scaled) if -bound <= self.scaled < bound else None
        special = {s for s, n in self.special.items() if n}
        if "nan" in special or {"inf", "-inf"} <= special:
            value = float("nan")
        elif special:
            value = float(special.pop())
        else:
            value = float(self.exact + Fraction(self.scaled, SCALE))
        return kind, _f32(value) if kind == FLOAT else value


def average(state: Sum, terms: Terms) -> int | None:
    """AVG: SUM / COUNT with pyoxigraph's division (0 for no values)."""
    if state.count == 0:
        return terms.literal("0", INTEGER)
    total = state.total()
    if total is None:
        return None
    kind, value = total
    if kind in (INTEGER, DECIMAL):
        quotient = abs(value) // state.count  # truncated, as pyoxigraph's decimal division
        return number_literal((DECIMAL, -quotient if value < 0 else quotient), terms)
    if kind == FLOAT:
        return number_literal((FLOAT, _f32(value / _f32(float(state.count)))), terms)
    return number_literal((DOUBLE, value / state.count), terms)


def number_literal(total: tuple[int, float | int] | None, terms: Terms) -> int | None:
    """The literal pyoxigraph writes for a number (None: unbound): integers as digits,
    decimals without trailing zeros (nor a dot when whole), doubles in their shortest
    digits without an exponent (Rust's display), INF, -INF and NaN."""
    if total is None:
        return None
    kind, value = total
    if kind == INTEGER:
        return terms.literal(str(value // SCALE), INTEGER)
    if kind == DECIMAL:
        whole, part = divmod(abs(value), SCALE)
        digits = f"{part:018d}".rstrip("0")
        sign = "-" if value < 0 else ""
        return terms.literal(f"{sign}{whole}.{digits}" if digits else f"{sign}{whole}", DECIMAL)
    text = {"inf": "INF", "-inf": "-INF", "nan": "NaN"}.get(repr(value))
    if text is None:
        text = format(Decimal(repr(value)), "f")
        text = text.rstrip("0").rstrip(".") if "." in text else text
    return terms.literal(text, kind)


def extreme(values: Counter, maximum: bool, terms: Terms) -> int | None:
    """MIN / MAX of a multiset of canonical terms (None: unbound, which makes both unbound
    in pyoxigraph) in SPARQL's order: numbers compared in Python, anything else by
    pyoxigraph. SPARQL leaves equal numbers of different terms (1 and 1.0E0) unordered:
    this takes the greatest of them in the total order on terms (``rdf.order``), for MIN as
    for MAX, which is what the reference's store gave on the ties drawn so far; the two are
    not yet held equal on every tie (see the aggregates module)."""
    if None in values or not values:  # an unbound value (an error) unbinds both, as there
        return None
    present = list(values)
    numbers = [terms.number(v) for v in present]
    if all(n is not None and not (isinstance(n[1], float) and n[1] != n[1]) for n in numbers):
        exact = [_exact(n) for n in numbers]  # type: ignore[arg-type]
        best = max(exact) if maximum else min(exact)
        tied = [v for v, x in zip(present, exact, strict=True) if x == best]
        return max(tied, key=lambda v: term_key(terms.dictionary.decode(v)))  # type: ignore[arg-type]
    store = ox.Store()
    at, p = ox.NamedNode("urn:sepia:group"), ox.NamedNode("urn:sepia:value")
    decode = terms.dictionary.decode
    store.extend(ox.Quad(at, p, decode(v)) for v in present)  # type: ignore[arg-type]
    function = "MAX" if maximum else "MIN"
    (solution,) = store.query(f"SELECT ({function}(?o) AS ?m) WHERE {{ ?s ?p ?o }}")  # type: ignore[misc]
    return terms.dictionary.encode(solution["m"])


def _exact(number: Number) -> Fraction | float:
    _, value = number
    return Fraction(value, SCALE) if isinstance(value, int) else value
