"""The syntax tree of a whole query lowered into a ``sepia.algebra.Query``.

``Lowering`` is a lark Transformer assembled from one rule set per concern (terms,
expressions, triples, patterns, modifiers, streaming clauses) and per dialect; this module
adds the query-level rules and puts the parts together with the dialect's defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

from lark import Token, Transformer, Tree, v_args
from lark.exceptions import VisitError
from lark.tree import Meta

from sepia.algebra.dataset import Dataset, StreamDecl
from sepia.algebra.pattern import Bgp, GraphPattern, PathPattern, TriplePattern, Values
from sepia.algebra.query import Ask, Construct, Describe, Query, QueryForm, Registration, Select
from sepia.lang import checks
from sepia.lang.context import Context
from sepia.lang.dialects import defaults
from sepia.lang.dialects.cqels import CqelsRules
from sepia.lang.dialects.csparql import CsparqlRules
from sepia.lang.dialects.epsparql import EpsparqlRules
from sepia.lang.dialects.rsepql import RsepqlRules
from sepia.lang.dialects.rspql import RspqlRules
from sepia.lang.dialects.sequence import SequenceRules
from sepia.lang.dialects.spaseq import SpaseqRules
from sepia.lang.durations import DurationRules
from sepia.lang.errors import QueryError
from sepia.lang.expressions import ExpressionRules
from sepia.lang.modifiers import ModifierRules, Modifiers, SelectClause
from sepia.lang.patterns import PatternRules
from sepia.lang.streams import StreamClauses, StreamRules
from sepia.lang.terms import TermRules
from sepia.lang.triples import TripleRules, TriplesElement


@dataclass(frozen=True, slots=True)
class QueryBody:
    """A query form with its clauses, before the trailing VALUES is known."""

    form: QueryForm
    where: GraphPattern
    select: SelectClause | None
    modifiers: Modifiers
    clauses: StreamClauses


class Lowering(
    TermRules,
    ExpressionRules,
    TripleRules,
    PatternRules,
    ModifierRules,
    DurationRules,
    StreamRules,
    SequenceRules,
    CqelsRules,
    SpaseqRules,
    RsepqlRules,
    EpsparqlRules,
    RspqlRules,
    CsparqlRules,
    Transformer,
):
    """Syntax tree -> algebra, for one query."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(visit_tokens=False)
        self.ctx = ctx

    def resolve_dialect_elements(self, elements: list) -> list:
        """Dialect elements resolved at group level: SPAseq GPMs, CQELS window sequences."""
        return self.resolve_window_sequences(self.resolve_gpms(elements))

    # ---- query level ---------------------------------------------------------------------
    def start(self, children: list) -> Query:
        registration = next((c for c in children if isinstance(c, Registration)), None)
        body = next(c for c in children if isinstance(c, QueryBody))
        values = children[-1] if isinstance(children[-1], Values) else None
        pattern = self.solution(body.where, body.select, body.modifiers, values)
        dataset = self._dataset(body.clauses)
        has_windows = bool(dataset.windows)
        features = self.ctx.features
        query = Query(
            form=body.form,
            expression=defaults.streaming_operator(pattern, features, registration, has_windows),
            dataset=dataset,
            report=body.clauses.report or defaults.default_report(features, has_windows),
            dialect=defaults.dialect(features),
            registration=registration,
            within=body.clauses.within,
            partition_by=body.clauses.partition_by,
            event_policy=self.ctx.event_policy,
            entailment=self.ctx.entailment,
            base=self.ctx.base,
            time_kind=next((t.kind for t in self.ctx.times), None),
            prefixes=tuple(self.ctx.prefixes.items()),
        )
        checks.check_query(query, self.ctx)
        return query

    def _dataset(self, clauses: StreamClauses) -> Dataset:
        windows = list(clauses.windows)
        windows += [w for w in self.ctx.generated_windows if w not in windows]
        streams = list(clauses.streams)
        streams += [
            StreamDecl(w.stream) for w in windows if all(s.iri != w.stream for s in streams)
        ]
        return Dataset(
            tuple(clauses.default_graphs),
            tuple(clauses.named_graphs),
            tuple(streams),
            tuple(windows),
        )

    def prologue(self, _children: list) -> None:
        return None

    @v_args(inline=True)
    def where_clause(self, *children: object) -> GraphPattern:
        return children[-1]  # type: ignore[return-value]

    @v_args(inline=True)
    def select_query(
        self,
        select: SelectClause,
        clauses: StreamClauses,
        where: GraphPattern,
        modifiers: Modifiers,
    ) -> QueryBody:
        return QueryBody(Select(), where, select, modifiers, clauses)

    @v_args(inline=True)
    def sub_select(
        self, select: SelectClause, where: GraphPattern, modifiers: Modifiers, values: Values | None
    ) -> GraphPattern:
        return self.solution(where, select, modifiers, values)

    @v_args(inline=True)
    def construct_query(
        self,
        _keyword: Token,
        template: tuple,
        clauses: StreamClauses,
        where: GraphPattern,
        modifiers: Modifiers,
    ) -> QueryBody:
        return QueryBody(Construct(template), where, None, modifiers, clauses)

    @v_args(meta=True)
    def construct_where(self, meta: Meta, children: list) -> QueryBody:
        clauses = next(c for c in children if isinstance(c, StreamClauses))
        modifiers = children[-1]
        block = next(
            (c for c in children if isinstance(c, TriplesElement)),
            TriplesElement((), self.ctx.span(meta)),
        )
        template = self._template(block)
        return QueryBody(Construct(template), Bgp(template), None, modifiers, clauses)

    def construct_template(self, children: list) -> tuple[TriplePattern, ...]:
        return self._template(children[0]) if children else ()

    def _template(self, block: TriplesElement) -> tuple[TriplePattern, ...]:
        if any(isinstance(item, PathPattern) for item in block.items):
            self.ctx.fail(
                block.span,
                "a CONSTRUCT template may not contain property paths",
                expected="plain triple patterns",
            )
        return tuple(item for item in block.items if isinstance(item, TriplePattern))

    def describe_query(self, children: list) -> QueryBody:
        clauses = next(c for c in children if isinstance(c, StreamClauses))
        resources = tuple(
            c for c in children[1 : children.index(clauses)] if not isinstance(c, Token)
        )
        rest = children[children.index(clauses) + 1 :]
        where = rest[0] if len(rest) == 2 else Bgp(())
        return QueryBody(Describe(resources), where, None, rest[-1], clauses)

    @v_args(inline=True)
    def ask_query(
        self, _keyword: Token, clauses: StreamClauses, where: GraphPattern, modifiers: Modifiers
    ) -> QueryBody:
        return QueryBody(Ask(), where, None, modifiers, clauses)


def lower(tree: Tree, ctx: Context) -> Query:
    """The algebra of a parsed query; lowering errors come out as QueryError."""
    try:
        return Lowering(ctx).transform(tree)
    except VisitError as error:
        if isinstance(error.orig_exc, QueryError | RecursionError):
            raise error.orig_exc from None
        raise
