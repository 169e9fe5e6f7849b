"""The ``SEQ( ... )`` form shared by CQELS-CEP and SPAseq, read into a neutral syntax first.

Its elements say which dialect it is: SPAseq names GPMs (``SEQ(A; B+, C)``), CQELS-CEP
writes triple sequences (``SEQ({P1}, !{P2})``) or windows (``SEQ(<w1>, !<w2>)``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, cast

import pyoxigraph as ox
from lark import Token, v_args
from lark.tree import Meta

from sepia.algebra import event as ev
from sepia.algebra.pattern import GraphPattern
from sepia.lang.context import Context
from sepia.lang.errors import Span


@dataclass(frozen=True, slots=True)
class SeqAtom:
    """One element: a GPM name, a window IRI or a triple-pattern group."""

    kind: str
    value: str | ox.NamedNode | GraphPattern
    span: Span


@dataclass(frozen=True, slots=True)
class SeqNode:
    """An operator of the sequence expression, by its symbol: , ; : | & ! + ?"""

    operator: str
    operands: tuple[SeqNode | SeqAtom, ...]
    span: Span


SeqSyntax = SeqNode | SeqAtom


def atoms(node: SeqSyntax) -> Iterator[SeqAtom]:
    """The elements of a sequence expression, left to right."""
    if isinstance(node, SeqAtom):
        yield node
    else:
        for operand in node.operands:
            yield from atoms(operand)


def map_events(node: ev.EventPattern, change: Callable[[ev.Event], ev.Event]) -> ev.EventPattern:
    """The event pattern with every ``Event`` leaf replaced by ``change(leaf)``."""
    if isinstance(node, ev.Event):
        return change(node)
    updates = {
        f.name: map_events(cast(ev.EventPattern, value), change)
        for f in dataclasses.fields(node)
        if type(value := getattr(node, f.name)).__module__ == ev.__name__
        and dataclasses.is_dataclass(value)
    }
    return dataclasses.replace(cast(Any, node), **updates)


class _Sequences(Protocol):
    """What ``seq_graph`` needs of the transformer: SpaseqRules and CqelsRules give the
    three kinds of sequence."""

    ctx: Context

    def spaseq_sequence(self, expression: SeqSyntax, span: Span) -> object: ...

    def triple_sequence(self, expression: SeqSyntax, span: Span) -> object: ...

    def window_sequence(self, expression: SeqSyntax, span: Span) -> object: ...


class SequenceRules:
    """Transformer methods for the sequence expression grammar."""

    ctx: Context

    def _node(self, operator: str, meta: Meta, operands: list) -> SeqNode:
        return SeqNode(
            operator, tuple(o for o in operands if not isinstance(o, Token)), self.ctx.span(meta)
        )

    @v_args(meta=True)
    def seq_strict(self, meta: Meta, children: list) -> SeqNode:
        return self._node(",", meta, children)

    @v_args(meta=True)
    def seq_next(self, meta: Meta, children: list) -> SeqNode:
        return self._node(";", meta, children)

    @v_args(meta=True)
    def seq_any(self, meta: Meta, children: list) -> SeqNode:
        return self._node(":", meta, children)

    @v_args(meta=True)
    def seq_or(self, meta: Meta, children: list) -> SeqNode:
        return self._node("|", meta, children)

    @v_args(meta=True)
    def seq_and(self, meta: Meta, children: list) -> SeqNode:
        return self._node("&", meta, children)

    @v_args(meta=True)
    def seq_not(self, meta: Meta, children: list) -> SeqNode:
        return self._node("!", meta, children)

    @v_args(meta=True)
    def seq_kleene(self, meta: Meta, children: list) -> SeqNode:
        return self._node("+", meta, children)

    @v_args(meta=True)
    def seq_optional(self, meta: Meta, children: list) -> SeqNode:
        return self._node("?", meta, children)

    @v_args(inline=True)
    def seq_name(self, name: Token) -> SeqAtom:
        return SeqAtom("name", str(name), self.ctx.span(name))

    @v_args(meta=True, inline=True)
    def seq_window(self, meta: Meta, window: ox.NamedNode) -> SeqAtom:
        return SeqAtom("window", window, self.ctx.iri_span(window, self.ctx.span(meta)))

    @v_args(meta=True, inline=True)
    def seq_group(self, meta: Meta, pattern: GraphPattern) -> SeqAtom:
        return SeqAtom("group", pattern, self.ctx.span(meta))

    @v_args(meta=True, inline=True)
    def seq_graph(self: _Sequences, meta: Meta, _open: Token, expression: SeqSyntax) -> object:
        kinds = {atom.kind for atom in atoms(expression)}
        span = self.ctx.span(meta)
        if kinds == {"name"}:
            return self.spaseq_sequence(expression, span)
        if kinds == {"group"}:
            return self.triple_sequence(expression, span)
        if kinds == {"window"}:
            return self.window_sequence(expression, span)
        self.ctx.fail(
            span,
            "a SEQ mixes GPM names, windows and { } groups",
            expected="only GPM names (SPAseq), only { } groups or only windows (CQELS-CEP)",
        )
