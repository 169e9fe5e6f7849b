"""Numeric and duration comparisons evaluated in Python, for the FILTER shapes event queries
use most.

Stock, card and sensor patterns compare prices and amounts (``?p2 > ?p1``, ``?amount2 * 10
<= ?amount1``), EP-SPARQL patterns bound their length (``getDURATION() < "P30D"``): one
pyoxigraph query per batch of rows costs more than the automaton step. A FILTER that is one
comparison (``= != < > <= >=``) of variables, constants, ``+ - *`` over them and EP-SPARQL's
interval accessors (``getDURATION()`` is ``?to - ?from``), or ``&&`` / ``||`` of such
comparisons (with SPARQL's error rules, 17.2), is compiled once into nested Python closures
over the encoded row, with SPARQL's semantics (17.3: integer and decimal compared exactly,
double by IEEE; type promotion; xsd:dateTime minus xsd:dateTime is an xsd:dayTimeDuration;
durations without years or months compare by their length). Constant operands are folded,
each term id is decoded and parsed once (``Values``), and an arithmetic operand of one
variable (``?price1 * 0.7``) is computed once per id of that variable. Anything the
closures are not sure of (another datatype, a lexical form they do not read, NaN, decimals
beyond 18 fractional digits or 10^15, a decimal meeting a double, a dateTime without a
timezone or finer than microseconds, a duration with years or months, an unbound variable)
answers ``UNSURE`` and the row goes to pyoxigraph as before, so the two paths never
disagree (tested on random literals against pyoxigraph, ``tests/engine/r2r/test_numeric.py``).
"""

from __future__ import annotations

import decimal
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from functools import lru_cache

import pyoxigraph as ox

from sepia.algebra import expression as ex
from sepia.algebra.sparql import FROM, TO
from sepia.rdf.terms import Term, literal_parts
from sepia.rdf.vocabulary import XSD

UNSURE = object()
"""A value the Python path leaves to pyoxigraph."""
_MISSING = object()

Number = int | Decimal | float
Row = Sequence[int | None]
Value = Callable[[Row], object]
"""A compiled operand: the encoded row -> a number, datetime, timedelta, or ``UNSURE``."""
CACHE_LIMIT = 1 << 16
"""Entries per id cache (``Values``): past it, the cache starts again."""

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")
_DOUBLE = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?INF")
_DATETIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?"
    r"(?:(Z)|([+-])([0-9]{2}):([0-9]{2}))"
)
_DURATION = re.compile(
    r"(-?)P(?:([0-9]{1,9})D)?(?:T(?:([0-9]{1,9})H)?(?:([0-9]{1,9})M)?"
    r"(?:([0-9]{1,9})(?:\.([0-9]{1,6}))?S)?)?"
)
COMPARE = {
    ex.BinaryOperator.EQUAL: operator.eq,
    ex.BinaryOperator.NOT_EQUAL: operator.ne,
    ex.BinaryOperator.LESS: operator.lt,
    ex.BinaryOperator.GREATER: operator.gt,
    ex.BinaryOperator.LESS_OR_EQUAL: operator.le,
    ex.BinaryOperator.GREATER_OR_EQUAL: operator.ge,
}
_LOGICAL = (ex.BinaryOperator.AND, ex.BinaryOperator.OR)
_ARITHMETIC = {
    ex.BinaryOperator.ADD: operator.add,
    ex.BinaryOperator.SUBTRACT: operator.sub,
    ex.BinaryOperator.MULTIPLY: operator.mul,
}
_MIXED = {(int, Decimal), (Decimal, int), (int, float), (float, int)}
"""Pairs of kinds Python compares as SPARQL's promotion does (an int is below 10^15, so
exact as a double); equal kinds compare too (numbers, datetimes, timedeltas)."""
_TEMPORAL = (datetime, timedelta)
_EXACT = decimal.Context(prec=60, traps=[decimal.Inexact, decimal.InvalidOperation])
_LIMIT = Decimal(10) ** 15
_SHORT = 15
"""Characters a number's lexical form may have to be surely within ``_LIMIT``."""


