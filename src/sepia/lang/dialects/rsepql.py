"""RSEP-QL (seed 001): ``MATCH { E }`` with ``EVENT <w> { P }``, ``E SEQ E``, ``FIRST(E)``,
``LAST(E)`` (section 3.3). SEQ takes the query's EVENT POLICY (section 4.3, Table 1)."""

from __future__ import annotations

import pyoxigraph as ox
from lark import Token, v_args
from lark.tree import Meta

from sepia.algebra import event as ev
from sepia.algebra.pattern import GraphPattern, Match
from sepia.lang.context import Context, Reference


class RsepqlRules:
    """Transformer methods for the MATCH clause."""

    ctx: Context

    @v_args(inline=True)
    def match_graph(self, _keyword: Token, event: ev.EventPattern) -> GraphPattern:
        self.ctx.features.update({"rsepql", "event"})
        return Match(event)

    @v_args(inline=True)
    def event_seq(
        self, left: ev.EventPattern, _keyword: Token, right: ev.EventPattern
    ) -> ev.EventPattern:
        return ev.Seq(left, right, self.ctx.event_policy)

    @v_args(meta=True, inline=True)
    def event_bep(
        self, meta: Meta, _keyword: Token, window: ox.NamedNode, pattern: GraphPattern
    ) -> ev.EventPattern:
        span = self.ctx.iri_span(window, self.ctx.span(meta))
        self.ctx.window_references.append(Reference(window.value, span))
        return ev.Event(pattern, window=window)

    @v_args(inline=True)
    def event_first(self, _keyword: Token, inner: ev.EventPattern) -> ev.EventPattern:
        return ev.First(inner)

    @v_args(inline=True)
    def event_last(self, _keyword: Token, inner: ev.EventPattern) -> ev.EventPattern:
        return ev.Last(inner)
