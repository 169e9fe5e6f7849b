"""FILTERs of order comparisons between variables, over pairs, as integer comparisons.

A SPAseq state's FILTER over (run, candidate) pairs (head and shoulders' ``?p3 < ?p2 &&
?p3 > ?p1``) is asked of every pair a ``;`` state's rounds meet: W4's head and shoulders
asks 37M of them. ``columnar.expressions`` decides each pair exactly, but builds each
operand's state, digits and mantissa per pair and aligns them per comparison. Where the
FILTER is only ``<``, ``>``, ``<=``, ``>=`` between two variables under ``&&``, ``||``
and ``!``, and every value it reads on either side is an exact xsd:integer or
xsd:decimal (``SURE``) that fits at the largest number of fractional digits among them,
each value is one 64-bit integer on a common scale, found once per row of its side:
a comparison of two values is then that of their integers, and with no error or unsure
operand ``&&``, ``||`` and ``!`` are plain booleans. These are the answers
``columnar.expressions`` gives on the same rows (its comparisons of sure values are
exact); anything else (another shape, a double, an unbound value, a value too wide) is
left to it (``ordering`` or ``scaled`` give None).

A side may also be a variable times, plus or minus an xsd:integer or xsd:decimal
constant (credit cards' ``?amount2 * 10 <= ?amount1``): each side is then one integer on
a scale with room for the constants' digits, taken only where every side's integer stays
under 2^62 and a product's fractional digits under 18 - where ``columnar.expressions``
would also compute each row's sum or product and comparison exactly (``on_one_scale`` gives
None otherwise). No operation on such values can raise an error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple
from weakref import WeakKeyDictionary

import numpy as np
import pyoxigraph as ox

from sepia.algebra import expression as ex
from sepia.engine.columnar.expressions import (
    DIGITS,
    ERROR,
    SURE,
    UNSURE,
    Columns,
    Numbers,
    classified,
    constant_number,
)
from sepia.engine.columnar.groups import LIMIT, NumericIds
from sepia.engine.columnar.tables import NO_ID, SMALL, Ids, Table
from sepia.engine.r2r.expressions import ExpressionEvaluator
from sepia.engine.rows import Slots
from sepia.rdf.numbers import DECIMAL, INTEGER


@dataclass(frozen=True)
class Operand:
    """A compared side: ``?slot * times + plus``, each constant ``(digits, mantissa)``
    (a value ``mantissa * 10^-digits``); a lone variable is times 1 plus 0."""

    slot: int
    times: tuple[int, int] = (0, 1)
    plus: tuple[int, int] = (0, 0)


Values = Callable[[Operand], Ids]
"""A side's values on the common integer scale, one per pair."""
Decide = Callable[[Values], np.ndarray]
"""A FILTER's answer per pair (booleans) from its sides' values."""


class Ordering(NamedTuple):
    """A FILTER compiled: its decision, the slots it reads and the sides it compares."""

    decide: Decide
    read: frozenset[int]
    terms: frozenset[Operand]


class Scaled(NamedTuple):
    """Each read slot's values per row of its side (and whether that side is the runs'),
    as integers at ``digits`` fractional digits."""

    values: dict[int, tuple[Ids, bool]]
    digits: int


_ORDER: dict[ex.BinaryOperator, Callable[[Ids, Ids], np.ndarray]] = {
    ex.BinaryOperator.LESS: np.less,
    ex.BinaryOperator.GREATER: np.greater,
    ex.BinaryOperator.LESS_OR_EQUAL: np.less_equal,
    ex.BinaryOperator.GREATER_OR_EQUAL: np.greater_equal,
}
_POWERS = 10 ** np.arange(19, dtype=np.int64)
_EXACT = frozenset((INTEGER, DECIMAL))

_COMPILED: WeakKeyDictionary[ExpressionEvaluator, Ordering | None] = WeakKeyDictionary()
"""Each evaluator's ordering, or None: compiled once."""


def ordering(check: ExpressionEvaluator, slots: Slots) -> Ordering | None:
    """The FILTER as a decision over its sides' scaled values, or None where its shape
    is not order comparisons of variables (or of a variable and a constant, added or
    multiplied: module docstring)."""
    if check not in _COMPILED:
        terms: set[Operand] = set()
        decide = _tree(check.expression, slots, terms)
        _COMPILED[check] = None if decide is None else Ordering(
            decide, frozenset(t.slot for t in terms), frozenset(terms))
    return _COMPILED[check]


Bounds = Callable[[int], tuple[Ids, Ids]]
"""A slot's least and greatest scaled value per run: its own value twice where the runs
bind it, else the least and greatest of its partition's candidates."""
Possible = Callable[[Bounds], np.ndarray]
"""Whether each run could keep some candidate of its partition, from the slots' bounds."""

