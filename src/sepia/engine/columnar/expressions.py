"""FILTER expressions as vector operations over the columns, exact under SPARQL's rules.

A FILTER made of numeric comparisons (``= != < > <= >=``), arithmetic (``+ - * /``,
unary ``-`` and ``+``), numeric constants, ``&&``, ``||`` and ``!`` over query variables
compiles to a tree of numpy operations run once over all the rows of a table (SPAseq's
``?amount2 * 10 <= ?amount1`` over every live run and candidate at once). The evaluator
(``r2r.expressions``: pyoxigraph) stays the judge; here each row gets one of four
answers:

- an xsd:integer or xsd:decimal value is a 64-bit mantissa times 10^-digits (at most 18
  digits: ``groups.NumericIds``), and every operation keeps each mantissa under 2^62
  (checked in floating point first, with room to spare), so sums, products, exact
  quotients and comparisons are exact integer arithmetic. SPARQL's promotion of integer
  to decimal changes no value, and pyoxigraph's bounds (64-bit integers, decimals of 18
  fractional digits under 1.7e20) are never reached inside 2^62;
- an error, where pyoxigraph raises one whatever the rest of the row: an unbound
  operand, a division by zero. It spreads through arithmetic and comparisons, ``!`` keeps
  it, and ``&&`` / ``||`` decide it as SPARQL 17.2 does (false && error is false, true
  || error is true); a FILTER's error drops the row;
- ``UNSURE``, where the vectors cannot tell exactly: another datatype (double, float,
  string, ill-typed literal), a mantissa that would leave 2^62, a product needing more
  than 18 fractional digits, a quotient not exact in 18 (pyoxigraph truncates or fails
  there). An unsure row goes to the evaluator once per distinct input, as before.

Compiled with a ``Context`` (the FILTER's dictionary: ``comparisons.vector_filtered``
does), terms beyond numbers are covered too (``columnar.terms``):

- ``=`` and ``!=`` of variables, constants and functions of one variable (``STR(?x)``),
  ``sameTerm``, ``IN`` / ``NOT IN`` (SPARQL defines them as ``||`` of ``=`` and ``&&`` of
  ``!=``), ``BOUND`` and ``isIRI`` / ``isURI`` / ``isBlank`` / ``isLiteral`` /
  ``isNumeric`` are decided from ids and term kinds where that is provably pyoxigraph's
  answer (``_equal``, ``_same_term``), unsure elsewhere;
- any other boolean node reading at most one variable (``regex``, ``STRSTARTS``,
  ``LANGMATCHES``, ``YEAR(?t) = 2020``, a comparison with a double) takes the rows the
  vectors are unsure of to the evaluator once per distinct id of that variable, cached by
  id across batches: decided on every row;
- a function of one variable is an operand too: its values (ids, once per distinct id
  of the variable) feed ``=`` and the numeric operations (``YEAR(?t1) < YEAR(?t2)``);
- any other node (two variables under a function, EXISTS) is unsure on every row, so
  ``&&`` and ``||`` around it still decide the rows their other side settles.

The expression is compiled once per evaluator; without a context, an expression of any
other shape than the numeric ones compiles to None and stays wholly the evaluator's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyoxigraph as ox

from sepia.algebra import expression as ex
from sepia.algebra.scope import FRESH, nodes
from sepia.engine.columnar.groups import LIMIT, NumericIds
from sepia.engine.columnar.tables import NO_ID, Ids, Table, distinct
from sepia.engine.columnar.terms import (
    BLANK,
    BOOLEAN,
    DATETIME,
    IRI,
    LANG,
    NUMBER,
    OTHER,
    STRING,
    UNBOUND,
    PerTerm,
    TermKinds,
    kind_of,
)
from sepia.engine.r2r.expressions import ExpressionEvaluator, calls, has_exists, variables_of
from sepia.engine.r2r.numeric import COMPARE
from sepia.engine.rows import Slots
from sepia.rdf.numbers import DECIMAL, INTEGER
from sepia.rdf.terms import canonical, term_to_nt
from sepia.rdf.vocabulary import XSD

FALSE, TRUE, ERROR, UNSURE = 0, 1, 2, 3
"""A boolean row's answer (``int8``); numbers use ``SURE``, ``ERROR`` and ``UNSURE``."""
SURE = 1
"""A number row whose value is exact."""
DIGITS = 18
"""pyoxigraph's decimals hold 18 fractional digits."""
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?P<whole>[0-9]*)(\.(?P<fraction>[0-9]*))?")
_POWERS = 10 ** np.arange(DIGITS + 1, dtype=np.int64)


