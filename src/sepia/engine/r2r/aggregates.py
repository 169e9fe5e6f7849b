"""GROUP BY maintained from the windows' journals: per-group state updated by the delta of
the matches (W3's C-SPARQL ``AVG(?price)`` per company over a sliding window).

The aggregated pattern (a join of BGPs over windows and background graphs under FILTER and
BIND: ``delta.local_join``) keeps its mappings from the journals: at each
evaluation only the mappings that used a triple which left, and those using a triple that
entered, change. Each changed mapping updates its group's state (a count, an exact sum, a
multiset of values for MIN / MAX and DISTINCT), so a window close recomputes only the
groups that changed; the operators above the group (HAVING, the SELECT expressions, the
projection) run on those groups' rows.

Exactness against the reference (pyoxigraph over a store holding the window):

- pyoxigraph's store keeps each literal in its canonical form ("03" and "3"^^xsd:int are
  "3"^^xsd:integer there), and a graph is a set: mappings are grouped and aggregated by
  the canonical forms of their terms, and mappings equal in those forms count once.
  Canonical forms and numeric values are pyoxigraph's own (``Terms``), as are the result
  literals' lexical forms (each result is written to a store and read back).
- SUM / AVG over integers and decimals are exact, as pyoxigraph's are in any order:
  decimals are pyoxigraph's fixed point with 18 fractional digits, AVG of integers and
  decimals its truncating division; a non-numeric or unbound value makes the group's SUM
  and AVG unbound; an empty implicit group gives COUNT 0, SUM 0, AVG 0.
- Over xsd:double / xsd:float values the sum is the exact sum of the values rounded once
  (through a double for xsd:float); pyoxigraph adds in its store's order, rounding at each
  step, so the last bits may differ (docs/engine.md). An integer or decimal sum that
  overflows pyoxigraph's 64-bit integers / 128-bit decimals is unbound when the exact sum
  does; an overflow of a partial sum only (in the store's order) is not seen here.
- MIN / MAX keep a multiset of values per group (for eviction); among equal numbers of
  different terms (1 and 1.0) pyoxigraph returns the one its store was given last, and
  the reference gives it the window as a Python set (in the order of the triples'
  hashes), which nothing else reproduces: such ties are decided by pyoxigraph over the
  group's values alone.

Not maintained (``plan_of`` says why; pyoxigraph's fallback evaluates them): GROUP_CONCAT,
SAMPLE, aggregates of expressions other than a variable, patterns other than such a join
(OPTIONAL, UNION, MINUS, paths ...), a group under other operators than HAVING, BIND,
projection and DISTINCT. The group states are a cache of the windows (as delta evaluation's
mappings): after a restore they are rebuilt from the restored windows.
"""

from __future__ import annotations

import math
import re
import struct
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction
from itertools import compress
from typing import Literal

import pyoxigraph as ox

from sepia.algebra import pattern as gp
from sepia.algebra import query as qa
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.counting import CountedJoin
from sepia.engine.r2r.delta import (
    Atoms,
    Key,
    RowLocal,
    _fold,
    local_join,
    query_pattern,
    under_row_local,
)
from sepia.engine.r2r.maintained import GraphOf, Runner, through
from sepia.engine.rows import Row
from sepia.rdf.dictionary import Dictionary
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
FUNCTIONS = {"COUNT", "SUM", "AVG", "MIN", "MAX"}
CANONICAL_INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")
CANONICAL_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]{0,17}[1-9])?")
"""Integers and decimals as pyoxigraph writes them (decimals: at most 18 fractional
digits, no trailing zero, no dot when whole; never "-0")."""


@dataclass(frozen=True, slots=True)
class AggregateSpec:
    """One aggregate of a group: its function, the slot it reads (None: ``COUNT(*)``),
    DISTINCT, and the slot its value is bound to."""

    function: str
    argument: int | None
    distinct: bool
    target: int


