"""Print algebra back to SPARQL 1.1 text, so pure-SPARQL sub-patterns run on pyoxigraph.

The reference evaluator trusts pyoxigraph (an independent SPARQL implementation) with
everything SPARQL already defines. What SPARQL lacks is rewritten on the way: ``WINDOW w P``
becomes ``GRAPH <window graph> { P }`` over the window's instantaneous graph, which the
evaluator materialises at each evaluation time; ``MATCH`` and paths with nested tests are
handed to a callback that evaluates them and returns an inline ``VALUES`` block; EP-SPARQL's
getDURATION(), getSTARTTIME() and getENDTIME() read the hidden variables holding the
interval of the event mapping being filtered (its sigma substitution); C-SPARQL's
timestamp() becomes a custom function the dataset answers; MIN, MAX, SAMPLE, SUM, AVG and
GROUP_CONCAT become the custom aggregates of ``rdf.aggregates``, which give one answer where SPARQL
leaves it open.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, assert_never

import pyoxigraph as ox

from sepia.algebra import expression as ex
from sepia.algebra import path as pa
from sepia.algebra import pattern as gp
from sepia.algebra.query import Unsupported
from sepia.algebra.text import QueryText
from sepia.rdf import aggregates
from sepia.rdf.time import TimeKind, format_time
from sepia.rdf.vocabulary import XSD

FROM, TO = "__from", "__to"
"""Hidden variables that carry an event mapping's interval through a SPARQL query."""

INTERVAL_ACCESSORS = {
    "GETDURATION": f"(?{TO} - ?{FROM})",
    "GETSTARTTIME": f"?{FROM}",
    "GETENDTIME": f"?{TO}",
}

TIMESTAMP = ox.NamedNode("urn:sepia:function:timestamp")
"""C-SPARQL's timestamp(?s, ?p, ?o), answered by the dataset as a custom SPARQL function."""

ONE_ANSWER = {
    ex.AggregateFunction.MIN: (aggregates.MIN, aggregates.MIN),
    ex.AggregateFunction.MAX: (aggregates.MAX, aggregates.MAX),
    ex.AggregateFunction.SAMPLE: (aggregates.SAMPLE, aggregates.SAMPLE),
    ex.AggregateFunction.SUM: (aggregates.SUM, aggregates.SUM_DISTINCT),
    ex.AggregateFunction.AVG: (aggregates.AVG, aggregates.AVG_DISTINCT),
}
"""The set functions whose answer SPARQL leaves open (among equal values, or in the order
doubles are added), without and with DISTINCT, as the custom aggregates that give one
(run with ``aggregates.custom``)."""


class Special(Protocol):
    """What evaluates the nodes SPARQL cannot say (MATCH, nested paths) into a VALUES block;
    ``within`` gives the same hook for patterns read in another active graph;
    ``named_graphs`` lists the graphs a GRAPH variable ranges over."""

    def __call__(self, pattern: gp.GraphPattern, /) -> str: ...

    def within(self, graph: ox.NamedNode) -> Special: ...

    def named_graphs(self) -> list[ox.NamedNode]: ...


def integer_literal(value: int) -> ox.Literal:
    """An xsd:integer literal (hidden interval variables, row indexes)."""
    return ox.Literal(str(value), datatype=ox.NamedNode(XSD + "integer"))


def time_literal(value: int, kind: TimeKind) -> ox.Literal:
    """A time as a filter reads it: an integer in abstract units, else an xsd:dateTime, so
    that getDURATION() is an xsd:dayTimeDuration and compares with duration literals."""
    if kind is TimeKind.ABSTRACT:
        return integer_literal(value)
    return ox.Literal(str(format_time(value, kind)), datatype=ox.NamedNode(XSD + "dateTime"))


OWN_GRAPHS = "urn:sepia:"
"""The prefix of the named graphs the evaluator keeps for itself (windows, stream elements)."""


def window_graph(name: ox.NamedNode) -> ox.NamedNode:
    """The named graph in which the evaluator materialises window ``name``'s content."""
    return ox.NamedNode(f"{OWN_GRAPHS}window:{name.value}")


def has_nested_test(path: pa.Path) -> bool:
    """Whether a path holds an nSPARQL nested test, which SPARQL 1.1 paths cannot say."""
    match path:
        case pa.NestedTest():
            return True
        case pa.Link() | pa.NegatedSet():
            return False
        case pa.Inverse(inner) | pa.ZeroOrMore(inner) | pa.OneOrMore(inner) | pa.ZeroOrOne(inner):
            return has_nested_test(inner)
        case pa.Sequence(left, right) | pa.Alternative(left, right):
            return has_nested_test(left) or has_nested_test(right)
        case _:
            assert_never(path)


def path_text(path: pa.Path) -> str:
    """A SPARQL 1.1 property path; nested tests (nSPARQL) are Sepia's, not pyoxigraph's."""
    if has_nested_test(path):
        raise Unsupported("a nested path test cannot be printed as a SPARQL 1.1 path")
    return QueryText().path(path)


