"""Solution tables as integer columns: basic graph patterns as vector joins.

A ``Table`` is a bag of solutions held as one numpy ``int64`` column per bound slot of the
query's slot table (a slot without a column is unbound in every row). Ids are the
dictionary's (never 0). The row engine (``sepia.engine.r2r.operators``) extends solutions one
triple lookup at a time; here a triple pattern is a mask over a graph's (s, p, o) columns
and a join is a sort of one side and a binary search of the other, so the per-solution
cost is a few machine words of numpy work instead of Python calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from sepia.engine.r2r import operators as po

if TYPE_CHECKING:
    from sepia.engine.r2r.expressions import ExpressionEvaluator

Ids = np.ndarray
"""A column of dictionary ids (``int64``)."""
NO_ID = 0
"""Never a term's id: the dictionary counts from 1."""


def distinct(values: Ids) -> Ids:
    """``numpy.unique(values)`` of a 1-d integer column by one sort: numpy 2's ``unique``
    without ``return_*`` hashes instead, measured 10-40x slower on the engine's columns."""
    ordered = np.sort(values)
    if not len(ordered):
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


SMALL = 16
"""Rows up to which the hot steps' small-table paths work on Python lists: a paced
instant's tables have a few rows, where numpy's fixed cost per call dominates."""
WIDE = 1 << 63
"""Packed row codes must stay below this (``int64``)."""


def packed(columns: Sequence[Ids]) -> Ids | None:
    """One ``int64`` code per row of the columns, ordered as the rows are lexicographically
    (equal rows, equal codes), or None when their value ranges do not fit in 63 bits.
    ``numpy.unique(axis=0)`` over stacked columns costs ~100 us even on a few rows (a
    structured view, moveaxis, a lexicographic sort): a step over one element paid it a
    dozen times; a packed code's 1-d sort is a few us."""
    if not len(columns[0]):
        return np.zeros(0, dtype=np.int64)
    code: Ids | None = None
    top = 0
    for column in columns:
        low, high = int(column.min()), int(column.max())
        span = high - low + 1
        top = top * span + span - 1
        if top >= WIDE:
            return None
        code = column - low if code is None else code * span + (column - low)
    return code


def unique_rows(
    columns: Sequence[Ids], *, index: bool = False, inverse: bool = False
) -> tuple[Ids, ...]:
    """``numpy.unique`` of the rows of aligned columns (``axis=0``, the same order): the
    distinct rows as columns, then, if asked, each one's first row and each row's
    distinct row, by a 1-d unique of ``packed`` codes where they fit."""
    code = packed(columns)
    if code is None:  # numpy's own, rare: values spread over more than 63 bits
        rows, first, back = np.unique(np.stack(columns, axis=1), axis=0, return_index=True,
                                      return_inverse=True)
        values = tuple(rows.T)
    else:
        if inverse:
            _, first, back = np.unique(code, return_index=True, return_inverse=True)
        else:
            _, first = np.unique(code, return_index=True)
        values = tuple(c[first] for c in columns)
    return (*values, *([first] if index else []), *([back.reshape(-1)] if inverse else []))


@dataclass(frozen=True, slots=True)
class Triples:
    """A graph's triples as three aligned columns, each triple once (a graph is a set)."""

    s: Ids
    p: Ids
    o: Ids

    def __len__(self) -> int:
        return len(self.s)

    @classmethod
    def empty(cls) -> Triples:
        nothing = np.empty(0, dtype=np.int64)
        return cls(nothing, nothing, nothing)

    @classmethod
    def of(cls, s: Ids, p: Ids, o: Ids) -> Triples:
        """The set of the triples given (repeats dropped, order not kept)."""
        if len(s) < 2:
            return cls(s, p, o)
        base = int(max(s.max(), p.max(), o.max())) + 1
        if s.min() >= 0 and p.min() >= 0 and o.min() >= 0 and base**3 < 2**63:
            keys = distinct((s * base + p) * base + o)  # one sort, not lexsort's three
            upper, o = np.divmod(keys, base)
            s, p = np.divmod(upper, base)
            return cls(s, p, o)
        order = np.lexsort((o, p, s))
        s, p, o = s[order], p[order], o[order]
        first = np.ones(len(s), dtype=bool)
        first[1:] = (s[1:] != s[:-1]) | (p[1:] != p[:-1]) | (o[1:] != o[:-1])
        return cls(s[first], p[first], o[first])

    @classmethod
    def union(cls, graphs: list[Triples]) -> Triples:
        """The union of several graphs (as sets: a triple in two graphs counts once); a
        C-SPARQL window merged with an empty default graph is the window itself."""
        graphs = [g for g in graphs if len(g)] or graphs[:1]
        if len(graphs) == 1:
            return graphs[0]
        return cls.of(*(np.concatenate([getattr(g, c) for g in graphs]) for c in "spo"))