@dataclass(frozen=True, slots=True)
class Numbers:
    """A numeric expression's value on each row: ``state`` (``SURE``, ``ERROR`` or
    ``UNSURE``), and where sure the value ``mantissa * 10^-digits``."""

    state: np.ndarray
    digits: Ids
    mantissa: Ids


class Inputs(Protocol):
    """What a compiled expression reads: a table's columns, their numeric values and terms."""

    size: int

    def column(self, slot: int) -> Numbers: ...

    def ids(self, slot: int | None) -> Ids: ...

    def terms(self, slot: int | None) -> TermColumn: ...

    def terms_of(self, ids: Ids) -> TermColumn: ...


Numeric = Callable[[Inputs], Numbers]
Boolean = Callable[[Inputs], np.ndarray]


def compiled(e: ex.Expression, slots: Slots, context: Context | None = None) -> Boolean | None:
    """The expression as a function of the inputs -> each row's ``FALSE`` / ``TRUE`` /
    ``ERROR`` / ``UNSURE``, or None where nothing of it is covered. Without a ``context``
    only the numeric shapes are (``Columns`` built without term kinds)."""
    found = _boolean(e, slots, context)
    return None if found is _undecided else found


def _boolean(e: ex.Expression, slots: Slots, context: Context | None) -> Boolean | None:
    """A boolean node: its vector form where it has one; with a ``context``, a node
    reading at most one variable completed by the evaluator once per distinct id, and
    any other node ``UNSURE`` on every row (so that ``&&`` / ``||`` around it may still
    decide)."""
    fast = _structural(e, slots, context)
    if context is None:
        return fast
    if not _logical(e) and (variables := per_term(e, context)) is not None:
        name = next(iter(variables), None)
        asked = PerTerm(e, name, context, (TRUE, FALSE, ERROR))
        slot = slots.index(name) if name in slots.names else None
        return _completed(fast, asked, slot)
    return fast or _undecided


def _structural(e: ex.Expression, slots: Slots, context: Context | None) -> Boolean | None:
    """A boolean node as vector operations, or None where its shape has none."""
    match e:
        case ex.Binary(ex.BinaryOperator.AND | ex.BinaryOperator.OR as op, left, right):
            a, b = _boolean(left, slots, context), _boolean(right, slots, context)
            if a is None or b is None:
                return None
            decide = _conjunction if op is ex.BinaryOperator.AND else _disjunction
            return lambda inputs: decide(a(inputs), b(inputs))
        case ex.Unary(ex.UnaryOperator.NOT, operand):
            inner = _boolean(operand, slots, context)
            return None if inner is None else lambda inputs: _negation(inner(inputs))
        case ex.Binary(op, left, right) if op in COMPARE:
            if context is not None and op in _EQUALITY:
                one, other = _term(left, slots, context), _term(right, slots, context)
                if one is not None and other is not None:
                    return _equality(one, other, negated=op is ex.BinaryOperator.NOT_EQUAL)
            x, y = _numeric(left, slots, context), _numeric(right, slots, context)
            if x is None or y is None:
                return None
            test = COMPARE[op]
            return lambda inputs: _compared(test, x(inputs), y(inputs))
    return None if context is None else _term_test(e, slots, context)