def expression_text(e: ex.Expression, special: Special | None = None) -> str:
    """A SPARQL 1.1 expression."""
    return SparqlText(special).expression(e)


def pattern_text(p: gp.GraphPattern, special: Special | None = None) -> str:
    """The body of a group graph pattern (without the outer braces)."""
    return SparqlText(special).pattern(p)


def select_text(
    p: gp.GraphPattern, special: Special | None = None, keep: tuple[str, ...] = ()
) -> str:
    """A SELECT query for a chain of solution modifiers, Slice(Distinct(Project(OrderBy(
    Group(P))))) in SPARQL's order; missing links are skipped. ``keep`` adds hidden
    variables (the interval) to a projection."""
    return SparqlText(special).select_query(p, keep)


class SparqlText(QueryText):
    """The query-text printer (``QueryText``) writing plain SPARQL 1.1 for pyoxigraph:
    terms in full, each algebra node literally as its own group (the translation is then
    the tree itself), and what SPARQL cannot say handed to ``special`` or rewritten (see the
    module docstring)."""

    def __init__(self, special: Special | None = None) -> None:
        super().__init__()
        self.special = special

    def term(self, term: object) -> str:
        return str(term)

    def expression(self, node: ex.Expression) -> str:
        match node:
            case ex.Call(name, _) if name in INTERVAL_ACCESSORS:
                return INTERVAL_ACCESSORS[name]
            case ex.Call("TIMESTAMP", args):
                return f"{TIMESTAMP}({self.arguments(args)})"
            case ex.Aggregate(ex.AggregateFunction.GROUP_CONCAT, (argument,), distinct, sep):
                # the values in the total order on terms, as a simple literal even when all
                # have one language tag (SPARQL 1.1 18.5.1.7, tests agg-groupconcat-4/6)
                custom = aggregates.group_concat(" " if sep is None else sep, distinct)
                return f"{custom}({self.expression(argument)})"
            case ex.Aggregate(function, (argument,), distinct) if function in ONE_ANSWER:
                # one answer where SPARQL leaves it open (``rdf.aggregates``); a custom
                # call cannot say DISTINCT, which changes MIN, MAX and SAMPLE in nothing
                custom = ONE_ANSWER[function][distinct]
                return f"{custom}({self.expression(argument)})"
        return super().expression(node)

    def group(self, pattern: gp.GraphPattern) -> str:
        return f"{{ {self.pattern(pattern)} }}"

    def pattern(self, p: gp.GraphPattern) -> str:
        """The body of a group graph pattern (without the outer braces)."""
        group, special = self.group, self.special
        match p:
            case gp.Bgp(triples):
                return " ".join(f"{self.triple(t)} ." for t in triples)
            case gp.PathPattern(subject, path, obj) if not has_nested_test(path):
                return self._path_pattern(subject, path, obj)
            case gp.Join(left, right):
                return f"{group(left)} {group(right)}"
            case gp.LeftJoin(left, right, condition):
                guard = "" if condition is None else f" FILTER({self.expression(condition)})"
                return f"{group(left)} OPTIONAL {{ {self.pattern(right)}{guard} }}"
            case gp.Filter(condition, inner):
                return f"{group(inner)} FILTER({self.expression(condition)})"
            case gp.Union(left, right):
                return f"{group(left)} UNION {group(right)}"
            case gp.Minus(left, right):
                return f"{group(left)} MINUS {group(right)}"
            case gp.Graph(ox.Variable() as name, inner) if special is not None:
                return self._graph_variable(name, inner, special)
            case gp.Graph(name, inner):
                return f"GRAPH {self.term(name)} {{ {self._within(inner, name)} }}"
            case gp.Window(name, inner):
                graph = window_graph(name)
                return f"GRAPH {graph} {{ {self._within(inner, graph)} }}"
            case gp.Extend(inner, variable, value):
                return f"{group(inner)} BIND({self.expression(value)} AS {variable})"
            case gp.Values(variables, rows):
                return values_text([v.value for v in variables], [list(r) for r in rows])
            case (gp.Group() | gp.OrderBy() | gp.Project() | gp.Distinct() | gp.Reduced()
                  | gp.Slice()):
                return "{ " + self.select_query(p) + " }"
            case gp.Match() | gp.PathPattern():
                if special is None:
                    raise Unsupported(f"{type(p).__name__} needs the evaluator")
                return special(p)
            case _:
                assert_never(p)

    def _path_pattern(self, subject: object, path: pa.Path, obj: object) -> str:
        """``s path o``. A zero-length path from a constant x reaches x itself even when x is
        in no triple (SPARQL 1.1 section 18.4, ALP; W3C zero_or_more_set_start and friends),
        which pyoxigraph misses: that solution is added, as a set like the path's own."""
        text = f"{self.term(subject)} {path_text(path)} {self.term(obj)} ."
        ends = (subject, obj)
        variables = [x for x in ends if isinstance(x, ox.Variable)]
        if not isinstance(path, pa.ZeroOrMore | pa.ZeroOrOne) or len(variables) != 1:
            return text
        (variable,) = variables
        (constant,) = [x for x in ends if x is not variable]
        itself = f"BIND({self.term(constant)} AS {variable})"
        return f"{{ SELECT DISTINCT {variable} WHERE {{ {{ {text} }} UNION {{ {itself} }} }} }}"

    def _graph_variable(self, name: ox.Variable, inner: gp.GraphPattern, special: Special) -> str:
        """GRAPH ?g { P } as SPARQL 1.1 section 18.6 defines it: the union, over the query's
        named graphs i (never the evaluator's own), of Join(eval(i, P), {?g -> i})."""
        branches = [
            f"{{ {values_text([name.value], [[i]])} GRAPH {i} {{ {self._within(inner, i)} }} }}"
            for i in special.named_graphs()
        ]
        return f"{{ {' UNION '.join(branches)} }}" if branches else values_text([name.value], [])

    def _within(self, p: gp.GraphPattern, graph: object) -> str:
        """A pattern read in another active graph (a variable graph name keeps no hook)."""
        special = self.special
        if special is not None:
            special = special.within(graph) if isinstance(graph, ox.NamedNode) else None
        return SparqlText(special).pattern(p)

    def select_query(self, p: gp.GraphPattern, keep: tuple[str, ...] = ()) -> str:
        """A SELECT query for a chain of solution modifiers (``select_text``)."""
        limit = offset = ""
        if isinstance(p, gp.Slice):
            offset = f" OFFSET {p.offset}" if p.offset else ""
            limit = f" LIMIT {p.limit}" if p.limit is not None else ""
            p = p.inner
        modifier = ""
        if isinstance(p, gp.Distinct | gp.Reduced):
            modifier = "DISTINCT " if isinstance(p, gp.Distinct) else "REDUCED "
            p = p.inner
        projection = "*"
        if isinstance(p, gp.Project):
            names = [str(v) for v in p.variables] + [f"?{k}" for k in keep]
            projection = " ".join(names) if names else "*"
            p = p.inner
        order = ""
        if isinstance(p, gp.OrderBy):
            keys = [
                f"{'DESC' if c.descending else 'ASC'}({self.expression(c.expression)})"
                for c in p.conditions
            ]
            order = " ORDER BY " + " ".join(keys)
            p = p.inner
        body = f"{{ {self._grouped(p)} }}" if isinstance(p, gp.Group) else self.pattern(p)
        return f"SELECT {modifier}{projection} WHERE {{ {body} }}{order}{offset}{limit}"

    def _grouped(self, g: gp.Group) -> str:
        aggregates = " ".join(
            f"({self.expression(b.aggregate)} AS {b.variable})" for b in g.aggregates
        )
        keys = " ".join(str(v) for v in g.variables)
        group_by = f" GROUP BY {keys}" if keys else ""
        return f"SELECT {keys} {aggregates} WHERE {{ {self.pattern(g.inner)} }}{group_by}"