@dataclass(frozen=True, slots=True)
class Table:
    """A bag of solutions: ``size`` rows, a column per bound slot (bound in every row,
    but for the slots a BIND or an aggregate sets: ``NO_ID`` where they are unbound)."""

    columns: dict[int, Ids]
    size: int

    @classmethod
    def unit(cls) -> Table:
        """The one empty solution (the join's identity)."""
        return cls({}, 1)

    def take(self, index: Ids) -> Table:
        """The rows at ``index`` (repeats allowed), in that order."""
        return Table({k: v[index] for k, v in self.columns.items()}, len(index))

    def rows(self, width: int) -> list[tuple[int | None, ...]]:
        """The solutions as the row engine's tuples (None for an unbound slot): for what
        is evaluated per row (FILTERs not compiled to vectors, the query form)."""
        columns = [
            terms_of(self.columns[i]) if i in self.columns else [None] * self.size
            for i in range(width)
        ]
        return list(zip(*columns, strict=True)) if width else [()] * self.size


def terms_of(column: Ids) -> list[int | None]:
    """A column as the row engine's values: its ids, None where it holds ``NO_ID`` (a
    BIND's error, an aggregate left unbound)."""
    values = column.tolist()
    if (column == NO_ID).any():
        return [v or None for v in values]
    return values