def _term_test(e: ex.Expression, slots: Slots, context: Context) -> Boolean | None:
    """sameTerm, BOUND, the isIRI family and IN / NOT IN in vector form, or None."""
    match e:
        case ex.Call("SAMETERM", (left, right)):
            a, b = _term(left, slots, context), _term(right, slots, context)
            if a is not None and b is not None:
                return lambda inputs: _same_term(a(inputs), b(inputs))
        case ex.Call("BOUND", (ox.Variable() as variable,)):
            if variable.value not in slots.names:
                return lambda inputs: np.full(inputs.size, FALSE, dtype=np.int8)
            slot = slots.index(variable.value)
            return lambda inputs: (inputs.ids(slot) != NO_ID).astype(np.int8)
        case ex.Call(function, (argument,)) if function in _KIND_TESTS:
            term = _term(argument, slots, context)
            if term is not None:
                answers = _KIND_TESTS[function]
                return lambda inputs: answers[term(inputs).kinds]
        case ex.In(value, options, negated) if options:
            tests = [_structural(ex.Binary(ex.BinaryOperator.EQUAL, value, o), slots, context)
                     or _undecided for o in options]

            def among(inputs: Inputs) -> np.ndarray:
                found = tests[0](inputs)
                for test in tests[1:]:
                    found = _disjunction(found, test(inputs))
                return _negation(found) if negated else found

            return among
    return None


def _numeric(e: ex.Expression, slots: Slots, context: Context | None = None) -> Numeric | None:
    """A numeric operand as a function of the inputs, or None where not covered (with a
    ``context``, a function of one variable too: ``YEAR(?t)``, ``STRLEN(?name)``)."""
    match e:
        case ox.Variable():
            if e.value not in slots.names:  # never bound: an error on every row
                return lambda inputs: _constant(inputs, ERROR, 0, 0)
            slot = slots.index(e.value)
            return lambda inputs: inputs.column(slot)
        case ox.Literal():
            found = constant_number(e)
            if found is None:
                return None
            digits, mantissa = found
            return lambda inputs: _constant(inputs, SURE, digits, mantissa)
        case ex.Unary(ex.UnaryOperator.MINUS | ex.UnaryOperator.PLUS as op, operand):
            inner = _numeric(operand, slots, context)
            if inner is None:
                return None
            if op is ex.UnaryOperator.PLUS:
                return inner
            return lambda inputs: _negated(inner(inputs))
        case ex.Binary(op, left, right) if op in _ARITHMETIC:
            x, y = _numeric(left, slots, context), _numeric(right, slots, context)
            if x is None or y is None:
                return None
            apply = _ARITHMETIC[op]
            return lambda inputs: apply(x(inputs), y(inputs))
    valued = None if context is None else _valued(e, slots, context)
    return None if valued is None else lambda inputs: inputs.terms_of(valued(inputs)).numbers


def _logical(e: ex.Expression) -> bool:
    """``&&``, ``||`` or ``!``: composed from their operands' answers."""
    return (isinstance(e, ex.Binary) and e.operator in _CONNECTIVES) or (
        isinstance(e, ex.Unary) and e.operator is ex.UnaryOperator.NOT)


def per_term(e: ex.Expression, context: Context) -> set[str] | None:
    """The variable(s) an expression reads, when they are at most one and it is a function
    of them (no EXISTS, aggregate, window read, fresh value or function the host answers),
    else None."""
    variables = variables_of(e)
    if len(variables) > 1 or has_exists(e) or any(calls(e, f) for f in _NOT_PER_TERM) or any(
            call.function in context.hosted for call in nodes(e, ex.FunctionCall)):
        return None
    return variables


def _completed(fast: Boolean | None, asked: PerTerm, slot: int | None) -> Boolean:
    """``fast``'s answers, its unsure rows (all rows without it) asked of the per-term
    evaluator by the id of the one variable read."""

    def decide(inputs: Inputs) -> np.ndarray:
        column = inputs.ids(slot)
        if fast is None:
            return asked.of(column)
        out = fast(inputs)
        unsure = out == UNSURE
        if unsure.any():
            out[unsure] = asked.of(column[unsure])
        return out

    return decide


def _undecided(inputs: Inputs) -> np.ndarray:
    """A node the vectors cannot decide: unsure on every row."""
    return np.full(inputs.size, UNSURE, dtype=np.int8)


