"""Lowering of expressions (SPARQL 1.1 rules 110-129) and the function-library check.

A call to a name outside ``sepia.algebra.functions`` (or with the wrong number of arguments)
is rejected here, with the closest known names as the suggestion. IRI calls are casts or
extension functions (SPARQL 1.1, 17.6); only unknown names in the XSD namespace are errors.
"""

from __future__ import annotations

import difflib
from dataclasses import replace

import pyoxigraph as ox
from lark import Token, v_args
from lark.tree import Meta

from sepia.algebra.expression import (
    Aggregate,
    AggregateFunction,
    Binary,
    BinaryOperator,
    Call,
    Exists,
    Expression,
    FunctionCall,
    In,
    Unary,
    UnaryOperator,
)
from sepia.algebra.functions import BUILTINS, CSPARQL_TIMESTAMP, XSD_CASTS
from sepia.algebra.pattern import GraphPattern
from sepia.lang.context import Context
from sepia.rdf.vocabulary import XSD

EXTENSION_FUNCTIONS = frozenset({"urn:sepia:function:timestamp"})
"""Function IRIs besides the XSD casts that Sepia evaluates (C-SPARQL's timestamp())."""
_COMPARATORS = {op.value: op for op in BinaryOperator}


class ExpressionRules:
    """Transformer methods for the expression rules of the grammar."""

    ctx: Context

    @v_args(inline=True)
    def or_expression(self, left: Expression, right: Expression) -> Expression:
        return Binary(BinaryOperator.OR, left, right)

    @v_args(inline=True)
    def and_expression(self, left: Expression, right: Expression) -> Expression:
        return Binary(BinaryOperator.AND, left, right)

    @v_args(inline=True)
    def comparison(self, left: Expression, operator: Token, right: Expression) -> Expression:
        return Binary(_COMPARATORS[str(operator)], left, right)

    @v_args(inline=True)
    def in_expression(self, left: Expression, _in: Token, options: tuple) -> Expression:
        return In(left, options, negated=False)

    @v_args(inline=True)
    def not_in_expression(
        self, left: Expression, _not: Token, _in: Token, options: tuple
    ) -> Expression:
        return In(left, options, negated=True)

    @v_args(inline=True)
    def add(self, left: Expression, right: Expression) -> Expression:
        return Binary(BinaryOperator.ADD, left, right)

    @v_args(inline=True)
    def subtract(self, left: Expression, right: Expression) -> Expression:
        return Binary(BinaryOperator.SUBTRACT, left, right)

    @v_args(inline=True)
    def add_signed(self, left: Expression, product: Expression) -> Expression:
        """``?x +1`` and ``?x -1*2``: the sign of the literal is the additive operator."""
        product, negative = _unsign_leftmost(product)
        operator = BinaryOperator.SUBTRACT if negative else BinaryOperator.ADD
        return Binary(operator, left, product)

    @v_args(inline=True)
    def multiply(self, left: Expression, right: Expression) -> Expression:
        return Binary(BinaryOperator.MULTIPLY, left, right)

    @v_args(inline=True)
    def divide(self, left: Expression, right: Expression) -> Expression:
        return Binary(BinaryOperator.DIVIDE, left, right)

    @v_args(inline=True)
    def not_expression(self, operand: Expression) -> Expression:
        return Unary(UnaryOperator.NOT, operand)

    @v_args(inline=True)
    def plus_expression(self, operand: Expression) -> Expression:
        return Unary(UnaryOperator.PLUS, operand)

    @v_args(inline=True)
    def minus_expression(self, operand: Expression) -> Expression:
        return Unary(UnaryOperator.MINUS, operand)

    @v_args(inline=True)
    def bracketted_expression(self, expression: Expression) -> Expression:
        return expression

    @v_args(inline=True)
    def constraint(self, expression: Expression) -> Expression:
        return expression

    @v_args(inline=True)
    def builtin_call(self, expression: Expression) -> Expression:
        return expression

    def expression_list(self, children: list) -> tuple[Expression, ...]:
        return tuple(c for c in children if not isinstance(c, Token))

    def arg_list(self, children: list) -> tuple[bool, tuple[Expression, ...]]:
        distinct = any(isinstance(c, Token) and c.type == "DISTINCT" for c in children)
        return distinct, tuple(c for c in children if not isinstance(c, Token))

    @v_args(meta=True, inline=True)
    def call(self, meta: Meta, name: Token, arguments: tuple) -> Expression:
        distinct, args = arguments
        function = str(name).upper()
        arity = BUILTINS.get(function)
        if arity is None:
            close = difflib.get_close_matches(function, BUILTINS, n=3)
            self.ctx.fail(
                name,
                f"unknown function '{name}'",
                expected=" or ".join(close) if close else "a SPARQL 1.1 builtin",
            )
        return self._builtin(meta, function, distinct, args)

    def _builtin(
        self, meta: Meta, function: str, distinct: bool, args: tuple[Expression, ...]
    ) -> Expression:
        arity = BUILTINS[function]
        if distinct:
            self.ctx.fail(meta, f"DISTINCT is only allowed in aggregates, not in {function}()")
        if not arity.accepts(len(args)):
            self.ctx.fail(
                meta, f"{function}() takes {arity.describe()} argument(s), found {len(args)}"
            )
        self.ctx.features.add(function.lower())
        call = Call(function, args)
        self.ctx.call_spans[id(call)] = self.ctx.span(meta)
        return call

    @v_args(meta=True, inline=True)
    def iri_call(self, meta: Meta, iri: ox.NamedNode, arguments: tuple) -> Expression:
        distinct, args = arguments
        if iri.value == CSPARQL_TIMESTAMP:  # how C-SPARQL's own examples spell timestamp()
            return self._builtin(meta, "TIMESTAMP", distinct, args)
        if iri.value.startswith(XSD):
            if iri.value not in XSD_CASTS:
                self.ctx.fail(
                    meta,
                    f"unknown function <{iri.value}>",
                    expected="one of the XSD constructor functions of SPARQL 1.1",
                )
            if len(args) != 1 or distinct:
                self.ctx.fail(meta, "an XSD constructor function takes exactly 1 argument")
        elif iri.value not in EXTENSION_FUNCTIONS and not self.ctx.syntax_only:  # fails late
            self.ctx.fail(
                meta,
                f"unknown function <{iri.value}>",
                expected="a SPARQL 1.1 built-in, an XSD constructor function or timestamp()",
            )
        return FunctionCall(iri, args, distinct)

    @v_args(inline=True)
    def exists(self, _keyword: Token, pattern: GraphPattern) -> Expression:
        return Exists(pattern, negated=False)

    @v_args(inline=True)
    def not_exists(self, _not: Token, _exists: Token, pattern: GraphPattern) -> Expression:
        return Exists(pattern, negated=True)

    def aggregate(self, children: list) -> Expression:
        function = AggregateFunction(str(children[0]).upper())
        distinct = any(isinstance(c, Token) and c.type == "DISTINCT" for c in children)
        values = [c for c in children[1:] if not isinstance(c, Token)]
        star = any(isinstance(c, Token) and c.type == "STAR" for c in children)
        separator = (
            values[1] if function is AggregateFunction.GROUP_CONCAT and len(values) > 1 else None
        )
        args = () if star else (values[0],)
        return Aggregate(function, args, distinct, separator)


def _unsign_leftmost(expression: Expression) -> tuple[Expression, bool]:
    """Strip the sign of the leftmost literal of a product, telling whether it was '-'."""
    if isinstance(expression, Binary):
        left, negative = _unsign_leftmost(expression.left)
        return replace(expression, left=left), negative
    assert isinstance(expression, ox.Literal)
    text = expression.value
    return ox.Literal(text[1:], datatype=expression.datatype), text.startswith("-")


def contains_aggregate(expression: object) -> bool:
    """True when an aggregate occurs in the expression outside any EXISTS pattern."""
    match expression:
        case Aggregate():
            return True
        case Binary(_, left, right):
            return contains_aggregate(left) or contains_aggregate(right)
        case Unary(_, operand):
            return contains_aggregate(operand)
        case In(inner, options, _):
            return contains_aggregate(inner) or any(map(contains_aggregate, options))
        case Call(_, args) | FunctionCall(_, args, _):
            return any(map(contains_aggregate, args))
        case _:
            return False
