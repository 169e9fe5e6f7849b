"""SPARQL expressions (FILTER, BIND, OPTIONAL conditions) over encoded rows.

SPARQL's expression semantics (type promotion, errors, effective boolean value, the function
library) is long and subtle, so the engine does not re-implement it: it hands pyoxigraph a
whole batch of rows at once, as one ``VALUES`` block, and reads the values back. Results are
cached by the ids of the expression's variables, so each distinct input is computed once
(expressions are functions of their variables; the cache is bounded and holds no engine
state: dropping it changes nothing but speed). C-SPARQL's ``timestamp()`` is the exception:
it reads the windows at the evaluation instant, so an expression calling it is answered by
the caller's ``functions`` and recomputed at every call. A FILTER of comparisons of
numbers and durations (``r2r.numeric``) is answered in Python on the encoded rows where it
is sure, and only the other rows go to pyoxigraph.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pyoxigraph as ox

from sepia.algebra import expression as ex
from sepia.algebra.scope import FRESH, expression_variables, nodes
from sepia.algebra.sparql import (
    FROM,
    INTERVAL_ACCESSORS,
    TO,
    expression_text,
    table_text,
)
from sepia.engine.r2r.numeric import UNSURE, Values, comparison
from sepia.engine.rows import Row, Slots
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.terms import Term
from sepia.rdf.vocabulary import XSD

CACHE_LIMIT = 1 << 16
TRUE = ox.Literal("true", datatype=ox.NamedNode(f"{XSD}boolean"))
FALSE = ox.Literal("false", datatype=ox.NamedNode(f"{XSD}boolean"))
_KEY, _VALUE = "__key", "__value"
_BLANKS = ox.NamedNode("urn:sepia:table:expression")
"""Where a batch's blank nodes are read from (VALUES cannot hold them)."""


def variables_of(e: ex.Expression) -> set[str]:
    """The variables an expression reads row by row (EXISTS patterns and aggregates are the
    fallback's business); EP-SPARQL's getDURATION() etc. read the interval."""
    return expression_variables(e, nested=False, reads=_interval_reads)


def _interval_reads(call: ex.Call) -> set[str] | None:
    return {FROM, TO} if call.function in INTERVAL_ACCESSORS else None


def calls(e: object, name: str) -> bool:
    """Whether an expression (or any algebra tree) calls the builtin ``name``."""
    return any(call.function == name for call in nodes(e, ex.Call))


def has_exists(e: ex.Expression) -> bool:
    """Whether an expression holds EXISTS / NOT EXISTS or an aggregate (not row-local)."""
    match e:
        case ex.Exists() | ex.Aggregate():
            return True
        case ex.Binary(_, left, right):
            return has_exists(left) or has_exists(right)
        case ex.Unary(_, operand):
            return has_exists(operand)
        case ex.In(value, options, _):
            return has_exists(value) or any(has_exists(o) for o in options)
        case ex.Call(_, args) | ex.FunctionCall(_, args, _):
            return any(has_exists(a) for a in args)
        case _:
            return False


class ExpressionEvaluator:
    """One expression, compiled once into a batch query over its variables' slots."""

    def __init__(
        self,
        expression: ex.Expression,
        slots: Slots,
        dictionary: Dictionary,
        *,
        boolean: bool = False,
        functions: Mapping[ox.NamedNode, Callable[..., Term | None]] | None = None,
        base: str | None = None,
    ) -> None:
        text = expression_text(expression)
        self.expression = expression
        """The expression (the columnar core compiles some shapes to vector comparisons)."""
        self.base = base
        """The query's BASE: IRI() resolves a relative IRI against it."""
        self.functions = dict(functions or {})
        self.volatile = calls(expression, "TIMESTAMP")
        """Reads the windows (C-SPARQL timestamp()): never answered from the cache."""
        self.fresh = any(calls(expression, f) for f in FRESH)
        """Calls a builtin with a new value at each call: computed for every row, no cache."""
        self.row_local = not self.volatile and not self.fresh
        """A function of the row alone: a row's value may be kept (delta evaluation)."""
        self.text = f"IF({text}, true, false)" if boolean else text
        self.truth = dictionary.encode(TRUE)
        self.falsity = dictionary.encode(FALSE)
        self.names = sorted(variables_of(expression) & set(slots.names))
        self.positions = [slots.index(n) for n in self.names]
        self._values = Values(dictionary.decode, dictionary.decode_text)
        positions = {n: slots.index(n) for n in self.names}
        self.native = comparison(expression, positions, self._values) if boolean else None
        """A comparison answered in Python on the encoded row where it is sure
        (``r2r.numeric``): no key, no cache lookup, no pyoxigraph."""
        self.dictionary = dictionary
        self.cache: dict[tuple[int | None, ...], int | None] = {}
        self._store = ox.Store()
        dictionary.watch(self)

    def forget_ids(self, dropped: set[int]) -> None:
        """The dictionary forgot these terms: the cached values of or to them go."""
        self.cache = {k: v for k, v in self.cache.items()
                      if v not in dropped and dropped.isdisjoint(k)}
        self._values.forget_ids(dropped)

    def values(self, rows: Sequence[Row]) -> list[int | None]:
        """The expression's value on each row (None where it raises an error)."""
        keys = [tuple(row[i] for i in self.positions) for row in rows]
        if self.fresh:
            return self._query(keys)  # a new value for every row, equal keys or not
        if self.volatile:
            self.cache.clear()
        missing = list({k for k in keys if k not in self.cache})
        if missing and len(self.cache) + len(missing) > CACHE_LIMIT:
            self.cache.clear()  # every key of this batch is computed afresh
            missing = list(dict.fromkeys(keys))
        if missing:
            self.cache.update(zip(missing, self._query(missing), strict=True))
        return [self.cache[k] for k in keys]

    def truths(self, rows: Sequence[Row]) -> list[bool]:
        """The effective boolean value on each row, an error being false (for an evaluator
        built with ``boolean``, which computes IF(expression, true, false)): in Python where
        ``native`` is sure, the other rows by pyoxigraph through the cache."""
        native = self.native
        if native is None:
            return [v == self.truth for v in self.values(rows)]
        answers = [native(row) for row in rows]
        unsure = [n for n, answer in enumerate(answers) if answer is UNSURE]
        if unsure:
            decided = self.values([rows[n] for n in unsure])
            for n, value in zip(unsure, decided, strict=True):
                answers[n] = value == self.truth
        return answers  # type: ignore[return-value]

    def _query(self, keys: list[tuple[int | None, ...]]) -> list[int | None]:
        decode = self.dictionary.decode
        table = [
            [ox.Literal(str(number)), *(None if i is None else decode(i) for i in key)]
            for number, key in enumerate(keys)
        ]
        block, blanks = table_text([_KEY, *self.names], table, _BLANKS)
        self._store.extend(blanks)
        query = f"SELECT ?{_KEY} ?{_VALUE} WHERE {{ {block} BIND(({self.text}) AS ?{_VALUE}) }}"
        solutions = self._store.query(
            query, custom_functions=self.functions or None, base_iri=self.base
        )
        assert isinstance(solutions, ox.QuerySolutions)
        found: list[int | None] = [None] * len(keys)
        for solution in solutions:
            value = solution[_VALUE]
            if value is not None:
                found[int(solution[_KEY].value)] = self.dictionary.encode(value)
        if blanks:
            self._store.clear()
        return found