def _term(e: ex.Expression, slots: Slots, context: Context) -> Term | None:
    """An operand as each row's term: a variable's column, a constant, or a function of
    one variable (``STR(?x)``, ``LANG(?x)``) valued by the evaluator once per distinct
    id; None for arithmetic and other shapes."""
    match e:
        case ox.Variable():
            slot = slots.index(e.value) if e.value in slots.names else None
            return lambda inputs: inputs.terms(slot)
        case ox.NamedNode() | ox.Literal():
            return context.constant(e)
    valued = _valued(e, slots, context)
    return None if valued is None else lambda inputs: inputs.terms_of(valued(inputs))


def _valued(e: ex.Expression, slots: Slots, context: Context) -> Callable[[Inputs], Ids] | None:
    """A call reading at most one variable as each row's value id (``NO_ID`` for an
    error), the evaluator asked once per distinct id of that variable; else None."""
    if not isinstance(e, ex.Call | ex.FunctionCall) or (
            variables := per_term(e, context)) is None:
        return None
    name = next(iter(variables), None)
    asked = PerTerm(e, name, context)
    slot = slots.index(name) if name in slots.names else None
    return lambda inputs: asked.of(inputs.ids(slot))


def _equality(a: Term, b: Term, *, negated: bool) -> Boolean:
    def decide(inputs: Inputs) -> np.ndarray:
        answers = _equal(a(inputs), b(inputs))
        return _negation(answers) if negated else answers

    return decide


def _equal(a: TermColumn, b: TermColumn) -> np.ndarray:
    """SPARQL's ``=`` (RDFterm-equal, 17.4.1.7, with pyoxigraph's value comparisons) where
    ids and kinds decide it: an unbound side is an error; one term (one id) is equal to
    itself, but for numbers and other literals; an IRI or blank node differs from every
    other term; literals of two different kinds among strings, language-tagged strings,
    booleans, numbers and dateTimes differ (pyoxigraph answers false, not an error), as do
    two distinct strings, language-tagged strings or booleans (canonical terms: distinct
    ids, distinct values); two integers or decimals compare by value. The rest (doubles,
    two dateTimes, a literal of another datatype or ill-formed) is unsure."""
    ka, kb, same = a.kinds, b.kinds, a.ids == b.ids
    out = np.full(len(ka), UNSURE, dtype=np.int8)
    known_a, known_b = (ka >= STRING) & (ka <= DATETIME), (kb >= STRING) & (kb <= DATETIME)
    plain = (ka == kb) & (ka >= STRING) & (ka <= BOOLEAN)
    node = (ka <= BLANK) | (kb <= BLANK)
    out[~same & (node | (known_a & known_b & ((ka != kb) | plain)))] = FALSE
    out[same & (ka != NUMBER) & (ka != OTHER)] = TRUE
    numbers = (ka == NUMBER) & (kb == NUMBER)
    if numbers.any():
        out[numbers] = _compared(np.equal, a.numbers, b.numbers)[numbers]
    out[(ka == UNBOUND) | (kb == UNBOUND)] = ERROR
    return out


def _same_term(a: TermColumn, b: TermColumn) -> np.ndarray:
    """sameTerm: one id is one term (canonical forms), but a double or float (NaN) is
    left unsure; different ids of different kinds, of IRIs, blank nodes, strings or
    booleans, or of two integers or decimals are different terms; unbound is an error."""
    ka, kb, same = a.kinds, b.kinds, a.ids == b.ids
    out = np.full(len(ka), UNSURE, dtype=np.int8)
    sure_a = (ka != NUMBER) | (a.numbers.state == SURE)
    sure_b = (kb != NUMBER) | (b.numbers.state == SURE)
    numbers = (ka == NUMBER) & (kb == NUMBER) & sure_a & sure_b
    out[~same & ((ka != kb) | (ka <= BOOLEAN) | numbers)] = FALSE
    out[same & sure_a] = TRUE
    out[(ka == UNBOUND) | (kb == UNBOUND)] = ERROR
    return out


def _kind_test(*kinds: int, unsure: tuple[int, ...] = ()) -> np.ndarray:
    """Answers by kind: ``TRUE`` for ``kinds``, ``UNSURE`` for ``unsure``, an error for
    ``UNBOUND``, else ``FALSE``."""
    answers = np.full(UNBOUND + 1, FALSE, dtype=np.int8)
    answers[list(kinds)] = TRUE
    answers[list(unsure)] = UNSURE
    answers[UNBOUND] = ERROR
    return answers


