"""Numeric comparisons evaluated in Python, for the FILTER shape event queries use most.

Stock, card and sensor patterns compare prices and amounts (``?p2 > ?p1``, ``?amount2 * 10
<= ?amount1``): one pyoxigraph query per batch of rows costs more than the automaton step.
A FILTER that is one comparison (``= != < > <= >=``) of variables, numeric constants and
``+ - *`` over them, or ``&&`` / ``||`` of such comparisons (with SPARQL's error rules,
17.2), is compiled into a Python function with SPARQL's semantics (17.3: integer and
decimal compared exactly, double by IEEE; type promotion). Anything the function is not
sure of (another datatype, a lexical form it does not read, NaN, decimals beyond 18
fractional digits or 10^15, a decimal meeting a double, an unbound variable) answers
``UNSURE`` and the row goes to pyoxigraph as before, so the two paths never disagree
(tested on random literals against pyoxigraph, ``tests/engine/r2r/test_numeric.py``).
"""

from __future__ import annotations

import decimal
import math
import operator
import re
from collections.abc import Callable, Sequence
from decimal import Decimal
from functools import lru_cache

import pyoxigraph as ox

from sepia.algebra import expression as ex
from sepia.rdf.terms import Term
from sepia.rdf.vocabulary import XSD

UNSURE = object()
"""A value the Python path leaves to pyoxigraph."""

Number = int | Decimal | float
Value = Callable[[Sequence[Term | None]], object]
"""A compiled operand: the row's terms (in the evaluator's variable order) -> a number,
or ``UNSURE``."""

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")
_DOUBLE = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?INF")
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
_EXACT = decimal.Context(prec=60, traps=[decimal.Inexact, decimal.InvalidOperation])
_LIMIT = Decimal(10) ** 15


def comparison(
    expression: ex.Expression, names: Sequence[str]
) -> Callable[[Sequence[Term | None]], object] | None:
    """The expression as a function of the row's terms -> True / False / ``UNSURE``, or
    None when its shape is not a comparison of numeric operands, or ``&&`` / ``||`` of
    such (head-and-shoulders bounds a price on both sides)."""
    if isinstance(expression, ex.Binary) and expression.operator in _LOGICAL:
        left, right = comparison(expression.left, names), comparison(expression.right, names)
        if left is None or right is None:
            return None
        return _logical(expression.operator is ex.BinaryOperator.AND, left, right)
    if not isinstance(expression, ex.Binary) or expression.operator not in COMPARE:
        return None
    test = COMPARE[expression.operator]
    left, right = _operand(expression.left, names), _operand(expression.right, names)
    if left is None or right is None:
        return None

    def compare(terms: Sequence[Term | None]) -> object:
        a, b = left(terms), right(terms)
        if a is UNSURE or b is UNSURE:
            return UNSURE
        promoted = _promoted(a, b)  # type: ignore[arg-type]
        return UNSURE if promoted is None else test(*promoted)

    return compare


def _logical(conjunction: bool, left: Value, right: Value) -> Value:
    """SPARQL's && (``conjunction``) or || (17.2): an error on one side is decided by a
    false (&&) or true (||) on the other, so one sure side may settle the answer; an
    ``UNSURE`` side is pyoxigraph's to decide (a value or an error)."""
    settles = not conjunction  # a side that is this decides, whatever the other is

    def combined(terms: Sequence[Term | None]) -> object:
        a = left(terms)
        if a is settles:
            return a
        b = right(terms)
        if b is settles:
            return b
        return UNSURE if a is UNSURE or b is UNSURE else a

    return combined


def _operand(e: ex.Expression, names: Sequence[str]) -> Value | None:
    match e:
        case ox.Variable() if e.value in names:
            i = names.index(e.value)
            return lambda terms: number(terms[i])
        case ox.Literal():
            constant = number(e)
            return None if constant is UNSURE else lambda terms: constant
        case ex.Binary(op, left, right) if op in _ARITHMETIC:
            a, b = _operand(left, names), _operand(right, names)
            if a is None or b is None:
                return None
            apply = _ARITHMETIC[op]
            return lambda terms: _arithmetic(apply, a(terms), b(terms))
    return None


def number(term: Term | None) -> object:
    """A numeric literal's value: int (xsd:integer), Decimal (xsd:decimal), float
    (xsd:double, not NaN); ``UNSURE`` for anything else."""
    if not isinstance(term, ox.Literal):
        return UNSURE
    return _literal_number(term)


@lru_cache(maxsize=1 << 16)
def _literal_number(term: ox.Literal) -> object:
    """``number`` of a literal, remembered: the same prices meet many runs' FILTERs (a pure
    function of the literal: a bounded process-wide cache keyed by value, holding no query)."""
    kind, text = term.datatype.value, term.value
    if kind == XSD + "integer" and _INTEGER.fullmatch(text):
        return _bounded(Decimal(text), int(text))
    if kind == XSD + "decimal" and _DECIMAL.fullmatch(text):
        return _bounded(Decimal(text))
    if kind == XSD + "double" and _DOUBLE.fullmatch(text):
        return float(text)
    return UNSURE


def _arithmetic(apply: Callable[[Number, Number], Number], a: object, b: object) -> object:
    if a is UNSURE or b is UNSURE:
        return UNSURE
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
    exponent = value.as_tuple().exponent
    if abs(value) >= _LIMIT or (isinstance(exponent, int) and exponent < -18):
        return UNSURE
    return value if keep is None else keep


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
