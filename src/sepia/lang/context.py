"""What lowering remembers while it walks one query: the text (for error carets), the
prologue, the declared streams and windows, and the names used before they are declared."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NoReturn

import pyoxigraph as ox
from lark import Token, Tree
from lark.tree import Meta

from sepia.algebra.dataset import WindowDecl
from sepia.algebra.event import SelectionPolicy
from sepia.algebra.query import Entailment
from sepia.lang.errors import QueryError, Span, span_at
from sepia.rdf.time import TimeKind


@dataclass(frozen=True, slots=True)
class Reference:
    """A use of a declared name (window, stream, GPM) and where it was written."""

    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class TimedValue:
    """A duration or time point written in the query, with its kind and place."""

    kind: TimeKind
    span: Span


@dataclass
class Context:
    """Mutable state of one lowering pass; thrown away when the query is compiled."""

    text: str
    source: str = "<query>"
    base: str | None = None
    prefixes: dict[str, str] = field(default_factory=dict)
    event_policy: SelectionPolicy = SelectionPolicy.UNRESTRICTED
    entailment: Entailment = Entailment.NONE
    syntax_only: bool = False
    """Accept what is valid SPARQL but cannot be evaluated (unknown extension functions)."""
    window_references: list[Reference] = field(default_factory=list)
    times: list[TimedValue] = field(default_factory=list)
    features: set[str] = field(default_factory=set)
    stream_names: dict[str, ox.NamedNode] = field(default_factory=dict)
    declared_windows: set[str] = field(default_factory=set)
    generated_windows: list[WindowDecl] = field(default_factory=list)
    iri_spans: dict[str, list[Span]] = field(default_factory=dict)
    sequence_spans: list[Span] = field(default_factory=list)
    partition_span: Span | None = None
    call_spans: dict[int, Span] = field(default_factory=dict)
    blank_node_scopes: dict[str, int] = field(default_factory=dict)
    fresh_counter: int = 0

    def span(self, where: Tree | Token | Meta) -> Span:
        """The source span of a tree node, token or meta."""
        meta = where.meta if isinstance(where, Tree) else where
        start = getattr(meta, "start_pos", None)
        if start is None:
            return span_at(self.text, len(self.text), len(self.text))
        return span_at(self.text, start, getattr(meta, "end_pos", start))

    def fail(
        self, where: Tree | Token | Meta | Span, message: str, expected: str | None = None
    ) -> NoReturn:
        """Reject the query with a caret under ``where``."""
        span = where if isinstance(where, Span) else self.span(where)
        raise QueryError(message, self.text, span, source=self.source, expected=expected)

    def iri_span(self, iri: ox.NamedNode, within: Span) -> Span:
        """Where ``iri`` is written inside the region ``within`` (else the region itself)."""
        return next(
            (s for s in self.iri_spans.get(iri.value, ()) if within.start <= s.start < within.end),
            within,
        )

    def fresh_variable(self, hint: str) -> ox.Variable:
        """A variable no query can write (names start with an underscore and a digit)."""
        self.fresh_counter += 1
        return ox.Variable(f"_{self.fresh_counter}{hint}")