_EXISTS: dict[ex.BinaryOperator, Callable[[Ids, Ids, Ids, Ids], np.ndarray]] = {
    ex.BinaryOperator.LESS: lambda lx, hx, ly, hy: lx < hy,
    ex.BinaryOperator.GREATER: lambda lx, hx, ly, hy: hx > ly,
    ex.BinaryOperator.LESS_OR_EQUAL: lambda lx, hx, ly, hy: lx <= hy,
    ex.BinaryOperator.GREATER_OR_EQUAL: lambda lx, hx, ly, hy: hx >= ly,
}
"""Whether some x in [lx, hx] and y in [ly, hy] compare so."""
_POSSIBLE: WeakKeyDictionary[ExpressionEvaluator, Possible | None] = WeakKeyDictionary()


def possible(check: ExpressionEvaluator, slots: Slots) -> Possible | None:
    """A test each run must pass to keep any candidate under an ``ordering`` FILTER
    without ``!``: each comparison could hold for values within the slots' bounds, and
    ``&&`` / ``||`` of those. None for other shapes. A run failing it pairs with none of
    its partition's candidates (W4's head and shoulders: a run waiting for a price above
    its earlier peak, none of its partition's prices in the span above it)."""
    if check not in _POSSIBLE:
        _POSSIBLE[check] = _bounds_tree(check.expression, slots)
    return _POSSIBLE[check]


def _bounds_tree(e: ex.Expression, slots: Slots) -> Possible | None:
    match e:
        case ex.Binary(ex.BinaryOperator.AND | ex.BinaryOperator.OR as op, left, right):
            a, b = _bounds_tree(left, slots), _bounds_tree(right, slots)
            if a is None or b is None:
                return None
            join = np.logical_and if op is ex.BinaryOperator.AND else np.logical_or
            return lambda bounds: join(a(bounds), b(bounds))
        case ex.Binary(op, ox.Variable() as left, ox.Variable() as right) if op in _EXISTS:
            if left.value not in slots.names or right.value not in slots.names:
                return None
            x, y, exists = slots.index(left.value), slots.index(right.value), _EXISTS[op]
            return lambda bounds: exists(*bounds(x), *bounds(y))
    return None


def runs_possible(
    test: Possible, values: dict[int, tuple[Ids, bool]], segment: Ids, starts: Ids
) -> np.ndarray:
    """``possible``'s test of each run: the candidates' values bounded per partition
    (``starts``: where each partition's candidates start, in partition order; ``segment``:
    each run's partition among them)."""

    def bounds(slot: int) -> tuple[Ids, Ids]:
        side, of_runs = values[slot]
        if of_runs:
            return side, side
        return (np.minimum.reduceat(side, starts)[segment],
                np.maximum.reduceat(side, starts)[segment])

    return test(bounds)


def _tree(e: ex.Expression, slots: Slots, terms: set[Operand]) -> Decide | None:
    """A node as a decision, adding the sides it compares to ``terms``; None if not
    covered."""
    match e:
        case ex.Binary(ex.BinaryOperator.AND | ex.BinaryOperator.OR as op, left, right):
            a, b = _tree(left, slots, terms), _tree(right, slots, terms)
            if a is None or b is None:
                return None
            join = np.logical_and if op is ex.BinaryOperator.AND else np.logical_or
            return lambda values: join(a(values), b(values))
        case ex.Unary(ex.UnaryOperator.NOT, operand):
            inner = _tree(operand, slots, terms)
            return None if inner is None else lambda values: ~inner(values)
        case ex.Binary(op, left, right) if op in _ORDER:
            x, y, test = _term(left, slots), _term(right, slots), _ORDER[op]
            if x is None or y is None:
                return None
            terms.update((x, y))
            return lambda values: test(values(x), values(y))
    return None


_MINUS_ONE = (0, -1)


def _term(e: ex.Expression, slots: Slots) -> Operand | None:
    """A compared side as a ``Operand``: a variable, or one times, plus or minus an exact
    constant (either way round); None for anything else."""
    match e:
        case ox.Variable() if e.value in slots.names:
            return Operand(slots.index(e.value))
        case ex.Binary(op, ox.Variable() as v, ox.Literal() as c) | ex.Binary(
            op, ox.Literal() as c, ox.Variable() as v
        ) if v.value in slots.names and (k := constant_number(c)) is not None:
            slot, first = slots.index(v.value), e.left is v
            match op:
                case ex.BinaryOperator.MULTIPLY:
                    return Operand(slot, times=k)
                case ex.BinaryOperator.ADD:
                    return Operand(slot, plus=k)
                case ex.BinaryOperator.SUBTRACT if first:
                    return Operand(slot, plus=(k[0], -k[1]))
                case ex.BinaryOperator.SUBTRACT:
                    return Operand(slot, times=_MINUS_ONE, plus=k)
    return None


