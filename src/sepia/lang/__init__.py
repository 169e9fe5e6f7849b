"""The query language front end: text -> syntax tree (lark, with spans) -> one algebra.

``parse_query`` accepts every dialect of spec/language.md and returns a
``sepia.algebra.Query``; anything wrong is a ``QueryError`` with line, column, the offending
text, what was expected and a caret under the query line.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from sepia.lang import cache
from sepia.lang.errors import QueryError

if TYPE_CHECKING:  # the compiler (and lark) is imported when a query is not in the cache
    from sepia.algebra.event import SelectionPolicy
    from sepia.algebra.query import Entailment, Query
    from sepia.lang.static_warnings import QueryWarning
    from sepia.rdf.time import TimeKind


def parse_query(
    text: str,
    *,
    source: str = "<query>",
    base_iri: str | None = None,
    event_policy: SelectionPolicy | None = None,
    entailment: Entailment | None = None,
    syntax_only: bool = False,
) -> Query:
    """Compile query text into the algebra, or raise QueryError before any data is read.

    `base_iri` resolves relative IRIs before any BASE clause; `event_policy` is the default
    selection policy (`sepia run --event-policy`) that a query's own EVENT POLICY overrides;
    `entailment` likewise for `--entailment` and the ENTAILMENT clause. `syntax_only`
    accepts valid SPARQL that Sepia cannot evaluate (a call of an unknown function IRI).

    >>> query = parse_query(open("examples/e1-shops-coupons/query.rq").read())
    >>> query.dialect.value, [w.name.value for w in query.dataset.windows]
    ('RSP-QL', ['http://example.org/w1', 'http://example.org/w2'])
    >>> parse_query("SELEC * WHERE { ?s ?p ?o }")
    Traceback (most recent call last):
    sepia.lang.errors.QueryError: <query>:1:1: unexpected 'SELEC'; ...
    """
    options = (source, base_iri, event_policy, entailment, syntax_only)
    return cache.compiled(("query", text, *options), lambda: compile_query(text, *options))


def compile_query(
    text: str, source: str = "<query>", base_iri: str | None = None,
    event_policy: SelectionPolicy | None = None, entailment: Entailment | None = None,
    syntax_only: bool = False,
) -> Query:
    """``parse_query`` without the cache of compiled queries (``sepia.lang.cache``): the
    compiler's own work, every time."""
    from sepia.lang.checks import FLATTER, TOO_DEEP
    from sepia.lang.context import Context
    from sepia.lang.errors import span_at
    from sepia.lang.lowering import lower
    from sepia.lang.parser import parse_tree

    context = Context(text, source, base=base_iri, syntax_only=syntax_only)
    if event_policy is not None:
        context.event_policy = event_policy
    if entailment is not None:
        context.entailment = entailment
    try:
        return lower(parse_tree(text, source), context)
    except RecursionError:  # the compiler walks the query recursively
        context.fail(span_at(text, 0, 1), TOO_DEEP, expected=FLATTER)


def static_warnings(
    text: str,
    *,
    source: str = "<query>",
    graphs: Collection[str] = (),
    stream_kind: TimeKind | None = None,
) -> list[QueryWarning]:
    """The warnings of a query that compiles (``sepia.lang.static_warnings``): ``graphs``
    are the graph names the run loads, ``stream_kind`` its streams' kind of time if known.

    >>> [str(w) for w in static_warnings(
    ...     "SELECT * FROM <http://example.org/kb> WHERE { ?s ?p ?o }")]  # doctest: +ELLIPSIS
    ['<query>:1:15: the graph <http://example.org/kb> is never fetched ...=FILE']
    """
    parts = ("warnings", text, source, tuple(sorted(graphs)), stream_kind)
    return list(cache.compiled(parts, lambda: _warnings(text, source, graphs, stream_kind)))


def _warnings(
    text: str, source: str, graphs: Collection[str], stream_kind: TimeKind | None
) -> list[QueryWarning]:
    from sepia.lang.context import Context
    from sepia.lang.lowering import lower
    from sepia.lang.parser import parse_tree
    from sepia.lang.static_warnings import query_warnings

    context = Context(text, source)
    query = lower(parse_tree(text, source), context)
    return query_warnings(query, context, graphs, stream_kind)


def __getattr__(name: str) -> object:
    """``QueryWarning``, imported on first use (with the compiler)."""
    if name == "QueryWarning":
        from sepia.lang.static_warnings import QueryWarning

        return QueryWarning
    raise AttributeError(f"module 'sepia.lang' has no attribute {name!r}")


__all__ = ["QueryError", "QueryWarning", "compile_query", "parse_query", "static_warnings"]