class Values:
    """Each term id's value for the Python path, decoded and parsed once, and the memos of
    one-variable operands: caches keyed by term ids (bounded, told of forgotten ids by the
    evaluator that owns them), holding no engine state. With ``text`` (the dictionary's
    N-Triples text of an id), a number is read from its text, and values are also kept by
    text (a term forgotten and met again under a new id is not parsed again): no term is
    decoded, and a text, unlike a term, hashes once."""

    def __init__(
        self, decode: Callable[[int], Term], text: Callable[[int], str] | None = None
    ) -> None:
        self.decode = decode
        self.text = text
        self.known: dict[int | None, object] = {None: UNSURE}
        self.memos: list[dict[int | None, object]] = []
        self.by_text: dict[str, object] = {}
        """Values by term text: a pure function of the text, bounded, never told of ids."""

    def fill(self, i: int) -> object:
        """The value of an id not yet known (kept)."""
        if len(self.known) >= CACHE_LIMIT:
            self.known.clear()
            self.known[None] = UNSURE
        if self.text is None:
            found = self.known[i] = value_of(self.decode(i))
            return found
        text = self.text(i)
        found = self.by_text.get(text, _MISSING)
        if found is _MISSING:
            if len(self.by_text) >= CACHE_LIMIT:
                self.by_text.clear()
            found = _number_of_text(text)
            if found is _MISSING:
                found = value_of(self.decode(i))
            self.by_text[text] = found
        self.known[i] = found
        return found

    def memo(self) -> dict[int | None, object]:
        """A new memo for one operand, forgotten with the ids."""
        self.memos.append({})
        return self.memos[-1]

    def forget_ids(self, dropped: set[int]) -> None:
        for cache in (self.known, *self.memos):
            for i in dropped.intersection(cache) if len(dropped) < len(cache) else [
                i for i in cache if i in dropped
            ]:
                del cache[i]


def comparison(
    expression: ex.Expression, positions: Mapping[str, int], values: Values
) -> Callable[[Row], object] | None:
    """The expression as a function of the encoded row -> True / False / ``UNSURE``, or
    None when its shape is not a comparison of the operands above, or ``&&`` / ``||`` of
    such (head-and-shoulders bounds a price on both sides). ``positions``: each variable's
    place in the row."""
    if isinstance(expression, ex.Binary) and expression.operator in _LOGICAL:
        left = comparison(expression.left, positions, values)
        right = comparison(expression.right, positions, values)
        if left is None or right is None:
            return None
        return _logical(expression.operator is ex.BinaryOperator.AND, left, right)
    if not isinstance(expression, ex.Binary) or expression.operator not in COMPARE:
        return None
    test = COMPARE[expression.operator]
    left = _operand(expression.left, positions, values)
    right = _operand(expression.right, positions, values)
    if left is None or right is None:
        return None

    def compare(row: Row) -> object:
        a, b = left(row), right(row)
        if a is UNSURE or b is UNSURE:
            return UNSURE
        if type(a) is type(b) or (type(a), type(b)) in _MIXED:
            return test(a, b)  # type: ignore[arg-type]
        return UNSURE

    return compare


def _logical(conjunction: bool, left: Value, right: Value) -> Value:
    """SPARQL's && (``conjunction``) or || (17.2): an error on one side is decided by a
    false (&&) or true (||) on the other, so one sure side may settle the answer; an
    ``UNSURE`` side is pyoxigraph's to decide (a value or an error)."""
    settles = not conjunction  # a side that is this decides, whatever the other is

    def combined(row: Row) -> object:
        a = left(row)
        if a is settles:
            return a
        b = right(row)
        if b is settles:
            return b
        return UNSURE if a is UNSURE or b is UNSURE else a

    return combined


def _operand(e: ex.Expression, positions: Mapping[str, int], values: Values) -> Value | None:
    match e:
        case ox.Variable() if e.value in positions:
            return _variable(positions[e.value], values)
        case ox.Literal():
            constant = value_of(e)
            return None if constant is UNSURE else lambda row: constant
        case ex.Call("GETDURATION", ()):
            return _operand(ex.Binary(ex.BinaryOperator.SUBTRACT, ox.Variable(TO),
                                      ox.Variable(FROM)), positions, values)  # fmt: skip
        case ex.Call("GETSTARTTIME", ()):
            return _operand(ox.Variable(FROM), positions, values)
        case ex.Call("GETENDTIME", ()):
            return _operand(ox.Variable(TO), positions, values)
        case ex.Binary(op, left, right) if op in _ARITHMETIC:
            a, b = _operand(left, positions, values), _operand(right, positions, values)
            if a is None or b is None:
                return None
            apply = _ARITHMETIC[op]
            found: Value = lambda row: _arithmetic(apply, a(row), b(row))  # noqa: E731
            read = {positions[v.value] for v in _variables(e)}
            if not read:  # constants only: folded
                constant = found(())
                return lambda row: constant
            return _memoized(found, read.pop(), values) if len(read) == 1 else found
    return None