def values_text(
    variables: list[str],
    rows: Sequence[Sequence[ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple | None]],
) -> str:
    """An inline VALUES block; None is UNDEF. No variables and one empty row is the unit."""
    head = " ".join(f"?{v}" for v in variables)
    body = " ".join("(" + " ".join("UNDEF" if x is None else str(x) for x in r) + ")" for r in rows)
    return f"VALUES ({head}) {{ {body} }}"


TABLE_ROW = "__row"
"""The hidden variable naming a row of a ``table_text`` whose blank nodes are in a graph."""
TABLE_COLUMN = f"{OWN_GRAPHS}column:"


def table_text(
    variables: list[str],
    rows: Sequence[Sequence[ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple | None]],
    graph: ox.NamedNode,
) -> tuple[str, list[ox.Quad]]:
    """Rows as a group pattern with ``values_text``'s solutions, for rows that may hold blank
    nodes (stream data often does), which SPARQL's VALUES cannot: each blank node is left
    UNDEF there and read from ``graph`` instead, whose quads (row node, column, blank node)
    come back to be put in the store the query runs on. Without blank nodes: VALUES alone."""
    cells = [
        (i, v, x)
        for i, row in enumerate(rows)
        for v, x in zip(variables, row, strict=True)
        if isinstance(x, ox.BlankNode)
    ]
    if not cells:
        return values_text(variables, rows), []
    node = lambda i: ox.NamedNode(f"{graph.value}:{i}")  # noqa: E731
    table = [
        [node(i), *(None if isinstance(x, ox.BlankNode) else x for x in row)]
        for i, row in enumerate(rows)
    ]
    reads = " ".join(
        f"OPTIONAL {{ GRAPH {graph} {{ ?{TABLE_ROW} <{TABLE_COLUMN}{v}> ?{v} }} }}"
        for v in sorted({v for _, v, _ in cells})
    )
    quads = [ox.Quad(node(i), ox.NamedNode(TABLE_COLUMN + v), x, graph) for i, v, x in cells]
    head = " ".join(f"?{v}" for v in variables)
    body = f"{values_text([TABLE_ROW, *variables], table)} {reads}"
    return f"{{ SELECT {head} WHERE {{ {body} }} }}", quads
