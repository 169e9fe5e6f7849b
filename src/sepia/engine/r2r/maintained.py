"""Operators of delta evaluation above the window joins: each keeps what it needs of its
inputs and turns their changes into its own (``engine.delta``).

A change is a signed bag of rows (``Change``: row -> +n entered, -n left the operator's
answer since the last evaluation). SPARQL's operators are bag operators, so each change
follows from the inputs' changes and the inputs' bags:

- row-local operators (FILTER, BIND, projection) map the change row by row;
- UNION adds its branches' changes;
- a join of L and R changes by dL x R + (L + dL) x dR (``Join``);
- MINUS keeps, per left row, how many right rows (with their multiplicity) remove it: a
  right row entering can take a left row out of the answer, one leaving bring it back
  (``Minus``);
- OPTIONAL keeps, per left row, how many right rows extend it (compatible, and passing the
  OPTIONAL's FILTER on the merged row): the first extension retracts the unextended row
  and adds the extended ones, the last one leaving brings the unextended row back
  (``LeftJoin``);
- DISTINCT keeps each row's count and reports the rows crossing zero; VALUES never changes.

The inputs kept (``Side``: a bag with an index on the join keys, the slots both inputs
always bind) are a cache of the windows' contents, like the join's mappings: ``reset``
builds them from full answers (first evaluation, restore, a large change).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import compress
from typing import Protocol

from sepia.engine.graph import EncodedTriple, TripleIndex
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.expressions import ExpressionEvaluator
from sepia.engine.rows import Row, compatible, merge, shares_binding

Change = dict[Row, int]
"""A signed bag of rows: how many times each row entered (> 0) or left (< 0) an answer."""
Moved = dict[po.WindowGraph, tuple[list[EncodedTriple], list[EncodedTriple]]]
"""Per window, the triples that became visible and those that left since the last
evaluation (its journal, read once for every operator)."""
GraphOf = Callable[[po.GraphRef], TripleIndex]
Runner = Callable[[po.PhysicalPlan], list[Row]]


class Maintained(Protocol):
    """An operator whose answer is kept up to date from its inputs' changes."""

    def reset(self, graph: GraphOf, run: Runner) -> Change:
        """Forget everything and take the present answer (all of it, as a change)."""
        ...

    def change(self, moved: Moved) -> Change:
        """The answer's change since the last call, given the windows' changes."""
        ...

    def size(self) -> int:
        """The rows it keeps (``ContinuousQuery.state_size``)."""
        ...


def add(change: Change, row: Row, count: int) -> None:
    """change[row] += count, without zero entries."""
    total = change.get(row, 0) + count
    if total:
        change[row] = total
    else:
        change.pop(row, None)


def combined(first: Change, second: Change) -> Change:
    """The sum of two changes."""
    if not first:
        return second
    out = dict(first)
    for row, count in second.items():
        add(out, row, count)
    return out


class Local:
    """FILTER, BIND or projection: a function of each row (or a test on it), so the change
    of its answer is its input's change mapped row by row."""

    def __init__(self, step: po.Select | po.Bind | po.Keep, inner: Maintained) -> None:
        self.step = step
        self.inner = inner

    def reset(self, graph: GraphOf, run: Runner) -> Change:
        return self.mapped(self.inner.reset(graph, run))

    def change(self, moved: Moved) -> Change:
        return self.mapped(self.inner.change(moved))

    def size(self) -> int:
        return self.inner.size()

    def mapped(self, change: Change) -> Change:
        if not change:
            return change
        rows, passed = through(self.step, list(change))
        counts = list(change.values())
        if passed is not None:  # a FILTER: the rows that pass, unchanged
            return dict(zip(rows, compress(counts, passed), strict=True))
        out: Change = {}
        for row, count in zip(rows, counts, strict=True):
            add(out, row, count)
        return out


def through(
    step: po.Select | po.Bind | po.Keep, rows: list[Row]
) -> tuple[list[Row], list[bool] | None]:
    """Rows through a FILTER, BIND or projection: the rows it gives, and for a FILTER which
    of ``rows`` pass (the rows given are those)."""
    match step:
        case po.Select(_, condition):
            truths = condition.truths(rows)
            return list(compress(rows, truths)), truths
        case po.Bind(_, slot, value):
            return po.bind_rows(rows, slot, value.values(rows)), None
        case po.Keep(_, slots):
            return po.keep_rows(rows, slots), None


