"""GROUP BY over columns: COUNT, SUM, AVG, MIN and MAX as vector reductions per group.

At each evaluation the group's input is a ``Table`` (the solutions of its pattern); the key
columns number the groups (``numpy.unique``), each aggregate's argument column is cut into
distinct (group, term) pairs with their multiplicities, and the reductions run on those
pairs. Exactness is the maintained GROUP BY's (``sepia.engine.r2r.aggregates``), from the
same numeric values (``r2r.numbers.Terms``: pyoxigraph's) and the same result literals
(``Sum``, ``average``, ``number_literal``, ``extreme``):

- integers and decimals are exact fixed-point numbers: a term's value is a 64-bit mantissa
  times 10^-digits, and a group's values are summed (SUM, AVG) or compared (MIN, MAX) as
  64-bit integers at the largest number of digits the evaluation meets, when every bound
  shows that no sum or product leaves 2^62; the total and average are then the
  maintained path's (``Sum.total``, ``mean``) computed from that sum directly;
- a group holding a float, a double, a non-number or a value too wide for that takes the
  per-group path: its distinct values folded into a ``Sum`` (SUM, AVG) or handed to
  ``extreme`` (MIN, MAX), as the maintained path does; so do MIN and MAX among equal
  numbers of different terms (1 and 1.0): ``extreme`` picks one;
- an unbound argument (a BIND's error below the group: ``NO_ID`` in the column) makes
  SUM, AVG, MIN and MAX unbound and is not counted by COUNT;
- PARTIAL_SUM is the group's ``Sum`` state as a literal (``rdf.aggregates``), from the
  same two paths; it is always bound, a non-number or unbound value an error counted in it.

Results are term ids (``NO_ID`` where unbound): one Python step per group at most (the
literal of its value), none per row.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from sepia.engine.columnar.tables import NO_ID, Ids, Table
from sepia.engine.r2r.aggregates import SUMS, AggregateSpec, GroupBy
from sepia.engine.r2r.numbers import NUMERIC_TEXT, Terms, average, extreme, number_literal
from sepia.rdf.numbers import (
    DECIMAL,
    I64,
    I128,
    INTEGER,
    SCALE,
    Sum,
    number_text,
    scaled_state_text,
)

NOT_NUMBER, WIDE, UNBOUND = 4, 5, 6
"""Kinds beyond the numeric ones (``r2r.numbers``): a term that is no number, an integer or
decimal whose mantissa does not fit the vector path, and no term (``NO_ID``)."""
LIMIT = float(2**62)
"""Sums and products stay under this (checked in floating point, with room to spare)."""
_NONE = np.empty(0, dtype=np.int64)


class NumericIds:
    """Each term id's numeric value as vector columns (kind, digits, mantissa: the value is
    mantissa * 10^-digits for integers and decimals), found once per id through ``Terms``.
    A cache keyed by ids: the dictionary tells it of the ids it forgets."""

    def __init__(self, terms: Terms) -> None:
        self.terms = terms
        self.ids: Ids = _NONE
        """Known ids, sorted; the columns below are aligned with it."""
        self.kind: np.ndarray = np.empty(0, dtype=np.int8)
        self.digits: np.ndarray = np.empty(0, dtype=np.int64)
        self.mantissa: Ids = _NONE
        terms.dictionary.watch(self)

    def forget_ids(self, dropped: set[int]) -> None:
        keep = ~np.isin(self.ids, np.fromiter(dropped, dtype=np.int64, count=len(dropped)))
        self.ids, self.kind, self.digits, self.mantissa = (
            c[keep] for c in (self.ids, self.kind, self.digits, self.mantissa)
        )

    def of(self, ids: Ids) -> tuple[np.ndarray, Ids, Ids]:
        """(kind, digits, mantissa) of each of ``ids`` (sorted and distinct). The ids'
        places are sought once, and again only after ids were learnt (a window evaluation
        mostly meets known ids: W3's sought them twice, 6% of its stateful task)."""
        at = np.searchsorted(self.ids, ids)
        new = np.invert(self._found(ids, at)) & (ids != NO_ID)
        if new.any():
            self._learn(ids[new])
            at = np.searchsorted(self.ids, ids)
        at = np.minimum(at, max(len(self.ids) - 1, 0))
        if not len(self.ids):
            return np.full(len(ids), UNBOUND, dtype=np.int8), np.zeros_like(ids), np.zeros_like(ids)
        kind = np.where(ids == NO_ID, UNBOUND, self.kind[at]).astype(np.int8)
        return kind, self.digits[at], self.mantissa[at]

    def learn(self, ids: Ids) -> None:
        """Find the values of ``ids`` (any order, repeats) not known yet: a window calls
        this as single elements arrive, so that an evaluation meets them known (W3 learnt
        ~500 new prices per evaluation, a third of its cost at a paced rate)."""
        ids = np.unique(ids)
        self._learn(ids[np.invert(self._known(ids)) & (ids != NO_ID)])

    def taught(self, ids: Ids, kind: Ids, digits: Ids, mantissa: Ids) -> None:
        """Take the values of ``ids`` (sorted, distinct) found elsewhere, exactly as
        ``_learn`` finds them (the columnar reader works out a block's integers and
        decimals from their texts on its own thread), for those not known yet."""
        new = np.flatnonzero(np.invert(self._known(ids)))
        if len(new):
            self._added(ids[new], kind[new].astype(np.int8), digits[new], mantissa[new])

    def _known(self, ids: Ids) -> np.ndarray:
        return self._found(ids, np.searchsorted(self.ids, ids))

    def _found(self, ids: Ids, at: Ids) -> np.ndarray:
        """Whether each of ``ids`` is known, given its place ``at`` in the known ids."""
        found = at < len(self.ids)
        found[found] = self.ids[at[found]] == ids[found]
        return found

    def _learn(self, new: Ids) -> None:
        if not len(new):
            return
        listed = new.tolist()
        text_of = self.terms.dictionary.decode_text
        found = [_from_text(text_of(i)) for i in listed]
        rest = [i for i, f in zip(listed, found, strict=True) if f is None]
        if rest:  # each id is its own canonical form (the dictionary's)
            self.terms.canonical(rest)
            number = self.terms.number
            found = [f or _decomposed(number(i)) for i, f in zip(listed, found, strict=True)]
        kind, digits, mantissa = (np.array(c, dtype=t) for c, t in zip(
            zip(*found, strict=True), (np.int8, np.int64, np.int64), strict=True))
        self._added(new, kind, digits, mantissa)

    def _added(self, new: Ids, kind: np.ndarray, digits: Ids, mantissa: Ids) -> None:
        """The values of ``new`` (ids not known) added to the columns, kept sorted."""
        columns = [np.concatenate(pair) for pair in ((self.ids, new), (self.kind, kind),
                                                       (self.digits, digits),
                                                       (self.mantissa, mantissa))]
        if (np.diff(columns[0]) < 0).any():  # new ids are mostly the largest: no sort
            order = np.argsort(columns[0], kind="stable")
            columns = [c[order] for c in columns]
        self.ids, self.kind, self.digits, self.mantissa = columns


def _from_text(text: str) -> tuple[int, int, int] | None:
    """``_decomposed`` read from a term's canonical N-Triples text where the text alone
    says (an IRI, a blank node, a plain string; an integer or decimal whose mantissa fits),
    else None (``Terms`` decides)."""
    if text[0] != '"' or text[-1] == '"':
        return NOT_NUMBER, 0, 0
    found = NUMERIC_TEXT.fullmatch(text)
    if found is None or found["lexical"] == "-0":
        return None
    whole, _, fraction = found["lexical"].partition(".")
    if fraction and found["type"] == "integer":
        return None
    mantissa = int(whole + fraction)
    if not -(2**62) < mantissa < 2**62:
        return None
    return (INTEGER if found["type"] == "integer" else DECIMAL), len(fraction), mantissa


def _decomposed(number: tuple | None) -> tuple[int, int, int]:
    """(kind, digits, mantissa) of a ``Terms`` number (None: not a number)."""
    if number is None:
        return NOT_NUMBER, 0, 0
    kind, value = number
    if kind not in (INTEGER, DECIMAL):
        return kind, 0, 0
    digits = 18
    while digits and value % 10 == 0:
        value //= 10
        digits -= 1
    return (kind, digits, value) if -(2**62) < value < 2**62 else (WIDE, 0, 0)


@dataclass(frozen=True, slots=True)
class Pairs:
    """An aggregate's input as distinct (group, term) pairs, sorted by group, with how
    many rows hold each; ``starts`` indexes each group's first pair."""

    group: Ids
    term: Ids
    count: Ids
    starts: Ids

    @classmethod
    def of(cls, groups: Ids, terms: Ids, size: int, distinct: bool) -> Pairs:
        values, rank = np.unique(terms, return_inverse=True)
        width = max(len(values), 1)
        keys, counts = np.unique(groups * width + rank.reshape(-1), return_counts=True)
        group = keys // width
        term = values[keys % width] if len(values) else _NONE
        counts = np.ones_like(counts) if distinct else counts
        return cls(group, term, counts, np.searchsorted(group, np.arange(size)))

    def per_group(self, flags: np.ndarray, size: int) -> np.ndarray:
        """Whether some pair of each group has ``flags``."""
        return np.bincount(self.group[flags], minlength=size) > 0

    def in_group(self, g: int) -> slice:
        stop = self.starts[g + 1] if g + 1 < len(self.starts) else len(self.group)
        return slice(int(self.starts[g]), int(stop))


def group_by(table: Table, node: GroupBy, numbers: NumericIds) -> Table:
    """The node's groups, one row each: its keys and its aggregates' values."""
    groups, size, columns = _groups(table, node.keys)
    for spec in node.aggregates:
        columns[spec.target] = _aggregate(spec, table, groups, size, numbers)
    return Table(columns, size)


def _groups(table: Table, keys: tuple[int, ...]) -> tuple[Ids, int, dict[int, Ids]]:
    """Each row's group number, the number of groups and the groups' key columns (a key
    no row binds stays unbound: no column). No key: one group, even over no rows."""
    if not keys:
        return np.zeros(table.size, dtype=np.int64), 1, {}
    present = [k for k in keys if k in table.columns]
    if not table.size or not present:
        return np.zeros(table.size, dtype=np.int64), min(table.size, 1), {}
    if len(present) == 1:
        values, inverse = np.unique(table.columns[present[0]], return_inverse=True)
        return inverse.reshape(-1), len(values), {present[0]: values}
    stacked = np.stack([table.columns[k] for k in present], axis=1)
    values, inverse = np.unique(stacked, axis=0, return_inverse=True)
    return inverse.reshape(-1), len(values), {k: values[:, i] for i, k in enumerate(present)}


def _aggregate(spec: AggregateSpec, table: Table, groups: Ids, size: int,
               numbers: NumericIds) -> Ids:
    """One aggregate's value per group (term ids, ``NO_ID`` for unbound)."""
    if spec.argument is None:
        argument = np.full(table.size, 1, dtype=np.int64)  # COUNT(*): every row counts
        if spec.distinct:
            argument = _row_numbers(table)
    else:
        argument = table.columns.get(spec.argument, np.zeros(table.size, dtype=np.int64))
    if spec.function == "COUNT":
        return _counts(argument, groups, size, spec.distinct, numbers.terms)
    pairs = Pairs.of(groups, argument, size, spec.distinct)
    if spec.function in SUMS:
        return _sums(pairs, size, spec.function, numbers)
    return _extremes(pairs, size, spec.function == "MAX", numbers)


def _row_numbers(table: Table) -> Ids:
    """Each row's number among the distinct rows (from 1: ``NO_ID`` is unbound)."""
    if not table.columns:
        return np.ones(table.size, dtype=np.int64)
    stacked = np.stack(list(table.columns.values()), axis=1)
    _, inverse = np.unique(stacked, axis=0, return_inverse=True)
    return inverse.reshape(-1) + 1


def _counts(argument: Ids, groups: Ids, size: int, distinct: bool, terms: Terms) -> Ids:
    """COUNT: the bound values per group (distinct ones with DISTINCT)."""
    bound = argument != NO_ID
    if distinct:
        pairs = Pairs.of(groups[bound], argument[bound], size, True)
        counts = np.bincount(pairs.group, minlength=size)
    else:
        counts = np.bincount(groups[bound], minlength=size)
    values, inverse = np.unique(counts, return_inverse=True)
    ids = np.array([terms.literal(str(c), INTEGER) for c in values.tolist()], dtype=np.int64)
    return ids[inverse.reshape(-1)] if size else _NONE


def _units(pairs: Pairs, vector: np.ndarray, digits: Ids, mantissa: Ids,
           weighted: bool) -> tuple[Ids, int] | None:
    """The values of the pairs in ``vector`` groups as integers at a common number of
    digits (times their counts when ``weighted``), and that number; None when some
    product or sum could leave ``LIMIT``. Pairs of other groups are 0."""
    usable = vector[pairs.group]
    if not usable.any():
        return np.zeros(len(pairs.group), dtype=np.int64), 0
    top = int(digits[usable].max())
    shift = np.where(usable, top - digits, 0)
    size = np.abs(mantissa.astype(np.float64)) * np.where(usable, 10.0**shift, 0.0)
    if weighted:
        size *= pairs.count
    totals = np.add.reduceat(size, pairs.starts) if len(size) else size
    if (size > LIMIT).any() or (len(totals) and (totals > LIMIT).any()):
        return None
    units = np.where(usable, mantissa * 10**shift, 0)
    return (units * pairs.count if weighted else units), top


def _sums(pairs: Pairs, size: int, function: str, numbers: NumericIds) -> Ids:
    """SUM, AVG or PARTIAL_SUM per group (PARTIAL_SUM: the ``Sum`` state, always bound, a
    group's errors counted in it)."""
    terms = numbers.terms
    mean, partial = function == "AVG", function == "PARTIAL_SUM"
    kind, digits, mantissa = numbers.of(pairs.term)
    errors = pairs.per_group((kind == NOT_NUMBER) | (kind == UNBOUND), size)
    vector = ~errors & ~pairs.per_group(kind > DECIMAL, size)
    found = _units(pairs, vector, digits, mantissa, weighted=True)
    if found is None:
        vector[:] = False
        found = np.zeros(len(pairs.group), dtype=np.int64), 0
    units, scale = found
    nonempty = pairs.starts < len(pairs.group)
    totals = _reduced(np.add, units, pairs, size, nonempty)
    counts = _reduced(np.add, pairs.count, pairs, size, nonempty)
    decimals = _reduced(np.add, np.where(kind == DECIMAL, pairs.count, 0), pairs, size,
                        nonempty)
    out = np.zeros(size, dtype=np.int64)
    shift = 10 ** (18 - scale)
    summed = vector & nonempty & (counts > 0)
    for g, whole, plain, count, total, decimal in zip(
        range(size), errors.tolist(), summed.tolist(), counts.tolist(), totals.tolist(),
        decimals.tolist(), strict=True,
    ):
        value: int | None
        if whole and not partial:
            continue
        if plain and partial:
            value = terms.partial_text(scaled_state_text(count, decimal, total * shift))
        elif plain:
            value = _summed(count, DECIMAL if decimal else INTEGER, total * shift, mean, terms)
        else:
            folded = _folded(pairs, g, terms)
            value = (terms.partial(folded) if partial else average(folded, terms) if mean
                     else number_literal(folded.total(), terms))  # fmt: skip
        out[g] = NO_ID if value is None else value
    return out


def _summed(count: int, kind: int, scaled: int, mean: bool, terms: Terms) -> int | None:
    """SUM or AVG of ``count`` (> 0) integers and decimals (``kind``: DECIMAL if any is
    one) whose total times ``SCALE`` is ``scaled``: ``Sum.total`` and ``mean`` without a
    ``Sum`` per group (its exact and special parts are empty here)."""
    bound = I64 * SCALE if kind == INTEGER else I128
    if not -bound <= scaled < bound:
        return None  # out of the kind's range: an error, unbound
    if mean:  # truncated, as pyoxigraph's decimal division
        quotient = abs(scaled) // count
        kind, scaled = DECIMAL, -quotient if scaled < 0 else quotient
    return terms.literal(number_text((kind, scaled)), kind)


def _folded(pairs: Pairs, g: int, terms: Terms) -> Sum:
    """A group's values folded one distinct term at a time (the per-group path)."""
    total = Sum()
    part = pairs.in_group(g)
    for term, count in zip(pairs.term[part].tolist(), pairs.count[part].tolist(), strict=True):
        total.add(None if term == NO_ID else terms.number(term), count)  # NO_ID: an error
    return total


def _reduced(ufunc: np.ufunc, values: np.ndarray, pairs: Pairs, size: int,
             nonempty: np.ndarray) -> np.ndarray:
    """``ufunc`` over each group's pairs (0 for a group with none)."""
    out = np.zeros(size, dtype=values.dtype)
    if len(values):
        out[nonempty] = ufunc.reduceat(values, pairs.starts[nonempty])
    return out


def _extremes(pairs: Pairs, size: int, maximum: bool, numbers: NumericIds) -> Ids:
    """MIN or MAX per group."""
    terms = numbers.terms
    kind, digits, mantissa = numbers.of(pairs.term)
    unbound = pairs.per_group(kind == UNBOUND, size)
    vector = ~unbound & ~pairs.per_group(kind > DECIMAL, size)
    found = _units(pairs, vector, digits, mantissa, weighted=False)
    if found is None:
        vector[:] = False
        found = np.zeros(len(pairs.group), dtype=np.int64), 0
    units = found[0]
    nonempty = pairs.starts < len(pairs.group)
    vector &= nonempty
    best = _reduced(np.maximum if maximum else np.minimum, units, pairs, size, nonempty)
    tied = vector[pairs.group] & (units == best[pairs.group])
    ties = np.bincount(pairs.group[tied], minlength=size)
    out = np.zeros(size, dtype=np.int64)
    single = vector & (ties == 1)
    out[pairs.group[tied & single[pairs.group]]] = pairs.term[tied & single[pairs.group]]
    for g in np.flatnonzero(~single & ~unbound).tolist():
        part = pairs.in_group(g)
        chosen = tied[part] if vector[g] else np.ones(part.stop - part.start, dtype=bool)
        values = Counter(pairs.term[part][chosen].tolist())
        value = extreme(values, maximum, terms)
        out[g] = NO_ID if value is None else value
    return out