@dataclass(frozen=True, slots=True)
class GroupBy(po.Fallback):
    """A GROUP BY the engine maintains when it is the query's top (``plan_of``); anywhere
    else it is the ``Fallback`` it extends, evaluated by pyoxigraph."""

    inner: po.PhysicalPlan
    keys: tuple[int, ...]
    aggregates: tuple[AggregateSpec, ...]


def native(
    group: gp.Group, fallback: po.Fallback, inner: po.PhysicalPlan, slot: Callable[[str], int]
) -> GroupBy | None:
    """The maintainable GROUP BY of ``group`` (None: only pyoxigraph evaluates it): COUNT,
    SUM, AVG, MIN, MAX of a variable (or ``COUNT(*)``)."""
    specs = []
    for binding in group.aggregates:
        a = binding.aggregate
        if a.function.value not in FUNCTIONS:
            return None
        if a.args and not isinstance(a.args[0], ox.Variable):
            return None
        argument = slot(a.args[0].value) if a.args else None  # type: ignore[union-attr]
        specs.append(AggregateSpec(a.function.value, argument, a.distinct,
                                   slot(binding.variable.value)))  # fmt: skip
    keys = tuple(slot(v.value) for v in group.variables)
    return GroupBy(fallback.pattern, fallback.windows, inner, keys, tuple(specs))


@dataclass(frozen=True, slots=True)
class GroupPlan:
    """A query whose pattern is a maintained GROUP BY: the aggregated pattern (a join of
    triple patterns under FILTER and BIND, innermost first), the group, the row-local
    operators above it (innermost first), DISTINCT on top."""

    atoms: Atoms
    inner: tuple[po.Select | po.Bind, ...]
    group: GroupBy
    steps: tuple[RowLocal, ...]
    distinct: bool


def plan_of(
    form: qa.QueryForm,
    root: po.PhysicalPlan,
    events: bool,
    empty: Callable[[po.GraphRef], bool],
) -> GroupPlan | str:
    """The maintained GROUP BY of a query, or why it is not maintained. ``empty`` says
    which background graphs are empty: C-SPARQL merges its windows with the default graph,
    which is then the window alone."""
    top = query_pattern(form, root, events)
    if isinstance(top, str):
        return top
    pattern, distinct = top
    found = under_row_local(pattern)
    if isinstance(found, str):
        return found
    node, steps = found
    if not isinstance(node, GroupBy):
        return (
            "a GROUP BY under other operators, or aggregates other than COUNT, SUM, AVG, MIN, "
            "MAX of a variable"
        )
    inner = local_join(_unmerged(node.inner, empty))
    if isinstance(inner, str):
        return f"{inner} inside the group"
    atoms, inner_steps = inner
    if not any(isinstance(graph, po.WindowGraph) for graph, _ in atoms):
        return "a group over background data only (no window change to maintain it from)"
    return GroupPlan(atoms, inner_steps, node, steps, distinct)


def _unmerged(node: po.PhysicalPlan, empty: Callable[[po.GraphRef], bool]) -> po.PhysicalPlan:
    """``node`` with the empty background graphs left out of its BGPs' merged graphs."""
    match node:
        case po.Scan(graphs, _) if len(graphs) > 1:
            kept = tuple(g for g in graphs if not (isinstance(g, po.BackgroundGraph) and empty(g)))
            return replace(node, graphs=kept) if kept else node
        case po.MultiJoin(inputs, _):
            return replace(node, inputs=tuple(_unmerged(i, empty) for i in inputs))
        case po.Select() | po.Bind() | po.Keep() | po.Dedup():
            return replace(node, inner=_unmerged(node.inner, empty))
        case _:
            return node


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


class _Sum:
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


class _Group:
    """One group's state: its mappings' count and each aggregate's state."""

    __slots__ = ("output", "rows", "states")

    def __init__(self, specs: tuple[AggregateSpec, ...]) -> None:
        self.rows = 0
        self.states: list[Counter[int | None] | _Sum | list[int]] = [
            _Sum() if s.function in ("SUM", "AVG") and not s.distinct
            else [0] if s.function == "COUNT" and not s.distinct
            else Counter()
            for s in specs
        ]  # fmt: skip
        self.output: Key | None = None
        """The answer row this group gives now (None: none, or filtered out)."""