def _variables(e: object) -> list[ox.Variable]:
    """The variables an arithmetic operand reads (accessors read the interval's)."""
    match e:
        case ox.Variable():
            return [e]
        case ex.Call("GETDURATION", ()):
            return [ox.Variable(FROM), ox.Variable(TO)]
        case ex.Call("GETSTARTTIME", ()):
            return [ox.Variable(FROM)]
        case ex.Call("GETENDTIME", ()):
            return [ox.Variable(TO)]
        case ex.Binary(_, left, right):
            return _variables(left) + _variables(right)
    return []


def _variable(position: int, values: Values) -> Value:
    known, fill = values.known, values.fill

    def variable(row: Row) -> object:
        i = row[position]
        found = known.get(i, _MISSING)
        return fill(i) if found is _MISSING else found  # type: ignore[arg-type]

    return variable


def _memoized(inner: Value, position: int, values: Values) -> Value:
    """An operand of the variable at ``position`` alone, computed once per id (the same
    price meets every later price of its company) and once per term (``by_term``)."""
    memo = values.memo()
    term_key: Callable[[int], object] = values.decode if values.text is None else values.text
    by_term: dict[object, object] = {}  # a price forgotten with its element and met again
    # gets a new id, not a new value: by term (or its text), bounded, never told of ids

    def memoized(row: Row) -> object:
        i = row[position]
        found = memo.get(i, _MISSING)
        if found is _MISSING:
            if len(memo) >= CACHE_LIMIT:
                memo.clear()
            if i is None:
                found = memo[i] = inner(row)
                return found
            term = term_key(i)
            found = by_term.get(term, _MISSING)
            if found is _MISSING:
                if len(by_term) >= CACHE_LIMIT:
                    by_term.clear()
                found = by_term[term] = inner(row)
            memo[i] = found
        return found

    return memoized


def value_of(term: Term | None) -> object:
    """A literal's value for the Python path: ``number``'s, an aware datetime
    (xsd:dateTime with a timezone), a timedelta (xsd:dayTimeDuration, or xsd:duration
    without years and months); ``UNSURE`` for anything else."""
    if not isinstance(term, ox.Literal):
        return UNSURE
    kind = term.datatype.value
    if kind == XSD + "dateTime":
        return _date_time(term.value)
    if kind in (XSD + "dayTimeDuration", XSD + "duration"):
        return _duration(term.value)
    return _literal_number(term)


def _date_time(text: str) -> object:
    found = _DATETIME.fullmatch(text)
    if found is None:
        return UNSURE
    year, month, day, hour, minute, second, fraction, z, sign, zh, zm = found.groups()
    offset = timedelta(0) if z else timedelta(hours=int(zh), minutes=int(zm))
    if offset > timedelta(hours=14) or (not z and int(zm) > 59):
        return UNSURE
    try:
        return datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second),
            int((fraction or "0").ljust(6, "0")),
            timezone(-offset if sign == "-" else offset),
        )  # fmt: skip
    except ValueError:  # year 0, month 13, hour 24, second 60 ...: pyoxigraph's to judge
        return UNSURE


def _duration(text: str) -> object:
    found = _DURATION.fullmatch(text)
    if found is None or text.endswith(("P", "T")):
        return UNSURE
    sign, days, hours, minutes, seconds, fraction = found.groups()
    try:
        length = timedelta(
            days=int(days or 0), hours=int(hours or 0), minutes=int(minutes or 0),
            seconds=int(seconds or 0), microseconds=int((fraction or "0").ljust(6, "0")),
        )  # fmt: skip
    except OverflowError:  # beyond 999,999,999 days
        return UNSURE
    return -length if sign else length


@lru_cache(maxsize=1 << 16)
def _literal_number(term: ox.Literal) -> object:
    """A numeric literal's value: int (xsd:integer), Decimal (xsd:decimal), float
    (xsd:double, not NaN); ``UNSURE`` for anything else. Remembered: the same prices meet
    many queries' FILTERs (a pure function of the literal: a bounded process-wide cache
    keyed by value, holding no query)."""
    return _number(term.datatype.value, term.value)


