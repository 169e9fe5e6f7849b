"""Expressions of FILTER, BIND, SELECT, HAVING and ORDER BY (SPARQL 1.1, section 17).

Leaves are pyoxigraph terms and variables. Operators are the enums below, so evaluators
dispatch on data rather than on strings typed in many places. Builtin calls name a function
of the library in :mod:`sepia.algebra.functions`; IRI calls (casts, extension functions) keep
their IRI. Aggregates only appear inside :class:`sepia.algebra.pattern.Group`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyoxigraph as ox

if TYPE_CHECKING:
    from sepia.algebra.pattern import GraphPattern


class BinaryOperator(enum.Enum):
    """SPARQL's binary operators (grammar rules 111-118), by their query symbol."""

    OR = "||"
    AND = "&&"
    EQUAL = "="
    NOT_EQUAL = "!="
    LESS = "<"
    GREATER = ">"
    LESS_OR_EQUAL = "<="
    GREATER_OR_EQUAL = ">="
    ADD = "+"
    SUBTRACT = "-"
    MULTIPLY = "*"
    DIVIDE = "/"


class UnaryOperator(enum.Enum):
    """SPARQL's prefix operators (grammar rule 118)."""

    NOT = "!"
    PLUS = "+"
    MINUS = "-"


class AggregateFunction(enum.Enum):
    """The set functions of SPARQL 1.1, section 18.5, and PARTIAL_SUM, Sepia's own, which
    no query text parses to: a group's exact SUM / AVG state as a literal
    (``rdf.aggregates.partial_literal``), reported by Spark's buckets of a split query
    for a later stage to merge (``engine.plan.partials``)."""

    COUNT = "COUNT"
    SUM = "SUM"
    MIN = "MIN"
    MAX = "MAX"
    AVG = "AVG"
    SAMPLE = "SAMPLE"
    GROUP_CONCAT = "GROUP_CONCAT"
    PARTIAL_SUM = "PARTIAL_SUM"


@dataclass(frozen=True, slots=True)
class Binary:
    """``left op right``: logical-or/and, comparison or arithmetic (SPARQL 1.1, 17.3)."""

    operator: BinaryOperator
    left: Expression
    right: Expression


@dataclass(frozen=True, slots=True)
class Unary:
    """``!e``, ``+e`` or ``-e`` (SPARQL 1.1, 17.3)."""

    operator: UnaryOperator
    operand: Expression


@dataclass(frozen=True, slots=True)
class In:
    """``e IN (...)`` or ``e NOT IN (...)`` (SPARQL 1.1, 17.4.1.9-10)."""

    expression: Expression
    options: tuple[Expression, ...]
    negated: bool


@dataclass(frozen=True, slots=True)
class Exists:
    """``EXISTS { P }`` / ``NOT EXISTS { P }`` (SPARQL 1.1, 17.4.1.4 and 18.6 substitute)."""

    pattern: GraphPattern
    negated: bool


@dataclass(frozen=True, slots=True)
class Call:
    """A builtin of SPARQL 1.1 (section 17.4) or one of the papers' extension functions.

    ``function`` is the upper-case name of an entry of ``functions.BUILTINS``, e.g. ``REGEX``,
    ``BOUND``, ``GETDURATION`` (EP-SPARQL, section 4.1) or ``TIMESTAMP`` (C-SPARQL).
    """

    function: str
    args: tuple[Expression, ...]


@dataclass(frozen=True, slots=True)
class FunctionCall:
    """``<iri>(args)``: an XSD cast (SPARQL 1.1, 17.5) or an extension function (17.6)."""

    function: ox.NamedNode
    args: tuple[Expression, ...]
    distinct: bool = False


@dataclass(frozen=True, slots=True)
class Aggregate:
    """A set function over a group (SPARQL 1.1, 18.5); no ``args`` means ``COUNT(*)``."""

    function: AggregateFunction
    args: tuple[Expression, ...]
    distinct: bool = False
    separator: str | None = None


Expression = (
    ox.NamedNode | ox.Literal | ox.Variable | Binary | Unary | In | Exists | Call | FunctionCall
    | Aggregate
)