class MaintainedGroups:
    """The answer of a ``GroupPlan``, kept up to date from the windows' journals (the same
    interface as ``delta.MaintainedAnswer``)."""

    def __init__(
        self, plan: GroupPlan, kept: list[int], width: int, dictionary: Dictionary
    ) -> None:
        self.plan = plan
        self.kept = kept
        self.width = width
        self.terms = Terms(dictionary)
        self.join = CountedJoin(plan.atoms, width, self.terms.canonical)
        self.answer: Counter[Key] = Counter()
        self._counts: Counter[Key] = Counter()
        """Under DISTINCT: how many groups give each answer row."""
        self._groups: dict[Key, _Group] = {}
        self._all = list(range(width))

    def __len__(self) -> int:
        """The triples the join's match sets hold (``ContinuousQuery.state_size``)."""
        return len(self.join)

    def state_rows(self) -> int:
        """The aggregate state held: a row per group and per value of a group's multisets."""
        return sum(
            1 + sum(len(s) for s in g.states if isinstance(s, Counter))
            for g in self._groups.values()
        )

    def update(self, graph: GraphOf, run: Runner) -> tuple[Counter[Key], Counter[Key]] | None:
        """Bring the answer to the windows' present contents: (rows added, rows removed), or
        None when the join was rebuilt (first call, after a restore: then the answer is
        rebuilt whole)."""
        gained, lost, rebuilt = self.join.update(graph)
        if rebuilt:
            self.answer, self._counts, self._groups = Counter(), Counter(), {}
        changed: dict[Key, _Group] = {}
        if not self.plan.group.keys and () not in self._groups:  # exists without rows
            changed[()] = self._groups[()] = _Group(self.plan.group.aggregates)
        for rows, sign in ((lost, -1), (gained, 1)):
            self._fold_rows(rows, sign, changed)
        plus, minus = self._report(changed)
        return None if rebuilt else (plus, minus)

    def _fold_rows(self, mappings: list[Row], sign: int, changed: dict[Key, _Group]) -> None:
        """Each mapping (through FILTER and BIND) into its group's state."""
        if not mappings:
            return
        keys, specs = self.plan.group.keys, self.plan.group.aggregates
        rows: list[Row | None] = list(mappings)
        if self.plan.inner:  # FILTER, BIND (which may make terms not seen yet)
            rows = outputs(self.plan.inner, self._all, mappings)
            self.terms.canonical(
                r[s.argument] for r in rows if r for s in specs if s.argument is not None
            )
        groups = self._groups
        for row in rows:
            if row is None:
                continue
            key = tuple([row[k] for k in keys])
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Group(specs)
            changed[key] = group
            self._add(group, row, sign)

    def _add(self, group: _Group, row: Row, sign: int) -> None:
        group.rows += sign
        numbers = self.terms.numbers
        for spec, state in zip(self.plan.group.aggregates, group.states, strict=True):
            argument = spec.argument
            value = None if argument is None else row[argument]
            if type(state) is _Sum:
                state.add(numbers.get(value), sign)  # type: ignore[arg-type]
            elif type(state) is list:
                state[0] += sign if argument is None or value is not None else 0
            else:
                item = row if argument is None else value
                left = state.get(item, 0) + sign
                if left:
                    state[item] = left
                else:
                    del state[item]

    def _report(self, changed: dict[Key, _Group]) -> tuple[Counter[Key], Counter[Key]]:
        """Each changed group's new answer row; the answer's change."""
        plus: Counter[Key] = Counter()
        minus: Counter[Key] = Counter()
        rows, live = [], []
        for key, group in changed.items():
            if group.output is not None:
                minus[group.output] += 1
                group.output = None
            if group.rows == 0 and key:
                del self._groups[key]
                continue
            rows.append(self._row(key, group))
            live.append(group)
        for group, out in zip(live, outputs(self.plan.steps, self.kept, rows), strict=True):
            group.output = out
            if out is not None:
                plus[out] += 1
        if self.plan.distinct:
            touched = set(plus) | set(minus)
            before = {k for k in touched if self._counts[k] > 0}
            _fold(self._counts, plus, minus)
            after = {k for k in touched if self._counts[k] > 0}
            plus, minus = Counter(after - before), Counter(before - after)
        common = plus & minus  # a group whose row did not change
        plus, minus = plus - common, minus - common
        _fold(self.answer, plus, minus)
        return plus, minus

    def _row(self, key: Key, group: _Group) -> Row:
        """The group's row: its key and each aggregate's value."""
        row: list[int | None] = [None] * self.width
        for slot, value in zip(self.plan.group.keys, key, strict=True):
            row[slot] = value
        for spec, state in zip(self.plan.group.aggregates, group.states, strict=True):
            row[spec.target] = self._value(spec, state, group.rows)
        return tuple(row)

    def _value(self, spec: AggregateSpec, state, rows: int) -> int | None:
        terms = self.terms
        if isinstance(state, list):
            return terms.literal(str(state[0]), INTEGER)
        if spec.function == "COUNT":
            return terms.literal(str(sum(1 for v in state if v is not None)), INTEGER)
        if spec.function in ("MIN", "MAX"):
            return _extreme(state, spec.function == "MAX", terms)
        if isinstance(state, Counter):  # SUM / AVG (DISTINCT): the distinct values
            total = _Sum()
            for value in state:
                total.add(terms.number(value), 1)
            state = total
        if spec.function == "SUM":
            return _literal(state.total(), terms)
        return _average(state, terms)