_KIND_TESTS = {
    "ISIRI": _kind_test(IRI), "ISURI": _kind_test(IRI), "ISBLANK": _kind_test(BLANK),
    "ISLITERAL": _kind_test(STRING, LANG, BOOLEAN, NUMBER, DATETIME, OTHER),
    "ISNUMERIC": _kind_test(NUMBER, unsure=(OTHER,)),
}
_EQUALITY = (ex.BinaryOperator.EQUAL, ex.BinaryOperator.NOT_EQUAL)
_CONNECTIVES = (ex.BinaryOperator.AND, ex.BinaryOperator.OR)
_NOT_PER_TERM = (*FRESH, "TIMESTAMP")
"""Calls whose value is not a function of the row (C-SPARQL's timestamp() reads the
windows)."""


def constant_number(literal: ox.Literal) -> tuple[int, int] | None:
    """(digits, mantissa) of an xsd:integer or xsd:decimal constant within the vector
    path's range, else None (the expression stays the evaluator's)."""
    kind, text = literal.datatype.value, literal.value
    if kind == XSD + "integer" and _INTEGER.fullmatch(text):
        digits, mantissa = 0, int(text)
    elif kind == XSD + "decimal" and (found := _DECIMAL.fullmatch(text)):
        whole, fraction = found["whole"], found["fraction"] or ""
        if not (whole or fraction):
            return None
        digits, mantissa = len(fraction), int((whole or "0") + fraction)
        mantissa = -mantissa if text.startswith("-") else mantissa
    else:
        return None
    return (digits, mantissa) if digits <= DIGITS and abs(mantissa) < 2**62 else None


@dataclass(frozen=True, slots=True)
class TermColumn:
    """An operand's term on each row: its id (``NO_ID`` where unbound or an error; a
    constant the dictionary does not hold has a negative id), kind and numeric value."""

    ids: Ids
    kinds: np.ndarray
    numbers: Numbers


Term = Callable[[Inputs], TermColumn]


class Context:
    """What the term operators compile with: the FILTER evaluator's dictionary and BASE
    (the per-term evaluators'), the functions its host answers (C-SPARQL's timestamp():
    never per term; only their names are kept, not the host they would hold alive) and
    the kinds of the ids."""

    def __init__(self, evaluator: ExpressionEvaluator) -> None:
        self.dictionary = evaluator.dictionary
        self.base = evaluator.base
        self.hosted = frozenset(evaluator.functions)
        self.kinds = TermKinds(evaluator.dictionary)
        self._absent: dict[str, int] = {}

    def constant(self, term: ox.NamedNode | ox.Literal) -> Term:
        """A constant as a column: its id looked up at each call (the dictionary may
        learn the term later; a query never adds it), else an id of its own below 0."""
        text = term_to_nt(canonical(term))
        kind = kind_of(text)
        number = constant_number(term) if isinstance(term, ox.Literal) else None
        state, digits, mantissa = (UNSURE, 0, 0) if number is None else (SURE, *number)
        lookup = self.dictionary.lookup

        def column(inputs: Inputs) -> TermColumn:
            found = lookup(text)
            if found is None:
                found = self._absent.setdefault(text, -1 - len(self._absent))
            size = inputs.size
            return TermColumn(np.full(size, found, dtype=np.int64),
                              np.full(size, kind, dtype=np.int8),
                              _constant(inputs, state, digits, mantissa))

        return column


