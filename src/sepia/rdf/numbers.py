"""The numbers SUM and AVG add, exactly as both evaluators and the engine's maintained
GROUP BY add them (docs/semantics.md, "Aggregates: one answer").

Integers and decimals are pyoxigraph's (integers of 64 bits, decimals of 18 fractional
digits in 128 bits): their sums are exact in any order, an overflow of the total unbinds
the aggregate. Floats and doubles are summed exactly and rounded once to the result's type
(SPARQL adds in an order it leaves open, and each order rounds differently; the exact sum
rounded once is the one answer that order does not change). AVG divides that sum by the
count as pyoxigraph divides: decimals truncated at 18 digits, doubles and floats rounded.
Results are written as pyoxigraph writes them.

A ``Sum``'s whole state has a text (``Sum.state_text``), and texts merge into one state
(``Sum.from_state_texts``): a query split over buckets (Spark's) reports each group's
partial state as a literal of ``PARTIAL_SUM_TYPE`` instead of its SUM or AVG, and the
merged states finish to exactly the unsplit answer, since nothing is rounded before the end.
"""

from __future__ import annotations

import math
import struct
from collections import Counter
from collections.abc import Iterable
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache

import pyoxigraph as ox

from sepia.rdf.terms import Term
from sepia.rdf.vocabulary import XSD

INTEGER, DECIMAL, FLOAT, DOUBLE = 0, 1, 2, 3
"""Numeric kinds in SPARQL's promotion order (op:numeric-add yields the larger)."""
KINDS = {XSD + "integer": INTEGER, XSD + "decimal": DECIMAL, XSD + "float": FLOAT,
         XSD + "double": DOUBLE}  # fmt: skip
DATATYPES = [ox.NamedNode(n) for n in KINDS]
SCALE = 10**18
"""pyoxigraph's decimals are integers times 10^-18."""
I64, I128 = 2**63, 2**127
PARTIAL_SUM_TYPE = "urn:sepia:partial-sum"
"""The datatype IRI of a literal holding a ``Sum``'s state (``Sum.state_text``)."""
SPECIALS = ("nan", "inf", "-inf")
"""The texts of the non-finite values a ``Sum`` counts, in its state text's order."""
NO_SPECIALS = ",".join("0" for _ in SPECIALS)
NO_FRACTION = Fraction(0)
Number = tuple[int, int | Fraction | float]
"""A numeric value: its kind, and its value: an integer or decimal times ``SCALE``, the
exact value of a finite float or double, or the float itself when infinite or NaN."""


@lru_cache(maxsize=65536)
def number_of(term: Term) -> Number | None:
    """The numeric value of a canonical literal pyoxigraph finds numeric (cached: a
    window's values are read again at each evaluation)."""
    if not isinstance(term, ox.Literal) or (kind := KINDS.get(term.datatype.value)) is None:
        return None
    text = term.value
    if kind in (INTEGER, DECIMAL):
        return kind, scaled(text)
    double = f32(float(text)) if kind == FLOAT else float(text)
    return kind, Fraction(double) if double - double == 0 else double


def scaled(text: str) -> int:
    """An integer's or decimal's lexical form (of at most 18 fractional digits, as
    pyoxigraph reads them) times ``SCALE``."""
    whole, _, part = text.partition(".")
    value = abs(int(whole or "0")) * SCALE + int((part + "0" * 18)[:18])
    return -value if whole.startswith("-") else value