def outputs(steps: Iterable[RowLocal], kept: list[int], rows: list[Row]) -> list[Key | None]:
    """Each row's output (its ``kept`` slots) through FILTER, BIND and projection (None:
    filtered out)."""
    keys: list[Key | None] = [None] * len(rows)
    alive = list(range(len(rows)))
    for step in steps:
        rows, passed = through(step, rows)
        if passed is not None:
            alive = list(compress(alive, passed))
    for i, row in zip(alive, rows, strict=True):
        keys[i] = tuple([row[k] for k in kept])
    return keys


def _average(state: _Sum, terms: Terms) -> int | None:
    """AVG: SUM / COUNT with pyoxigraph's division (0 for no values)."""
    if state.count == 0:
        return terms.literal("0", INTEGER)
    total = state.total()
    if total is None:
        return None
    kind, value = total
    if kind in (INTEGER, DECIMAL):
        quotient = abs(value) // state.count  # truncated, as pyoxigraph's decimal division
        return _literal((DECIMAL, -quotient if value < 0 else quotient), terms)
    if kind == FLOAT:
        return _literal((FLOAT, _f32(value / _f32(float(state.count)))), terms)
    return _literal((DOUBLE, value / state.count), terms)


def _literal(total: tuple[int, float | int] | None, terms: Terms) -> int | None:
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


def _extreme(values: Counter, maximum: bool, terms: Terms) -> int | None:
    """MIN / MAX of a multiset of canonical terms (None: unbound, which makes both unbound
    in pyoxigraph) in SPARQL's order: numbers compared in Python, anything else (and ties
    of equal numbers of different terms: see the module docstring) by pyoxigraph."""
    if None in values or not values:  # an unbound value (an error) unbinds both, as there
        return None
    present = list(values)
    numbers = [terms.number(v) for v in present]
    if all(n is not None and not (isinstance(n[1], float) and n[1] != n[1]) for n in numbers):
        exact = [_exact(n) for n in numbers]  # type: ignore[arg-type]
        best = max(exact) if maximum else min(exact)
        if exact.count(best) == 1:
            return present[exact.index(best)]
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