class Columns:
    """The inputs of one table: each slot's numbers (and, given ``kinds``, terms) found
    once per distinct id."""

    def __init__(self, table: Table, numbers: NumericIds, kinds: TermKinds | None = None) -> None:
        self.table = table
        self.size = table.size
        self.numbers = numbers
        self.kinds = kinds
        self._found: dict[int, Numbers] = {}
        self._terms: dict[int | None, TermColumn] = {}

    def column(self, slot: int) -> Numbers:
        if slot not in self._found:
            self._found[slot] = self._read(self.table.columns.get(slot))
        return self._found[slot]

    def ids(self, slot: int | None) -> Ids:
        """A slot's ids, ``NO_ID`` where unbound (every row of a slot without a column)."""
        column = None if slot is None else self.table.columns.get(slot)
        return np.zeros(self.size, dtype=np.int64) if column is None else column

    def terms(self, slot: int | None) -> TermColumn:
        if slot not in self._terms:
            self._terms[slot] = self.terms_of(self.ids(slot))
        return self._terms[slot]

    def terms_of(self, ids: Ids) -> TermColumn:
        """The terms of an id column (a slot's, or a per-term function's values)."""
        assert self.kinds is not None, "term operands need the kinds of ids"
        return TermColumn(ids, self.kinds.of(ids), self._read(ids))

    def _read(self, column: Ids | None) -> Numbers:
        if column is None:  # unbound in every row
            return _constant(self, ERROR, 0, 0)
        ids = distinct(column)
        inverse = np.searchsorted(ids, column)
        found = classified(ids, *self.numbers.of(ids))
        return Numbers(found.state[inverse], found.digits[inverse], found.mantissa[inverse])


def classified(ids: Ids, kind: np.ndarray, digits: Ids, mantissa: Ids) -> Numbers:
    """``NumericIds``' decomposition of ``ids`` as ``Numbers``: sure for an integer or a
    decimal of at most ``DIGITS`` fractional digits, an error where unbound (``NO_ID``),
    else unsure (zeros where not sure)."""
    state = np.full(len(ids), UNSURE, dtype=np.int8)
    state[((kind == INTEGER) | (kind == DECIMAL)) & (digits <= DIGITS)] = SURE
    state[ids == 0] = ERROR  # NO_ID: unbound here
    sure = state == SURE
    return Numbers(state, np.where(sure, digits, 0), np.where(sure, mantissa, 0))


def _constant(inputs: Inputs, state: int, digits: int, mantissa: int) -> Numbers:
    size = inputs.size
    return Numbers(np.full(size, state, dtype=np.int8), np.full(size, digits, dtype=np.int64),
                   np.full(size, mantissa, dtype=np.int64))


def _combined(a: Numbers, b: Numbers) -> np.ndarray:
    """The state of an operation on ``a`` and ``b``: an error in either is the result's,
    else an unsure operand makes it unsure."""
    state = np.maximum(a.state, b.state)  # SURE < ERROR < UNSURE
    state[(a.state == ERROR) | (b.state == ERROR)] = ERROR
    return state


def _aligned(a: Numbers, b: Numbers, state: np.ndarray) -> tuple[Ids, Ids, Ids]:
    """Both mantissas at the larger number of digits (and those digits); a row where
    either would leave 2^62 becomes ``UNSURE`` in ``state`` (changed in place)."""
    top = np.maximum(a.digits, b.digits)
    up_a, up_b = top - a.digits, top - b.digits
    fits = (np.abs(a.mantissa) * _POWERS[up_a].astype(float) < LIMIT) & (
        np.abs(b.mantissa) * _POWERS[up_b].astype(float) < LIMIT)
    state[(state == SURE) & ~fits] = UNSURE
    usable = state == SURE
    x = np.where(usable, a.mantissa, 0) * np.where(usable, _POWERS[up_a], 1)
    y = np.where(usable, b.mantissa, 0) * np.where(usable, _POWERS[up_b], 1)
    return x, y, top


def _bounded(state: np.ndarray, digits: Ids, mantissa: Ids) -> Numbers:
    """A result, unsure where its mantissa reaches 2^62."""
    state[(state == SURE) & (np.abs(mantissa) >= 2**62)] = UNSURE
    sure = state == SURE
    return Numbers(state, np.where(sure, digits, 0), np.where(sure, mantissa, 0))


def _sum(a: Numbers, b: Numbers, sign: int) -> Numbers:
    state = _combined(a, b)
    x, y, top = _aligned(a, b, state)
    return _bounded(state, top, x + sign * y)


def _added(a: Numbers, b: Numbers) -> Numbers:
    return _sum(a, b, 1)


def _subtracted(a: Numbers, b: Numbers) -> Numbers:
    return _sum(a, b, -1)