class Union:
    """UNION: the branches' answers side by side (a bag), so their changes add up."""

    def __init__(self, left: Maintained, right: Maintained) -> None:
        self.left, self.right = left, right

    def reset(self, graph: GraphOf, run: Runner) -> Change:
        return combined(self.left.reset(graph, run), self.right.reset(graph, run))

    def change(self, moved: Moved) -> Change:
        return combined(self.left.change(moved), self.right.change(moved))

    def size(self) -> int:
        return self.left.size() + self.right.size()


class Distinct:
    """DISTINCT inside a pattern: how many rows of its input each distinct row stands for;
    a row enters when that count leaves zero and leaves when it returns to it."""

    def __init__(self, inner: Maintained) -> None:
        self.inner = inner
        self.counts: dict[Row, int] = {}

    def reset(self, graph: GraphOf, run: Runner) -> Change:
        self.counts = {}
        return self._crossing(self.inner.reset(graph, run))

    def change(self, moved: Moved) -> Change:
        return self._crossing(self.inner.change(moved))

    def size(self) -> int:
        return len(self.counts) + self.inner.size()

    def _crossing(self, change: Change) -> Change:
        out: Change = {}
        counts = self.counts
        for row, count in change.items():
            before = counts.get(row, 0)
            after = before + count
            if after:
                counts[row] = after
            else:
                del counts[row]
            if (before > 0) != (after > 0):
                out[row] = 1 if after > 0 else -1
        return out


class Constant:
    """VALUES: the same rows at every evaluation."""

    def __init__(self, rows: tuple[Row, ...]) -> None:
        self.rows = rows

    def reset(self, graph: GraphOf, run: Runner) -> Change:
        out: Change = {}
        for row in self.rows:
            add(out, row, 1)
        return out

    def change(self, moved: Moved) -> Change:
        return {}

    def size(self) -> int:
        return 0


class Side:
    """One input of a binary operator as a bag, indexed by the join keys."""

    __slots__ = ("bag", "by", "keys")

    def __init__(self, keys: tuple[int, ...]) -> None:
        self.keys = keys
        self.bag: dict[Row, int] = {}
        self.by: dict[tuple, dict[Row, None]] = {}

    def key(self, row: Row) -> tuple:
        return tuple([row[k] for k in self.keys])

    def partners(self, row: Row) -> Iterable[Row]:
        """The distinct rows that can be compatible with ``row`` (equal keys)."""
        return self.by.get(self.key(row), ())

    def update(self, change: Change) -> None:
        bag, by = self.bag, self.by
        for row, count in change.items():
            before = bag.get(row, 0)
            after = before + count
            if after:
                bag[row] = after
                if not before:
                    by.setdefault(self.key(row), {})[row] = None
            else:
                del bag[row]
                bucket = by[self.key(row)]
                del bucket[row]
                if not bucket:
                    del by[self.key(row)]


class _Binary:
    """An operator over two maintained inputs, both kept as bags indexed on ``keys`` (the
    slots both always bind); ``_apply`` turns the inputs' changes into its own."""

    def __init__(self, left: Maintained, right: Maintained, keys: tuple[int, ...]) -> None:
        self.left, self.right = left, right
        self.keys = keys
        self.mine, self.theirs = Side(keys), Side(keys)
        self.counts: dict[Row, int] = {}
        """Per left row kept, how many right rows (with multiplicity) act on it."""

    def reset(self, graph: GraphOf, run: Runner) -> Change:
        self.mine, self.theirs, self.counts = Side(self.keys), Side(self.keys), {}
        return self._apply(self.left.reset(graph, run), self.right.reset(graph, run))

    def change(self, moved: Moved) -> Change:
        return self._apply(self.left.change(moved), self.right.change(moved))

    def size(self) -> int:
        return len(self.mine.bag) + len(self.theirs.bag) + self.left.size() + self.right.size()

    def _apply(self, d_left: Change, d_right: Change) -> Change:
        raise NotImplementedError

    def _take_left(self, d_left: Change) -> None:
        """Fold the left input's change in; left rows gone lose their count."""
        self.mine.update(d_left)
        for row in d_left:
            if row not in self.mine.bag:
                self.counts.pop(row, None)