def f32(x: float) -> float:
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
        self.exact = NO_FRACTION
        """The finite floats and doubles (a Fraction is immutable: ``add`` makes a new one)."""
        self.special: Counter[str] = Counter()
        """Infinite and NaN values, by their text."""
        self.count = 0

    def state_text(self) -> str:
        """The whole state as a compact text (``from_state_texts`` reads it back):
        ``count;errors;kinds;scaled;numerator/denominator;specials``, the kinds' and the
        specials' (``SPECIALS``) counts separated by commas."""
        kinds = ",".join(map(str, self.kinds))
        special = ",".join(str(self.special[s]) for s in SPECIALS)
        exact = f"{self.exact.numerator}/{self.exact.denominator}"
        return f"{self.count};{self.errors};{kinds};{self.scaled};{exact};{special}"

    @classmethod
    def from_state_texts(cls, texts: Iterable[str]) -> Sum:
        """The states ``state_text`` wrote, merged (ValueError for another text): the sum
        of the union of their multisets. Their integer parts are added as they are read,
        with no ``Sum``, ``Counter`` or ``Fraction`` made per text, and the parts that are
        zero in a text of integers and decimals alone are not read (a split's states are
        merged one per bucket, window and group: W3's 220,000 took 5 s as a ``Sum`` each,
        merged one by one)."""
        count = errors = total = 0
        kinds, exact, special = [0, 0, 0, 0], NO_FRACTION, [0] * len(SPECIALS)
        for text in texts:
            parts = text.split(";")
            if len(parts) != 6 or parts[2].count(",") != 3 or "/" not in parts[4] or (
                    parts[5].count(",") != 2):  # fmt: skip
                raise ValueError(f"not a Sum's state: {text!r}")
            count, total = count + int(parts[0]), total + int(parts[3])
            if parts[1] != "0":
                errors += int(parts[1])
            k0, k1, floats = parts[2].split(",", 2)
            kinds[0], kinds[1] = kinds[0] + int(k0), kinds[1] + int(k1)
            if floats != "0,0":
                k2, k3 = floats.split(",")
                kinds[2], kinds[3] = kinds[2] + int(k2), kinds[3] + int(k3)
            if parts[4] != "0/1":
                numerator, _, denominator = parts[4].partition("/")
                exact += Fraction(int(numerator), int(denominator))
            if parts[5] != NO_SPECIALS:
                special = [a + int(b) for a, b in zip(special, parts[5].split(","), strict=True)]
        state = cls.__new__(cls)  # every field set here: no Counter or Fraction made twice
        state.count, state.errors, state.kinds = count, errors, kinds
        state.scaled, state.exact = total, exact
        state.special = Counter({s: n for s, n in zip(SPECIALS, special, strict=True) if n})
        return state

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
        return kind, f32(value) if kind == FLOAT else value


def scaled_state_text(count: int, decimals: int, scaled: int) -> str:
    """``Sum.state_text`` of ``count`` integers and decimals (``decimals`` of them
    decimals) whose total times ``SCALE`` is ``scaled``, written without a ``Sum`` (a
    columnar GROUP BY's vector path writes one per group and evaluation)."""
    return f"{count};0;{count - decimals},{decimals},0,0;{scaled};0/1;{NO_SPECIALS}"


SCALED_STATE = (
    r"^(?P<count>[0-9]{1,18});0;[0-9]{1,18},(?P<decimals>[0-9]{1,18}),0,0;"
    rf"(?P<scaled>[0-9]{{1,30}});0/1;{NO_SPECIALS}$"
)
"""The state texts of integers and decimals alone whose total is not negative
(``scaled_state_text``'s), as a regular expression Python's and Arrow's (RE2) read alike."""


def mean(state: Sum) -> tuple[int, float | int] | None:
    """AVG: SUM / COUNT with pyoxigraph's division (0 for no values; None for an error)."""
    if state.count == 0:
        return INTEGER, 0
    total = state.total()
    if total is None:
        return None
    kind, value = total
    if kind in (INTEGER, DECIMAL):
        quotient = abs(value) // state.count  # truncated, as pyoxigraph's decimal division
        return DECIMAL, -quotient if value < 0 else quotient
    if kind == FLOAT:
        return FLOAT, f32(value / f32(float(state.count)))
    return DOUBLE, value / state.count


def number_text(total: tuple[int, float | int]) -> str:
    """The lexical form pyoxigraph writes for a number: integers as digits, decimals
    without trailing zeros (nor a dot when whole), doubles in their shortest digits without
    an exponent (Rust's display), INF, -INF and NaN (a float's text is a double's: a store
    writes it anew)."""
    kind, value = total
    if kind == INTEGER:
        return str(value // SCALE)
    if kind == DECIMAL:
        whole, part = divmod(abs(value), SCALE)
        digits = f"{part:018d}".rstrip("0")
        sign = "-" if value < 0 else ""
        return f"{sign}{whole}.{digits}" if digits else f"{sign}{whole}"
    text = {"inf": "INF", "-inf": "-INF", "nan": "NaN"}.get(repr(value))
    if text is None:
        text = format(Decimal(repr(value)), "f")
        text = text.rstrip("0").rstrip(".") if "." in text else text
    return text
