"""Lowering of group graph patterns: SPARQL 1.1's translation (section 18.2.2) into the algebra.

A group's elements are folded left to right: triples blocks and nested patterns are joined,
OPTIONAL becomes LeftJoin (taking the optional group's FILTER as its condition), MINUS
becomes Minus, BIND becomes Extend, and the group's FILTERs wrap the result. Dialect
elements (SPAseq GPMs, CQELS-CEP window sequences, EP-SPARQL operators) are resolved first
by their own modules.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING

import pyoxigraph as ox
from lark import Token, v_args
from lark.tree import Meta

from sepia.algebra.expression import Binary, BinaryOperator, Expression
from sepia.algebra.pattern import (
    Bgp,
    Extend,
    Filter,
    Graph,
    GraphPattern,
    Join,
    LeftJoin,
    Minus,
    PathPattern,
    TriplePattern,
    Union,
    Values,
)
from sepia.algebra.scope import in_scope
from sepia.lang.context import Context
from sepia.lang.errors import Span
from sepia.lang.expressions import contains_aggregate
from sepia.lang.triples import TriplesElement


@dataclass(frozen=True, slots=True)
class OptionalElement:
    """``OPTIONAL { P }`` waiting for the pattern before it."""

    pattern: GraphPattern


@dataclass(frozen=True, slots=True)
class MinusElement:
    """``MINUS { P }`` waiting for the pattern before it."""

    pattern: GraphPattern


@dataclass(frozen=True, slots=True)
class FilterElement:
    """A FILTER; it applies to the whole group whatever its position."""

    expression: Expression


@dataclass(frozen=True, slots=True)
class BindElement:
    """``BIND(e AS ?v)``: extends the pattern before it."""

    variable: ox.Variable
    expression: Expression
    span: Span


def join(left: GraphPattern | None, right: GraphPattern) -> GraphPattern:
    """Join(left, right) with the empty group as identity and adjacent BGPs merged."""
    if left is None or left == Bgp(()):
        return right
    if isinstance(left, Bgp) and isinstance(right, Bgp):
        return Bgp(left.triples + right.triples)
    return Join(left, right)


def conjunction(expressions: list[Expression]) -> Expression:
    """F1 && F2 && ...: the group's filters as one condition."""
    return reduce(lambda a, b: Binary(BinaryOperator.AND, a, b), expressions)


def triples_pattern(element: TriplesElement) -> GraphPattern:
    """A triples block: its plain triples as one BGP, joined with its path patterns."""
    triples = tuple(i for i in element.items if isinstance(i, TriplePattern))
    pattern: GraphPattern = Bgp(triples)
    for path in (i for i in element.items if isinstance(i, PathPattern)):
        pattern = join(pattern, path)
    return pattern