_XSD_INTEGER, _XSD_DECIMAL, _XSD_DOUBLE = (XSD + name for name in ("integer", "decimal", "double"))
_NUMBER_TYPES = {f"^^<{XSD}{name}>": XSD + name for name in ("integer", "decimal", "double")}
"""What follows the lexical form in the N-Triples text of a number, and its datatype."""


def _number_of_text(text: str) -> object:
    """``value_of`` of the term a canonical N-Triples text names, where that is a typed
    literal of a numeric datatype with no escape (``_MISSING``: any other text)."""
    if text[0] != '"' or "\\" in text:
        return _MISSING
    lexical, rest = literal_parts(text)
    kind = _NUMBER_TYPES.get(rest)
    return _MISSING if kind is None else _number(kind, lexical)


def _number(kind: str, text: str) -> object:
    """``_literal_number`` of the literal ``text``^^``kind``. A number of at most 15
    characters is within ``_bounded``'s limits (under 10^15, at most 14 fractional
    digits), which are then not worked out."""
    if kind == _XSD_INTEGER and _INTEGER.fullmatch(text):
        return int(text) if len(text) <= _SHORT else _bounded(Decimal(text), int(text))
    if kind == _XSD_DECIMAL and _DECIMAL.fullmatch(text):
        return Decimal(text) if len(text) <= _SHORT else _bounded(Decimal(text))
    if kind == _XSD_DOUBLE and _DOUBLE.fullmatch(text):
        return float(text)
    return UNSURE


def _arithmetic(apply: Callable[[Number, Number], Number], a: object, b: object) -> object:
    if type(a) is Decimal and type(b) is Decimal:  # W8's ?price1 * 0.7, once per new price:
        try:  # no promotion to work out (the general path below gives the same)
            return _bounded(_EXACT.plus(apply(a, b)))  # type: ignore[arg-type]
        except decimal.DecimalException:
            return UNSURE
    if a is UNSURE or b is UNSURE:
        return UNSURE
    if isinstance(a, _TEMPORAL) or isinstance(b, _TEMPORAL):
        both = type(a) is datetime and type(b) is datetime
        return a - b if both and apply is operator.sub else UNSURE  # type: ignore[operator]
    promoted = _promoted(a, b)  # type: ignore[arg-type]
    if promoted is None:
        return UNSURE
    x, y = promoted
    if isinstance(x, float):
        z = apply(x, y)
        return UNSURE if math.isnan(z) else z
    try:
        z = apply(Decimal(x), Decimal(y)) if isinstance(x, Decimal) else apply(x, y)
        if isinstance(z, Decimal):
            z = _EXACT.plus(z)
    except decimal.DecimalException:
        return UNSURE
    return _bounded(z) if isinstance(z, Decimal) else _bounded(Decimal(z), z)


def _bounded(value: Decimal, keep: Number | None = None) -> object:
    """Within what pyoxigraph's decimals hold exactly (18 fractional digits, well under
    their range), else ``UNSURE``."""
    if abs(value) >= _LIMIT or _exponent(value) < -18:
        return UNSURE
    return value if keep is None else keep


def _exponent(value: Decimal) -> int:
    """A finite Decimal's exponent, read from its text (``as_tuple`` builds a named tuple
    of every digit: five times slower, and W8 bounds each new price's product)."""
    text = str(value)
    mantissa, _, power = text.partition("E")
    return (int(power) if power else 0) - len(mantissa.partition(".")[2])


def _promoted(a: Number, b: Number) -> tuple[Number, Number] | None:
    """SPARQL's numeric type promotion: integer < decimal < double. None for a decimal
    promoted to double: pyoxigraph's conversion is not Python's correctly rounded one
    (123456789012345.67 becomes ...345.69 there), so that pair is left to it."""
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, Decimal) or isinstance(b, Decimal):
            return None
        return float(a), float(b)
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        return Decimal(a), Decimal(b)
    return a, b


def operand(e: ex.Expression, positions: Mapping[str, int], values: Values) -> Value | None:
    """One operand of a comparison (above) as a function of the encoded row -> its value
    or ``UNSURE``; None when its shape is not one of those above. A SEQ's range index
    (``cep.ranges``) orders one side of a comparison by it."""
    return _operand(e, positions, values)