class Join(_Binary):
    """A join of two maintained inputs: (L + dL) x (R + dR) - L x R = dL x R + (L + dL) x dR,
    found by index lookups on the keys."""

    def _apply(self, d_left: Change, d_right: Change) -> Change:
        out: Change = {}
        _joined_into(out, d_left, self.theirs)
        self.mine.update(d_left)
        _joined_into(out, d_right, self.mine)
        self.theirs.update(d_right)
        return out


def _joined_into(out: Change, change: Change, side: Side) -> None:
    """Add each changed row joined with the compatible rows of the other side (merging is
    symmetric), with the product of their counts."""
    bag = side.bag
    for row, count in change.items():
        for other in side.partners(row):
            if compatible(row, other):
                add(out, merge(row, other), count * bag[other])


class Minus(_Binary):
    """MINUS: a left row stays while no compatible right row sharing a variable exists;
    ``counts`` holds, per left row kept, how many such right rows there are."""

    def _apply(self, d_left: Change, d_right: Change) -> Change:
        """Right changes first, against the left rows kept; then left changes against the
        right rows as they are now."""
        out: Change = {}
        left_bag, blocked = self.mine.bag, self.counts
        for other, count in d_right.items():
            for row in self.mine.partners(other):
                if compatible(row, other) and shares_binding(row, other):
                    before = blocked[row]
                    blocked[row] = before + count
                    _switch(out, row, left_bag[row], before, before + count)
        self.theirs.update(d_right)
        right_bag = self.theirs.bag
        for row, count in d_left.items():
            if row not in left_bag:
                blocked[row] = sum(
                    right_bag[other]
                    for other in self.theirs.partners(row)
                    if compatible(row, other) and shares_binding(row, other)
                )
            if not blocked[row]:
                add(out, row, count)
        self._take_left(d_left)
        return out


class LeftJoin(_Binary):
    """OPTIONAL: each left row extended by its compatible right rows whose merge passes the
    condition, or alone when there are none; ``counts`` holds, per left row kept, how many
    right rows extend it."""

    def __init__(
        self,
        left: Maintained,
        right: Maintained,
        keys: tuple[int, ...],
        condition: ExpressionEvaluator | None,
    ) -> None:
        super().__init__(left, right, keys)
        self.condition = condition

    def _extensions(self, pairs: list[tuple[Row, Row]]) -> list[tuple[Row, Row, Row]]:
        """(left row, right row, merged row) of the compatible pairs passing the condition."""
        found = [(a, b, merge(a, b)) for a, b in pairs if compatible(a, b)]
        if self.condition is None or not found:
            return found
        truths = self.condition.truths([m for _, _, m in found])
        return [f for f, ok in zip(found, truths, strict=True) if ok]

    def _apply(self, d_left: Change, d_right: Change) -> Change:
        """Right changes first, against the left rows kept; then left changes against the
        right rows as they are now."""
        out: Change = {}
        left_bag, extended = self.mine.bag, self.counts
        pairs = [(row, other) for other in d_right for row in self.mine.partners(other)]
        for row, other, merged in self._extensions(pairs):
            count = d_right[other]
            before = extended[row]
            extended[row] = before + count
            add(out, merged, count * left_bag[row])
            _switch(out, row, left_bag[row], before, before + count)
        self.theirs.update(d_right)
        right_bag = self.theirs.bag
        pairs = [(row, other) for row in d_left for other in self.theirs.partners(row)]
        found: dict[Row, list[tuple[Row, Row]]] = {}
        for row, other, merged in self._extensions(pairs):
            found.setdefault(row, []).append((other, merged))
        for row, count in d_left.items():
            matches = found.get(row, [])
            extended[row] = sum(right_bag[other] for other, _ in matches)
            for other, merged in matches:
                add(out, merged, count * right_bag[other])
            if not matches:
                add(out, row, count)
        self._take_left(d_left)
        return out


def _switch(out: Change, row: Row, copies: int, before: int, after: int) -> None:
    """A left row of MINUS / OPTIONAL whose count of right partners went from ``before``
    to ``after``: it leaves the answer (or its unextended form does) when the count leaves
    zero, and comes back when it returns to zero."""
    if before == 0 and after:
        add(out, row, -copies)
    elif before and after == 0:
        add(out, row, copies)
