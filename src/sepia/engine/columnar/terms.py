"""What the vectors know of a term from its id: its kind, and per-term function values.

Two caches keyed by dictionary ids, kept as sorted numpy columns so that a batch's rows
cost no Python step, only the ids never met before do:

- ``TermKinds``: each id's kind (IRI, blank node, simple string, language-tagged string,
  boolean, number, dateTime, any other literal), read once from its canonical N-Triples
  text. Equality and the ``isIRI`` family are decided from kinds and ids
  (``columnar.expressions``);
- ``PerTerm``: an expression reading one variable (``regex(?name, "^A")``, ``YEAR(?t)``,
  ``STR(?x)``) asked of the row engine's ``ExpressionEvaluator`` once per distinct id of
  that variable, its answer spread back over the rows by id: the columnar form of a
  per-term function, exact because it is the evaluator's own answer.

The dictionary tells both of the ids it forgets (``Dictionary.watch``).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import Protocol

import numpy as np

from sepia.algebra import expression as ex
from sepia.engine.columnar.tables import NO_ID, Ids, distinct
from sepia.engine.r2r.expressions import CACHE_LIMIT, ExpressionEvaluator
from sepia.engine.rows import Slots
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.terms import literal_parts
from sepia.rdf.vocabulary import XSD

IRI, BLANK, STRING, LANG, BOOLEAN, NUMBER, DATETIME, OTHER, UNBOUND = range(9)
"""A term's kind; ``UNBOUND`` is no term (``NO_ID``, an error's value)."""
_NUMBER = re.compile(
    r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?INF|NaN")
_TYPED = {
    XSD + "boolean": (BOOLEAN, re.compile("true|false")),
    XSD + "integer": (NUMBER, re.compile(r"[+-]?[0-9]+")),
    XSD + "decimal": (NUMBER, re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")),
    XSD + "double": (NUMBER, _NUMBER),
    XSD + "float": (NUMBER, _NUMBER),
    XSD + "dateTime": (DATETIME, re.compile(
        r"-?[0-9]{4,}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?"
        r"(Z|[+-][0-9]{2}:[0-9]{2})?")),
}
"""Datatypes whose well-formed literals pyoxigraph compares as values of their own type
(a literal of another datatype, or ill-formed, is ``OTHER``: comparing it is an error)."""
_NONE = np.empty(0, dtype=np.int64)


def kind_of(text: str) -> int:
    """The kind of a term given by its canonical N-Triples text."""
    if text.startswith("<"):
        return IRI
    if text.startswith("_:"):
        return BLANK
    form, tail = literal_parts(text)
    if not tail:
        return STRING
    if tail.startswith("@"):
        return LANG
    kind, lexical = _TYPED.get(tail[3:-1], (OTHER, None))
    if lexical is None or not lexical.fullmatch(form):
        return OTHER
    return kind


class _ByIds(ABC):
    """A sorted id column and one aligned answer column, learnt id by id."""

    def __init__(self, dictionary: Dictionary, dtype: type) -> None:
        self.ids: Ids = _NONE
        self.answers: np.ndarray = np.empty(0, dtype=dtype)
        self.dtype = dtype
        dictionary.watch(self)

    def forget_ids(self, dropped: set[int]) -> None:
        gone = np.fromiter(dropped, dtype=np.int64, count=len(dropped))
        keep = ~np.isin(self.ids, gone) & ~self._forgotten(gone)
        self.ids, self.answers = self.ids[keep], self.answers[keep]

    def _forgotten(self, gone: Ids) -> np.ndarray:
        """Entries whose answer names a forgotten id (none, but for term values)."""
        return np.zeros(len(self.ids), dtype=bool)

    def of(self, column: Ids) -> np.ndarray:
        """Each row's answer (``column`` holds ids, ``NO_ID`` where unbound)."""
        ids = distinct(column)
        at = np.searchsorted(self.ids, ids)
        known = at < len(self.ids)
        known[known] = self.ids[at[known]] == ids[known]
        if not known.all():
            new = ids[~known]
            if len(self.ids) + len(new) > CACHE_LIMIT:  # bounded: start afresh
                self.ids, self.answers = _NONE, np.empty(0, dtype=self.dtype)
                new = ids
            self._learn(new)
        answers = self.answers[np.searchsorted(self.ids, ids)]
        return answers[np.searchsorted(ids, column)]

    def _learn(self, new: Ids) -> None:
        found: np.ndarray = np.array(self._found(new.tolist()), dtype=self.dtype)
        ids = np.concatenate([self.ids, new])
        order = np.argsort(ids, kind="stable")
        self.ids, self.answers = ids[order], np.concatenate([self.answers, found])[order]

    @abstractmethod
    def _found(self, new: list[int]) -> list[int]:
        """The answers of ids not met before."""


class TermKinds(_ByIds):
    """Each id's kind, read from the dictionary's text of it."""

    def __init__(self, dictionary: Dictionary) -> None:
        super().__init__(dictionary, np.int8)
        self.dictionary = dictionary

    def _found(self, new: list[int]) -> list[int]:
        text = self.dictionary.decode_text
        return [UNBOUND if i == NO_ID else kind_of(text(i)) for i in new]


class Host(Protocol):
    """What a FILTER's per-term evaluators share with it (no host functions: an expression
    calling one is not per term)."""

    @property
    def dictionary(self) -> Dictionary: ...

    @property
    def base(self) -> str | None: ...


class PerTerm(_ByIds):
    """An expression of at most one variable, asked of the evaluator once per distinct
    id: as a FILTER (``boolean``: each answer ``truth`` / ``falsity`` / error, as the
    caller's constants) or as a value (each answer a term id, ``NO_ID`` for an error)."""

    def __init__(
        self, e: ex.Expression, name: str | None, host: Host,
        truths: tuple[int, int, int] | None = None,
    ) -> None:
        super().__init__(host.dictionary, np.int8 if truths else np.int64)
        self.evaluator = ExpressionEvaluator(
            e, Slots(() if name is None else (name,)), host.dictionary,
            boolean=truths is not None, base=host.base)
        self.truths = truths

    def _forgotten(self, gone: Ids) -> np.ndarray:
        if self.truths is not None:
            return super()._forgotten(gone)
        return np.isin(self.answers, gone)

    def _found(self, new: list[int]) -> list[int]:
        values = self.evaluator.values([(i or None,) for i in new])
        if self.truths is None:
            return [v or NO_ID for v in values]
        true, false, error = self.truths
        e = self.evaluator
        return [true if v == e.truth else false if v == e.falsity else error for v in values]
