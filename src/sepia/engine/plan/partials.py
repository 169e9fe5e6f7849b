"""A GROUP BY query whose SUM and AVG report their exact partial states.

Spark runs a window query split by a join variable (?trade in every triple pattern of
``SELECT ?company (AVG(?price) AS ?average) ... GROUP BY ?company``) as buckets, each over
its share of the triples: a group's values are spread over the buckets, so no bucket can
finish its SUM or AVG. Each bucket runs ``partial_query`` instead, whose PARTIAL_SUM
reports the group's exact ``Sum`` state (``rdf.aggregates.partial_literal``); a stage
after the buckets merges the states per (window time, group) and finishes them
(``Sum.from_state_texts``, ``finished``): exactly the unsplit answer, since nothing is
rounded before the end.

Only the query's own GROUP BY (under the solution modifiers, HAVING and the SELECT
expressions) is rewritten, never a sub-select's, whose sums the outer query reads as
numbers. A replaced aggregate must reach the results as it is: a HAVING, ORDER BY or SELECT
expression reading it could not be evaluated on a partial state, and is refused.
"""

from __future__ import annotations

from dataclasses import fields, replace

import pyoxigraph as ox

from sepia.algebra import expression as ex
from sepia.algebra import pattern as pa
from sepia.algebra import query as qa
from sepia.algebra.scope import nodes

SUMMED = (ex.AggregateFunction.SUM, ex.AggregateFunction.AVG)
MODIFIERS = (qa.RStream, qa.IStream, qa.DStream, pa.Project, pa.Distinct, pa.Reduced,
             pa.Slice, pa.OrderBy, pa.Extend, pa.Filter)  # fmt: skip
"""The operators above a query's GROUP BY (a HAVING is a ``Filter``)."""
READERS = (pa.Extend, pa.Filter, pa.OrderBy)
"""Those that read values (a projection only keeps them)."""


def partial_query(query: qa.Query) -> qa.Query:
    """``query`` with each non-DISTINCT SUM(?x) and AVG(?x) of its GROUP BY replaced by
    PARTIAL_SUM(?x) (COUNT, MIN, MAX, ... untouched); ValueError when an operator above
    the group reads a replaced aggregate's value."""
    expression, _ = _rewritten(query.expression)
    return replace(query, expression=expression)


def _rewritten(node: qa.QueryExpression) -> tuple[qa.QueryExpression, set[ox.Variable]]:
    """The node with its GROUP BY's sums made partial, and the variables that hold a
    partial state above it (an aggregate's, and its copies by the SELECT expressions)."""
    if isinstance(node, pa.Group):
        bindings = tuple(_partial(b) for b in node.aggregates)
        partials = {b.variable for b, old in zip(bindings, node.aggregates, strict=True)
                    if b is not old}  # fmt: skip
        return replace(node, aggregates=bindings), partials
    if not isinstance(node, MODIFIERS):
        return node, set()
    inner, partials = _rewritten(node.inner)
    if isinstance(node, pa.Extend) and isinstance(node.expression, ox.Variable):
        if node.expression in partials:
            partials.add(node.variable)  # a copy: (AVG(?p) AS ?a) binds ?a to _1agg
    elif isinstance(node, READERS) and not partials.isdisjoint(_variables(node)):
        raise ValueError(
            f"{type(node).__name__} reads a SUM or AVG whose partial state it cannot use"
        )
    return replace(node, inner=inner), partials  # type: ignore[arg-type]  # a pattern


def _partial(binding: pa.AggregateBinding) -> pa.AggregateBinding:
    """PARTIAL_SUM for a non-DISTINCT SUM or AVG, else the binding itself."""
    aggregate = binding.aggregate
    if aggregate.function not in SUMMED or aggregate.distinct:
        return binding
    made = replace(aggregate, function=ex.AggregateFunction.PARTIAL_SUM)
    return replace(binding, aggregate=made)


def _variables(node: object) -> set[ox.Variable]:
    """The variables an operator's own fields mention (its inner pattern aside)."""
    return {
        v
        for f in fields(node)  # type: ignore[arg-type]
        if f.name != "inner"
        for v in nodes(getattr(node, f.name), ox.Variable)
    }
