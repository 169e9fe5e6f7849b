"""Lowering of SELECT, GROUP BY, HAVING, ORDER BY, LIMIT / OFFSET and VALUES (SPARQL 1.1,
sections 18.2.4 and 18.2.5), with the aggregate checks of section 11.

Aggregates are replaced by fresh variables bound by one ``Group`` node; a grouped query may
only project group keys, aggregates and expressions over them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pyoxigraph as ox
from lark import Token, v_args
from lark.tree import Meta

from sepia.algebra.expression import Aggregate, Binary, Call, Expression, FunctionCall, In, Unary
from sepia.algebra.pattern import (
    AggregateBinding,
    Distinct,
    Extend,
    Filter,
    GraphPattern,
    Group,
    OrderBy,
    OrderCondition,
    Project,
    Reduced,
    Slice,
    Values,
)
from sepia.algebra.scope import expression_variables, in_scope
from sepia.lang.context import Context
from sepia.lang.errors import Span
from sepia.lang.expressions import contains_aggregate
from sepia.lang.patterns import conjunction, join


@dataclass(frozen=True, slots=True)
class SelectItem:
    """``?v`` or ``(e AS ?v)`` in a SELECT clause."""

    variable: ox.Variable
    expression: Expression | None
    span: Span


@dataclass(frozen=True, slots=True)
class SelectClause:
    """SELECT [DISTINCT|REDUCED] items, or ``*`` when ``items`` is None."""

    items: tuple[SelectItem, ...] | None
    modifier: str | None
    span: Span


@dataclass
class Modifiers:
    """The solution modifiers after WHERE."""

    span: Span
    group_keys: list[tuple[ox.Variable | None, Expression, Span]] = field(default_factory=list)
    grouped: bool = False
    having: list[Expression] = field(default_factory=list)
    order: list[OrderCondition] = field(default_factory=list)
    offset: int = 0
    limit: int | None = None


class ModifierRules:
    """Transformer methods for the query's head and tail."""

    ctx: Context

    @v_args(meta=True)
    def select_clause(self, meta: Meta, children: list) -> SelectClause:
        modifier = next(
            (
                str(c.children[0]).upper()
                for c in children
                if getattr(c, "data", None) == "select_modifier"
            ),
            None,
        )
        star = any(isinstance(c, Token) and c.type == "STAR" for c in children)
        items = tuple(c for c in children if isinstance(c, SelectItem))
        return SelectClause(None if star else items, modifier, self.ctx.span(meta))

    @v_args(meta=True, inline=True)
    def select_item(self, meta: Meta, variable: ox.Variable) -> SelectItem:
        return SelectItem(variable, None, self.ctx.span(meta))

    @v_args(meta=True, inline=True)
    def select_expression(
        self, meta: Meta, expression: Expression, _as: Token, variable: ox.Variable
    ) -> SelectItem:
        return SelectItem(variable, expression, self.ctx.span(meta))

    @v_args(meta=True)
    def solution_modifier(self, meta: Meta, children: list) -> Modifiers:
        modifiers = Modifiers(span=self.ctx.span(meta))
        for part in children:
            part(modifiers)
        return modifiers

    def group_clause(self, children: list) -> Any:
        keys = [c for c in children if not isinstance(c, Token)]

        def apply(modifiers: Modifiers) -> None:
            modifiers.grouped = True
            modifiers.group_keys.extend(keys)

        return apply

    @v_args(meta=True)
    def group_condition(self, meta: Meta, children: list) -> tuple:
        values = [c for c in children if not isinstance(c, Token)]
        expression = values[0]
        if contains_aggregate(expression):
            self.ctx.fail(
                meta,
                "aggregates are not allowed in GROUP BY",
                expected="a variable or an expression without aggregates",
            )
        variable = (
            values[1]
            if len(values) > 1
            else (expression if isinstance(expression, ox.Variable) else None)
        )
        return variable, expression, self.ctx.span(meta)

    def having_clause(self, children: list) -> Any:
        conditions = [c for c in children if not isinstance(c, Token)]

        def apply(modifiers: Modifiers) -> None:
            modifiers.grouped = True
            modifiers.having.extend(conditions)

        return apply

    def order_clause(self, children: list) -> Any:
        conditions = [c for c in children if isinstance(c, OrderCondition)]
        return lambda modifiers: modifiers.order.extend(conditions)

    @v_args(inline=True)
    def order_condition(self, expression: Expression) -> OrderCondition:
        return OrderCondition(expression)

    @v_args(inline=True)
    def directed_order(self, direction: Token, expression: Expression) -> OrderCondition:
        return OrderCondition(expression, descending=direction.type == "DESC")

    def limit_offset(self, children: list) -> Any:
        def apply(modifiers: Modifiers) -> None:
            for name, value in children:
                setattr(modifiers, name, value)

        return apply

    @v_args(inline=True)
    def limit(self, _keyword: Token, value: Token) -> tuple[str, int]:
        return "limit", int(value)

    @v_args(inline=True)
    def offset(self, _keyword: Token, value: Token) -> tuple[str, int]:
        return "offset", int(value)

    def values_clause(self, children: list) -> Values | None:
        return next((c for c in children if isinstance(c, Values)), None)

    @v_args(inline=True)
    def data_one_var(self, variable: ox.Variable, *values: object) -> Values:
        return Values((variable,), tuple((value,) for value in values))  # type: ignore[misc]

    @v_args(meta=True)
    def data_full(self, meta: Meta, children: list) -> Values:
        variables = tuple(c for c in children if isinstance(c, ox.Variable))
        rows = tuple(
            () if isinstance(c, Token) else c
            for c in children
            if isinstance(c, tuple)
            or (isinstance(c, Token) and c.type == "NIL" and c.start_pos != meta.start_pos)
        )
        for row in rows:
            if len(row) != len(variables):
                self.ctx.fail(
                    meta, f"a VALUES row has {len(row)} value(s) for {len(variables)} variable(s)"
                )
        return Values(variables, rows)

    def data_row(self, children: list) -> tuple:
        return tuple(children)

    # ---- SPARQL 18.2.4 and 18.2.5 --------------------------------------------------------
    def solution(
        self,
        pattern: GraphPattern,
        select: SelectClause | None,
        modifiers: Modifiers,
        values: Values | None,
    ) -> GraphPattern:
        """The grouped, projected, ordered and sliced pattern of a query (18.2.4-18.2.5);
        ``select`` is None for CONSTRUCT, ASK and DESCRIBE, which project nothing."""
        items = select.items if select is not None else ()
        grouped = (
            modifiers.grouped
            or any(
                item.expression is not None and contains_aggregate(item.expression)
                for item in items or ()
            )
            or any(contains_aggregate(c.expression) for c in modifiers.order)
        )
        if grouped:
            pattern, items = self._group(pattern, select, modifiers)
        elif items:
            pattern = self._extend_with_select_expressions(pattern, items)
        if values is not None:
            pattern = join(pattern, values)
        if modifiers.order:
            pattern = OrderBy(pattern, tuple(modifiers.order))
        if select is not None:
            pattern = self._project(pattern, select, items)
        if modifiers.offset or modifiers.limit is not None:
            pattern = Slice(_ties_broken(pattern), modifiers.offset, modifiers.limit)
        return pattern

    def _project(
        self, pattern: GraphPattern, select: SelectClause, items: tuple[SelectItem, ...] | None
    ) -> GraphPattern:
        """Projection, then DISTINCT or REDUCED."""
        variables = (
            tuple(item.variable for item in items)
            if items is not None
            else tuple(v for v in in_scope(pattern) if not v.value.startswith("_"))
        )
        pattern = Project(pattern, variables)
        if select.modifier == "DISTINCT":
            return Distinct(pattern)
        if select.modifier == "REDUCED":
            return Reduced(pattern)
        return pattern

    def _extend_with_select_expressions(
        self, pattern: GraphPattern, items: tuple[SelectItem, ...]
    ) -> GraphPattern:
        for item in items:
            if item.expression is None:
                continue
            if item.variable in in_scope(pattern):
                self.ctx.fail(
                    item.span,
                    f"SELECT assigns {item.variable}, which is already bound",
                    expected="a new variable after AS",
                )
            pattern = Extend(pattern, item.variable, item.expression)
        return pattern

    def _group(
        self, pattern: GraphPattern, select: SelectClause | None, modifiers: Modifiers
    ) -> tuple[GraphPattern, tuple[SelectItem, ...]]:
        """Group, aggregate, HAVING, then the SELECT expressions (SPARQL 18.2.4.1)."""
        keys: list[ox.Variable] = []
        for variable, expression, _span in modifiers.group_keys:
            if variable is None or not isinstance(expression, ox.Variable):
                variable = variable or self.ctx.fresh_variable("group")
                pattern = Extend(pattern, variable, expression)
            keys.append(variable)
        if select is not None and select.items is None:
            self.ctx.fail(
                select.span,
                "SELECT * is not allowed with GROUP BY or aggregates",
                expected="the grouped variables and aggregates to project",
            )
        span = select.span if select is not None else modifiers.span
        bindings: list[AggregateBinding] = []
        items = tuple(
            replace(item, expression=self._hoist(item.expression, bindings, item.span))
            if item.expression is not None
            else item
            for item in (select.items if select is not None else ()) or ()
        )
        having = [self._hoist(h, bindings, span) for h in modifiers.having]
        modifiers.order = [
            replace(c, expression=self._hoist(c.expression, bindings, span))
            for c in modifiers.order
        ]
        grouped: GraphPattern = Group(pattern, tuple(keys), tuple(bindings))
        if having:
            grouped = Filter(conjunction(having), grouped)
        allowed = set(keys) | {b.variable for b in bindings}
        for item in items:
            self._check_grouped(item, allowed)
            allowed.add(item.variable)
        return self._extend_with_select_expressions(grouped, items), items

    def _check_grouped(self, item: SelectItem, allowed: set[ox.Variable]) -> None:
        used = (
            {item.variable}
            if item.expression is None
            else {ox.Variable(n) for n in expression_variables(item.expression, nested=False)}
        )
        stray = sorted(v.value for v in used - allowed)
        if stray:
            self.ctx.fail(
                item.span,
                f"?{stray[0]} is projected but neither grouped nor aggregated",
                expected=f"GROUP BY ?{stray[0]} or an aggregate such as SAMPLE(?{stray[0]})",
            )

    def _hoist(
        self, expression: Expression, bindings: list[AggregateBinding], span: Span
    ) -> Expression:
        """Replace each aggregate by a fresh variable bound by the group."""
        match expression:
            case Aggregate(_, args, _, _):
                if any(contains_aggregate(arg) for arg in args):
                    self.ctx.fail(span, "an aggregate may not contain another aggregate")
                variable = self.ctx.fresh_variable("agg")
                bindings.append(AggregateBinding(variable, expression))
                return variable
            case Binary(operator, left, right):
                return Binary(
                    operator, self._hoist(left, bindings, span), self._hoist(right, bindings, span)
                )
            case Unary(operator, operand):
                return Unary(operator, self._hoist(operand, bindings, span))
            case In(inner, options, negated):
                return In(
                    self._hoist(inner, bindings, span),
                    tuple(self._hoist(o, bindings, span) for o in options),
                    negated,
                )
            case Call(function, args):
                return Call(function, tuple(self._hoist(a, bindings, span) for a in args))
            case FunctionCall(function, args, distinct):
                return FunctionCall(
                    function, tuple(self._hoist(a, bindings, span) for a in args), distinct
                )
            case _:
                return expression


def _ties_broken(pattern: GraphPattern) -> GraphPattern:
    """An ordered SELECT about to be sliced, its ORDER BY extended with the projected
    variables (ascending) it does not order by yet: which rows a LIMIT or OFFSET keeps
    must not depend on how an evaluator happens to list rows of equal keys (both evaluators
    then keep the same rows; docs/semantics.md, "Order within an evaluation")."""
    match pattern:
        case Distinct(inner):
            return Distinct(_ties_broken(inner))
        case Reduced(inner):
            return Reduced(_ties_broken(inner))
        case Project(OrderBy(inner, conditions), variables):
            keyed = {c.expression for c in conditions}
            extra = tuple(OrderCondition(v) for v in variables if v not in keyed)
            return Project(OrderBy(inner, conditions + extra), variables)
    return pattern