class PatternRules:
    """Transformer methods for group graph patterns."""

    ctx: Context

    if TYPE_CHECKING:  # given by Lowering and EpsparqlRules
        def resolve_dialect_elements(self, elements: list) -> list: ...

        def is_event_pattern(self, pattern: GraphPattern) -> bool: ...

        def is_event_group(self, elements: list) -> bool: ...

        def temporal_operator(
            self, operator: Token, left: GraphPattern, right: GraphPattern
        ) -> GraphPattern: ...

        def event_group(self, elements: list, span: Span) -> GraphPattern: ...

    @v_args(inline=True)
    def group_graph_pattern(self, pattern: GraphPattern) -> GraphPattern:
        return pattern

    @v_args(meta=True)
    def group_graph_pattern_sub(self, meta: Meta, children: list) -> GraphPattern:
        elements = [c for c in children if not isinstance(c, Token)]
        self._check_blank_node_scopes(elements)
        return self.lower_group(elements, self.ctx.span(meta))

    def lower_group(self, elements: list, span: Span) -> GraphPattern:
        """Resolve the dialect elements of a group, then translate it (SPARQL 18.2.2.6)."""
        elements = self.resolve_dialect_elements(elements)
        if self.is_event_group(elements):
            return self.event_group(elements, span)
        return self.translate_group(elements)

    def translate_group(self, elements: list) -> GraphPattern:
        """The SPARQL translation of a group with only standard elements."""
        pattern: GraphPattern | None = None
        filters: list[Expression] = []
        for element in elements:
            match element:
                case TriplesElement():
                    pattern = join(pattern, triples_pattern(element))
                case OptionalElement(Filter(expression, inner)):
                    pattern = LeftJoin(pattern or Bgp(()), inner, expression)
                case OptionalElement(inner):
                    pattern = LeftJoin(pattern or Bgp(()), inner, None)
                case MinusElement(inner):
                    pattern = Minus(pattern or Bgp(()), inner)
                case FilterElement(expression):
                    filters.append(expression)
                case BindElement():
                    pattern = self._bind(pattern, element)
                case _:
                    pattern = join(pattern, element)
        result = pattern or Bgp(())
        return Filter(conjunction(filters), result) if filters else result

    def _bind(self, pattern: GraphPattern | None, element: BindElement) -> GraphPattern:
        before = pattern or Bgp(())
        if element.variable in in_scope(before):
            self.ctx.fail(
                element.span,
                f"BIND assigns {element.variable}, which is already bound in the group before it",
                expected="a variable not used earlier in the group",
            )
        return Extend(before, element.variable, element.expression)

    def _check_blank_node_scopes(self, elements: list) -> None:
        """SPARQL 1.1, 4.1.4: one blank node label belongs to one basic graph pattern; triples
        blocks separated only by FILTERs are one basic graph pattern."""
        block: int | None = None
        for element in elements:
            if isinstance(element, FilterElement):
                continue
            if not isinstance(element, TriplesElement):
                block = None
                continue
            block = element.span.start if block is None else block
            for item in element.items:
                for term in (item.subject, item.object):
                    if isinstance(term, ox.BlankNode) and not term.value.startswith("sepia."):
                        owner = self.ctx.blank_node_scopes.setdefault(term.value, block)
                        if owner != block:
                            self.ctx.fail(
                                element.span,
                                f"blank node label {term} is used in "
                                "two different basic graph patterns",
                                expected="a fresh label in each basic graph pattern",
                            )

    # ---- the non-triples elements -------------------------------------------------------
    def group_or_union(self, children: list) -> GraphPattern:
        pattern = children[0]
        for operator, right in zip(children[1::2], children[2::2], strict=True):
            if operator.type == "UNION" and not (
                self.is_event_pattern(pattern) or self.is_event_pattern(right)
            ):
                pattern = Union(pattern, right)
            else:
                pattern = self.temporal_operator(operator, pattern, right)
        return pattern

    @v_args(inline=True)
    def optional(self, _keyword: Token, pattern: GraphPattern) -> OptionalElement:
        return OptionalElement(pattern)

    @v_args(inline=True)
    def minus(self, _keyword: Token, pattern: GraphPattern) -> MinusElement:
        return MinusElement(pattern)

    @v_args(inline=True)
    def graph_graph(
        self, _keyword: Token, name: ox.NamedNode | ox.Variable, pattern: GraphPattern
    ) -> GraphPattern:
        return Graph(name, pattern)

    @v_args(meta=True)
    def service(self, meta: Meta, _children: list) -> None:
        self.ctx.fail(
            meta,
            "SERVICE is not supported: a query never reaches the network",
            expected="background graphs passed with --data and read with GRAPH",
        )

    @v_args(meta=True, inline=True)
    def filter(self, meta: Meta, _keyword: Token, expression: Expression) -> FilterElement:
        if contains_aggregate(expression):
            self.ctx.fail(
                meta,
                "aggregates are not allowed in FILTER",
                expected="an aggregate in SELECT, HAVING or ORDER BY",
            )
        return FilterElement(expression)

    @v_args(meta=True, inline=True)
    def bind(
        self, meta: Meta, _keyword: Token, expression: Expression, _as: Token, variable: ox.Variable
    ) -> BindElement:
        if contains_aggregate(expression):
            self.ctx.fail(
                meta,
                "aggregates are not allowed in BIND",
                expected="an aggregate in SELECT, HAVING or ORDER BY",
            )
        return BindElement(variable, expression, self.ctx.span(meta))

    @v_args(inline=True)
    def inline_data(self, _keyword: Token, values: Values) -> Values:
        return values