def scaled(numbers: list[Numbers]) -> tuple[list[Ids], int] | None:
    """Each column's values as integers at their common (largest) number of fractional
    digits, and those digits; None unless every value is sure and fits under 2^62
    scaled."""
    if any(not (n.state == SURE).all() for n in numbers):
        return None
    top = max((int(n.digits.max()) for n in numbers if len(n.digits)), default=0)
    out = []
    for n in numbers:
        if not len(n.digits) or int(n.digits.min()) == top:  # all at the scale already
            if len(n.digits) and float(max(int(n.mantissa.max()), -int(n.mantissa.min()))) >= LIMIT:
                return None
            out.append(n.mantissa)
            continue
        power = _POWERS[top - n.digits]
        if (np.abs(n.mantissa) * power.astype(float) >= LIMIT).any():
            return None
        out.append(n.mantissa * power)
    return out, top


def pairs_kept(
    decide: Decide, values: dict[Operand, tuple[Ids, bool]], run: Ids, option: Ids
) -> np.ndarray:
    """The pairs (``run``, ``option``: rows of the runs and of the candidates) the
    FILTER keeps, from each side's values per row of its side (``on_one_scale``; ``of_runs``:
    the runs'), gathered to the pairs once per side."""
    gathered: dict[Operand, Ids] = {}

    def value(term: Operand) -> Ids:
        if term not in gathered:
            side, of_runs = values[term]
            gathered[term] = side[run if of_runs else option]
        return gathered[term]

    return decide(value)


def on_one_scale(
    terms: frozenset[Operand], scaled: Scaled
) -> dict[Operand, tuple[Ids, bool]] | None:
    """Each side's values per row of its slot's side as integers at one scale, with room
    for every constant's digits; None where a product would need more than 18 fractional
    digits at some row's digits or a side would leave 2^62 (``columnar.expressions``
    is exact on every row otherwise: module docstring)."""
    top = scaled.digits
    if any(top + t.times[0] > DIGITS for t in terms):
        return None
    scale = max((max(top + t.times[0], t.plus[0]) for t in terms), default=top)
    out = {}
    for t in terms:
        side, of_runs = scaled.values[t.slot]
        times = t.times[1] * 10 ** (scale - top - t.times[0])
        plus = t.plus[1] * 10 ** (scale - t.plus[0])
        if times == 1 and plus == 0:  # ``scaled`` bounded it already
            out[t] = side, of_runs
            continue
        widest = int(np.abs(side).max()) if len(side) else 0
        if abs(times) >= LIMIT or widest * abs(times) + abs(plus) >= LIMIT:
            return None
        out[t] = side * times + plus, of_runs
    return out


def read_numbers(column: Ids, numbers: NumericIds) -> Numbers:
    """``Columns``'s numbers of an id column, by one binary search of each id (in sorted
    order) among the ids ``numbers`` knows when it knows them all, else through
    ``Columns`` (a sort of the column, a search per distinct id). For runs' values: they
    were candidates' before, so known, and are read again at each state's step (W4's
    head and shoulders reads 2.8M run rows); a span's candidates are mostly new. A few
    ids (a paced instant's) are searched as they come and classified in Python."""
    known = numbers.ids
    few = len(column) <= SMALL
    if few:
        at = np.searchsorted(known, column)
    else:
        order = np.argsort(column)
        at = np.empty(len(column), dtype=np.int64)
        at[order] = np.searchsorted(known, column[order])  # in order: 3x faster on W4's runs
    if not len(known) or (at == len(known)).any() or (known[at] != column).any():
        return Columns(Table({0: column}, len(column)), numbers).column(0)
    if few:
        return _few_classified(column.tolist(), numbers.kind[at].tolist(),
                               numbers.digits[at].tolist(), numbers.mantissa[at].tolist())
    return classified(column, numbers.kind[at], numbers.digits[at], numbers.mantissa[at])


def _few_classified(
    ids: list[int], kind: list[int], digits: list[int], mantissa: list[int]
) -> Numbers:
    """``expressions.classified`` of a few ids, on lists."""
    state = [ERROR if i == NO_ID else SURE if k in _EXACT and d <= DIGITS else UNSURE
             for i, k, d in zip(ids, kind, digits, strict=True)]
    sure = [s == SURE for s in state]
    return Numbers(np.array(state, dtype=np.int8),
                   np.array([d if y else 0 for d, y in zip(digits, sure, strict=True)],
                            dtype=np.int64),
                   np.array([m if y else 0 for m, y in zip(mantissa, sure, strict=True)],
                            dtype=np.int64))