def _multiplied(a: Numbers, b: Numbers) -> Numbers:
    """Exact where the product needs at most 18 fractional digits (pyoxigraph fails a
    decimal product that needs more) and stays under 2^62."""
    state = _combined(a, b)
    digits = a.digits + b.digits
    fits = np.abs(a.mantissa).astype(float) * np.abs(b.mantissa) < LIMIT
    state[(state == SURE) & ~(fits & (digits <= DIGITS))] = UNSURE
    sure = state == SURE
    return _bounded(state, digits, np.where(sure, a.mantissa, 0) * np.where(sure, b.mantissa, 0))


def _divided(a: Numbers, b: Numbers) -> Numbers:
    """Exact where the quotient has at most 18 fractional digits (found at the most
    digits the dividend's mantissa can be scaled to); a zero divisor is an error.
    pyoxigraph scales the dividend up in 128 bits by as many digits as fit, and fails
    (an error) when those are fewer than the divisor's fractional digits: 0 / 0.5 and
    10^20 / 1.5 fail there. Rows near that (a zero dividend over a divisor with digits,
    a dividend times 10^(18 + the divisor's digits) past 10^38) are left unsure."""
    state = _combined(a, b)
    state[(state == SURE) & (b.mantissa == 0)] = ERROR
    wide = np.abs(a.mantissa) * _POWERS[np.clip(DIGITS - a.digits, 0, DIGITS)].astype(
        float) * _POWERS[b.digits].astype(float) >= 1e38
    state[(state == SURE) & (wide | ((a.mantissa == 0) & (b.digits > 0)))] = UNSURE
    sure = state == SURE
    m_a = np.where(sure, np.abs(a.mantissa), 0)
    m_b = np.where(sure, np.abs(b.mantissa), 1)
    room = np.floor(np.log10(LIMIT / np.maximum(m_a, 1))).astype(np.int64)
    scale = np.clip(np.minimum(DIGITS + b.digits - a.digits, room), 0, DIGITS)
    quotient, remainder = np.divmod(m_a * _POWERS[scale], m_b)
    state[sure & (remainder != 0)] = UNSURE
    digits = scale + a.digits - b.digits
    state[(state == SURE) & (digits < 0)] = UNSURE  # a dividend too wide to scale
    return _bounded(state, digits, np.sign(a.mantissa) * np.sign(b.mantissa) * quotient)


def _negated(a: Numbers) -> Numbers:
    return Numbers(a.state, a.digits, -a.mantissa)


_ARITHMETIC: dict[ex.BinaryOperator, Callable[[Numbers, Numbers], Numbers]] = {
    ex.BinaryOperator.ADD: _added,
    ex.BinaryOperator.SUBTRACT: _subtracted,
    ex.BinaryOperator.MULTIPLY: _multiplied,
    ex.BinaryOperator.DIVIDE: _divided,
}


def _compared(test: Callable[[Ids, Ids], np.ndarray], a: Numbers, b: Numbers) -> np.ndarray:
    state = _combined(a, b)
    x, y, _ = _aligned(a, b, state)
    return np.where(state == SURE, test(x, y).astype(np.int8), state).astype(np.int8)


def _conjunction(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """SPARQL's && (17.2): false on either side decides; true && true is true; else an
    unsure side leaves it unsure, and what remains is an error."""
    out = np.where((a == UNSURE) | (b == UNSURE), UNSURE, ERROR).astype(np.int8)
    out[(a == TRUE) & (b == TRUE)] = TRUE
    out[(a == FALSE) | (b == FALSE)] = FALSE
    return out


def _disjunction(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """SPARQL's || (17.2): true on either side decides; false || false is false; else
    an unsure side leaves it unsure, and what remains is an error."""
    out = np.where((a == UNSURE) | (b == UNSURE), UNSURE, ERROR).astype(np.int8)
    out[(a == FALSE) & (b == FALSE)] = FALSE
    out[(a == TRUE) | (b == TRUE)] = TRUE
    return out


def _negation(a: np.ndarray) -> np.ndarray:
    """SPARQL's ``!``: an error or an unsure row stays so."""
    return np.where(a == TRUE, FALSE, np.where(a == FALSE, TRUE, a)).astype(np.int8)