def distinct_inputs(table: Table, expression: ExpressionEvaluator) -> tuple[list[tuple], Ids]:
    """The distinct combinations of the values ``expression`` reads, as rows (None for an
    unbound slot), and each table row's combination."""
    positions = expression.positions
    if not positions:
        return [()], np.zeros(table.size, dtype=np.int64)
    width = max(positions) + 1
    read = [table.columns.get(i) for i in positions]
    bound = [c for c in read if c is not None]
    if bound and table.size <= SMALL:
        return _few_inputs(bound, [i for i, c in zip(positions, read, strict=True)
                                   if c is not None], width)
    if bound:
        values, inverse = np.unique(np.stack(bound, axis=1), axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
    else:
        values, inverse = np.zeros((1, 0), dtype=np.int64), np.zeros(table.size, dtype=np.int64)
    rows = []
    for value in values.tolist():
        row: list[int | None] = [None] * width
        it = iter(value)
        for i, column in zip(positions, read, strict=True):
            row[i] = (next(it) or None) if column is not None else None
        rows.append(tuple(row))
    return rows, inverse


def _few_inputs(bound: list[Ids], slots: list[int], width: int) -> tuple[list[tuple], Ids]:
    """``distinct_inputs`` of a few rows in Python, in the same order (a paced instant's
    GPM FILTER over its three rows paid ``numpy.unique(axis=0)``'s ~100 us)."""
    values = list(zip(*(c.tolist() for c in bound), strict=True))
    distinct_values = sorted(set(values))
    at = {value: k for k, value in enumerate(distinct_values)}
    rows = []
    for value in distinct_values:
        row: list[int | None] = [None] * width
        for i, v in zip(slots, value, strict=True):
            row[i] = v or None
        rows.append(tuple(row))
    return rows, np.array([at[v] for v in values], dtype=np.int64)


def filtered(table: Table, condition: ExpressionEvaluator) -> Table:
    """FILTER: the evaluator asked once per distinct combination of the slots it reads
    (an unbound slot is None), its truth spread back over the rows."""
    if not table.size:
        return table
    rows, inverse = distinct_inputs(table, condition)
    truths = np.array(condition.truths(rows), dtype=bool)
    return table.take(np.flatnonzero(truths[inverse]))


def match_pattern(
    graph: Triples, pattern: po.EncodedPattern, carried: dict[int, Ids] | None = None
) -> Table:
    """The solutions of one triple pattern over a graph: constants and repeated variables
    as masks, each variable's column cut out of the graph's; ``carried`` columns aligned
    with the graph's triples (the element each came from) are cut out alike."""
    mask = np.ones(len(graph), dtype=bool)
    seen: dict[int, Ids] = dict(carried or {})
    for position, column in zip(pattern, (graph.s, graph.p, graph.o), strict=True):
        if isinstance(position, po.Constant):
            mask &= column == position.id
        elif position.index in seen:
            mask &= column == seen[position.index]
        else:
            seen[position.index] = column
    if mask.all():
        return Table(dict(seen), len(graph))
    return Table({k: v[mask] for k, v in seen.items()}, int(mask.sum()))


def join(left: Table, right: Table) -> Table:
    """The join of two bags whose columns are bound in every row: equal values on the
    shared slots (a sort of the right side's key, a binary search per left row)."""
    return paired(left, right, *join_pairs(left, right))


def join_pairs(left: Table, right: Table) -> tuple[Ids, Ids]:
    """The row pairs (i, j) of ``join``, grouped by i, j ascending: what joins without
    building the joined rows (a caller that drops most pairs builds only the rest)."""
    keys = sorted(left.columns.keys() & right.columns.keys())
    if not left.size or not right.size:
        nothing = np.empty(0, dtype=np.int64)
        return nothing, nothing
    if not keys:
        return (np.repeat(np.arange(left.size), right.size),
                np.tile(np.arange(right.size), left.size))
    if left.size <= SMALL and right.size <= SMALL:
        return _few_pairs(left, right, keys)
    return _matching(*_keys(left, right, keys))


def _few_pairs(left: Table, right: Table, keys: list[int]) -> tuple[Ids, Ids]:
    """``join_pairs`` of a few rows each by a dictionary of the right side's keys (a paced
    instant's ``B & C``: packing, sorting and searching two or three rows cost ~50 us)."""
    index: dict[tuple, list[int]] = {}
    for j, key in enumerate(zip(*(right.columns[k].tolist() for k in keys), strict=True)):
        index.setdefault(key, []).append(j)
    li: list[int] = []
    ri: list[int] = []
    for i, key in enumerate(zip(*(left.columns[k].tolist() for k in keys), strict=True)):
        matched = index.get(key, ())
        li += [i] * len(matched)
        ri += matched
    return np.array(li, dtype=np.int64), np.array(ri, dtype=np.int64)


def paired(left: Table, right: Table, li: Ids, ri: Ids) -> Table:
    """The joined rows of the pairs (li, ri): the left row's columns, then the right's
    others."""
    out = {k: v[li] for k, v in left.columns.items()}
    out.update({k: v[ri] for k, v in right.columns.items() if k not in out})
    return Table(out, len(li))


def _keys(left: Table, right: Table, keys: list[int]) -> tuple[Ids, Ids]:
    """One integer key per row standing for the values at ``keys`` on either side."""
    if len(keys) == 1:
        return left.columns[keys[0]], right.columns[keys[0]]
    both = [np.concatenate([left.columns[k], right.columns[k]]) for k in keys]
    code = packed(both)
    if code is None:
        code = unique_rows(both, inverse=True)[-1]
    return code[: left.size], code[left.size :]


def _matching(lk: Ids, rk: Ids) -> tuple[Ids, Ids]:
    """Index pairs (i, j) with lk[i] == rk[j], grouped by i, j ascending: the smaller side
    sorted and the other's keys looked up in it when it is much the smaller (a window
    close joins a few new rows with a whole window, which is then not sorted at each
    evaluation; the pairs are sorted instead, few there)."""
    if len(rk) > 8 * len(lk):
        rj, li = _sorted_side(rk, lk)
        order = np.lexsort((rj, li))
        return li[order], rj[order]
    return _sorted_side(lk, rk)


def _sorted_side(lk: Ids, rk: Ids) -> tuple[Ids, Ids]:
    """Index pairs (i, j) with lk[i] == rk[j], grouped by i, j ascending, ``rk`` sorted."""
    order = np.argsort(rk, kind="stable")
    ranked = rk[order]
    lo = np.searchsorted(ranked, lk, side="left")
    hi = np.searchsorted(ranked, lk, side="right")
    counts = hi - lo
    total = int(counts.sum())
    li = np.repeat(np.arange(len(lk)), counts)
    starts = np.repeat(lo - (np.cumsum(counts) - counts), counts)
    return li, order[starts + np.arange(total)]


def join_all(tables: list[Table]) -> Table:
    """The join of several bags: the smallest first, then always the smallest that shares
    a slot with what is joined so far (no cross product while a connected one remains)."""
    if not tables:
        return Table.unit()
    rest = sorted(tables, key=lambda t: t.size)
    joined = rest.pop(0)
    while rest:
        bound = joined.columns.keys()
        pick = next((i for i, t in enumerate(rest) if t.columns.keys() & bound), 0)
        joined = join(joined, rest.pop(pick))
    return joined
