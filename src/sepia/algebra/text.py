"""Print an algebra tree back to query text that compiles to the same tree.

Graph patterns print as SPARQL 1.1 groups; event patterns as :mod:`.event_text` says.
Expressions and paths are fully
parenthesised, so the text re-parses to the same tree whatever the precedences.
A tree no query can produce (e.g. ``IntervalJoin``) raises ``ValueError``.
"""

from __future__ import annotations

import pyoxigraph as ox

from sepia.algebra import dataset as ds
from sepia.algebra import event as ev
from sepia.algebra import expression as ex
from sepia.algebra import path as pa
from sepia.algebra import pattern as gp
from sepia.algebra import query as qu
from sepia.algebra import report as rp
from sepia.algebra.event_text import EventText
from sepia.algebra.terms import term_text
from sepia.rdf.time import TimeKind

_GROUP_ATOMS = (
    gp.Bgp,
    gp.PathPattern,
    gp.Graph,
    gp.Window,
    gp.Union,
    gp.Values,
    gp.Match,
    gp.Join,
    gp.LeftJoin,
    gp.Minus,
    gp.Extend,
)
_MODIFIERS = (gp.Project, gp.Slice, gp.Distinct, gp.Reduced, gp.OrderBy, gp.Group)
_UNITS = (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1))
GENERATED_WINDOW = "urn:sepia:window:"


def to_sparql(query: qu.Query) -> str:
    """The query text of a compiled query."""
    return QueryText(query.prefixes, query.dataset, query.time_kind).query(query)


class QueryText(EventText):
    """Query text of algebra nodes, with the prefixes and dataset of one query."""

    def __init__(
        self,
        prefixes: tuple[tuple[str, str], ...] = (),
        dataset: ds.Dataset | None = None,
        time_kind: TimeKind | None = None,
    ) -> None:
        self.prefixes = dict(prefixes)
        self.dataset = dataset or ds.Dataset()
        self.time_kind = time_kind

    # ---- terms, expressions, paths -------------------------------------------------------
    def term(self, term: object) -> str:
        return term_text(term, self.prefixes)  # type: ignore[arg-type]

    def expression(self, node: ex.Expression) -> str:
        match node:
            case ex.Binary(operator, left, right):
                return f"({self.expression(left)} {operator.value} {self.expression(right)})"
            case ex.Unary(operator, operand):
                return f"{operator.value}({self.expression(operand)})"
            case ex.In(inner, options, negated):
                keyword = "NOT IN" if negated else "IN"
                return f"({self.expression(inner)} {keyword} ({self.arguments(options)}))"
            case ex.Exists(pattern, negated):
                return ("NOT EXISTS " if negated else "EXISTS ") + self.group(pattern)
            case ex.Call(function, args):
                return f"{function}({self.arguments(args)})"
            case ex.FunctionCall(function, args, distinct):
                prefix = "DISTINCT " if distinct else ""
                return f"{self.term(function)}({prefix}{self.arguments(args)})"
            case ex.Aggregate(function, args, distinct, separator):
                body = "DISTINCT " if distinct else ""
                body += self.arguments(args) if args else "*"
                if separator is not None:
                    body += f"; SEPARATOR={ox.Literal(separator)}"
                return f"{function.value}({body})"
            case _:
                return self.term(node)

    def arguments(self, args: tuple[ex.Expression, ...]) -> str:
        return ", ".join(self.expression(a) for a in args)

    def path(self, node: pa.Path) -> str:
        match node:
            case pa.Link(iri):
                return self.term(iri)
            case pa.Inverse(inner):
                return f"^({self.path(inner)})"
            case pa.Sequence(left, right):
                return f"({self.path(left)} / {self.path(right)})"
            case pa.Alternative(left, right):
                return f"({self.path(left)} | {self.path(right)})"
            case pa.ZeroOrMore(inner):
                return f"({self.path(inner)})*"
            case pa.OneOrMore(inner):
                return f"({self.path(inner)})+"
            case pa.ZeroOrOne(inner):
                return f"({self.path(inner)})?"
            case pa.NegatedSet(forward, inverse):
                steps = [self.term(i) for i in forward] + [f"^{self.term(i)}" for i in inverse]
                return f"!({' | '.join(steps)})"
            case pa.NestedTest(inner, term):
                suffix = "" if term is None else " " + self.term(term)
                return f"[{self.path(inner)}{suffix}]"
        raise ValueError(f"no query text for path {node!r}")

    # ---- graph patterns ------------------------------------------------------------------
    def group(self, pattern: gp.GraphPattern) -> str:
        """``{ ... }`` whose translation is ``pattern``."""
        return "{ " + " ".join(self.elements(pattern)) + " }"

    def triple(self, triple: gp.TriplePattern) -> str:
        return " ".join(self.term(t) for t in (triple.subject, triple.predicate, triple.object))

    def elements(self, pattern: gp.GraphPattern) -> list[str]:
        """The elements of a group whose translation is ``pattern``."""
        match pattern:
            case gp.Bgp(triples):
                return [" . ".join(self.triple(t) for t in triples) + " ."] if triples else []
            case gp.PathPattern(subject, path, obj):
                return [f"{self.term(subject)} {self.path(path)} {self.term(obj)} ."]
            case gp.Join(left, right):
                return self._prefix(left) + self._element(right)
            case gp.LeftJoin(left, right, condition):
                optional = right if condition is None else gp.Filter(condition, right)
                return [*self._prefix(left), "OPTIONAL " + self.group(optional)]
            case gp.Minus(left, right):
                return [*self._prefix(left), "MINUS " + self.group(right)]
            case gp.Filter(condition, inner):
                return [*self._prefix(inner), f"FILTER({self.expression(condition)})"]
            case gp.Extend(inner, variable, expression):
                bind = f"BIND({self.expression(expression)} AS {self.term(variable)})"
                return [*self._prefix(inner), bind]
            case gp.Union(left, right):
                return [f"{self.group(left)} UNION {self.group(right)}"]
            case gp.Graph(name, inner):
                return [f"GRAPH {self.term(name)} {self.group(inner)}"]
            case gp.Values():
                return ["VALUES " + self.values(pattern)]
            case gp.Window(name, inner):
                return [self.window(name, inner)]
            case gp.Match(event):
                return self.event_elements(event)
            case _ if isinstance(pattern, _MODIFIERS):
                return ["{ " + self.select(pattern) + " }"]
        raise ValueError(f"no query text for {type(pattern).__name__}")

    def _prefix(self, pattern: gp.GraphPattern) -> list[str]:
        """Elements that may be followed by more elements of the same group."""
        if pattern == gp.Bgp(()):
            return []
        return (
            self.elements(pattern) if isinstance(pattern, _GROUP_ATOMS) else [self.group(pattern)]
        )

    def _element(self, pattern: gp.GraphPattern) -> list[str]:
        """``pattern`` as elements joined to what precedes them."""
        simple = (gp.PathPattern, gp.Graph, gp.Window, gp.Union, gp.Values)
        return self.elements(pattern) if isinstance(pattern, simple) else [self.group(pattern)]

    def values(self, values: gp.Values) -> str:
        head = " ".join(self.term(v) for v in values.variables)
        rows = " ".join(
            "(" + " ".join("UNDEF" if v is None else self.term(v) for v in row) + ")"
            for row in values.rows
        )
        return f"({head}) {{ {rows} }}"

    def window(self, name: ox.NamedNode, inner: gp.GraphPattern) -> str:
        declared = self.dataset.window(name)
        if declared is not None and name.value.startswith(GENERATED_WINDOW):
            return (
                f"STREAM {self.term(declared.stream)} {self.window_spec(declared.spec)} "
                f"{self.group(inner)}"
            )
        return f"WINDOW {self.term(name)} {self.group(inner)}"

    # ---- SELECT and the solution modifiers ------------------------------------------------
    def select(self, pattern: gp.GraphPattern) -> str:
        """``SELECT ... WHERE { } modifiers`` for a Project (or Slice, Distinct ...) node."""
        head, where, tail = self.modifiers(pattern)
        return f"{head} WHERE {self.group(where)}{tail}"

    def modifiers(self, pattern: gp.GraphPattern) -> tuple[str, gp.GraphPattern, str]:
        """The SELECT clause, the WHERE pattern and the modifiers after it."""
        tail = ""
        if isinstance(pattern, gp.Slice):
            tail = f" OFFSET {pattern.offset}" if pattern.offset else ""
            tail += f" LIMIT {pattern.limit}" if pattern.limit is not None else ""
            pattern = pattern.inner
        head = "SELECT"
        if isinstance(pattern, gp.Distinct | gp.Reduced):
            head += " DISTINCT" if isinstance(pattern, gp.Distinct) else " REDUCED"
            pattern = pattern.inner
        variables: tuple[ox.Variable, ...] | None = None
        if isinstance(pattern, gp.Project):
            variables, pattern = pattern.variables, pattern.inner
        order: tuple[gp.OrderCondition, ...] = ()
        if isinstance(pattern, gp.OrderBy):
            order, pattern = pattern.conditions, pattern.inner
        expressions: dict[ox.Variable, ex.Expression] = {}
        while isinstance(pattern, gp.Extend) and (
            pattern.variable in (variables or ()) or _over_group(pattern)
        ):
            expressions[pattern.variable] = pattern.expression
            pattern = pattern.inner
        grouping, pattern, aggregates = self._grouping(pattern)
        items = [
            f"({self.expression(_inline(expressions[v], aggregates))} AS {self.term(v)})"
            if v in expressions
            else self.term(v)
            for v in variables or ()
        ]
        if variables is not None:
            head += " " + (" ".join(items) if items else "*")
        ordering = (
            " ORDER BY " + " ".join(self._order_condition(c, aggregates) for c in order)
            if order
            else ""
        )
        return head, pattern, grouping + ordering + tail

    def _order_condition(
        self, condition: gp.OrderCondition, aggregates: dict[ox.Variable, ex.Aggregate]
    ) -> str:
        text = self.expression(_inline(condition.expression, aggregates))
        return f"DESC({text})" if condition.descending else f"ASC({text})"

    def _grouping(self, pattern: gp.GraphPattern) -> tuple[str, gp.GraphPattern, dict]:
        having = None
        if isinstance(pattern, gp.Filter) and isinstance(pattern.inner, gp.Group):
            having, pattern = pattern.expression, pattern.inner
        if not isinstance(pattern, gp.Group):
            return "", pattern, {}
        aggregates = {b.variable: b.aggregate for b in pattern.aggregates}
        inner, keys = pattern.inner, []
        bound: dict[ox.Variable, ex.Expression] = {}
        while isinstance(inner, gp.Extend) and inner.variable in pattern.variables:
            bound[inner.variable], inner = inner.expression, inner.inner
        for key in pattern.variables:
            if key in bound and key.value.startswith("_"):
                keys.append(f"({self.expression(bound[key])})")
            elif key in bound:
                keys.append(f"({self.expression(bound[key])} AS {self.term(key)})")
            else:
                keys.append(self.term(key))
        text = " GROUP BY " + " ".join(keys) if keys else ""
        if having is not None:
            text += f" HAVING ({self.expression(_inline(having, aggregates))})"
        return text, inner, aggregates

    # ---- the whole query -----------------------------------------------------------------
    def query(self, query: qu.Query) -> str:
        lines = [f"BASE <{query.base}>"] if query.base else []
        lines += [f"PREFIX {p}: <{iri}>" for p, iri in self.prefixes.items()]
        if query.entailment is not qu.Entailment.NONE:
            lines.append(f"ENTAILMENT {query.entailment.value}")
        if query.registration is not None:
            lines.append(self.registration(query.registration))
        pattern = query.pattern
        match query.form:
            case qu.Select():
                head, where, tail = self.modifiers(pattern)
            case qu.Construct(template):
                head = "CONSTRUCT { " + " . ".join(self.triple(t) for t in template) + " }"
                where, tail = self._unmodified(pattern)
            case qu.Ask():
                head, (where, tail) = "ASK", self._unmodified(pattern)
            case qu.Describe(resources):
                head = "DESCRIBE " + (" ".join(self.term(r) for r in resources) or "*")
                where, tail = self._unmodified(pattern)
        lines.append(head)
        lines += self.clauses(query)
        lines.append(f"WHERE {self.group(where)}{tail}")
        return "\n".join(lines) + "\n"

    def _unmodified(self, pattern: gp.GraphPattern) -> tuple[gp.GraphPattern, str]:
        """WHERE pattern and modifiers of CONSTRUCT / ASK / DESCRIBE, which never project:
        a projection at the top is a sub-SELECT."""
        probe = pattern.inner if isinstance(pattern, gp.Slice) else pattern
        if isinstance(probe, gp.Project | gp.Distinct | gp.Reduced):
            return pattern, ""
        _, where, tail = self.modifiers(pattern)
        return where, tail

    def registration(self, registration: qu.Registration) -> str:
        kind = registration.kind.value
        if registration.kind in (qu.RegistrationKind.QUERY, qu.RegistrationKind.STREAM):
            name = registration.name
            name = f"<{name}>" if ":" in name else name
            return f"REGISTER {kind} {name} AS"
        return f"REGISTER {kind} {self.term(ox.NamedNode(registration.name))} AS"

    def clauses(self, query: qu.Query) -> list[str]:
        """WITHIN, the dataset, REPORT, PARTITION BY and EVENT POLICY clauses."""
        lines = []
        if query.within is not None:
            tumbling = " TUMBLING" if query.within.tumbling else ""
            lines.append(f"WITHIN {self.duration(query.within.width)}{tumbling}")
        lines += [f"FROM {self.term(g)}" for g in self.dataset.default_graphs]
        lines += [f"FROM NAMED {self.term(g)}" for g in self.dataset.named_graphs]
        window_streams = {w.stream for w in self.dataset.windows}
        for stream in self.dataset.streams:
            if stream.name:
                lines.append(f"FROM STREAM {stream.name} {self.term(stream.iri)}")
            elif stream.iri not in window_streams:
                lines.append(f"FROM STREAM {self.term(stream.iri)}")
        for window in self.dataset.windows:
            spec = self.window_spec(window.spec)
            if window.into_default:
                lines.append(f"FROM STREAM {self.term(window.stream)} {spec}")
            elif not window.name.value.startswith(GENERATED_WINDOW):
                lines.append(
                    f"FROM NAMED WINDOW {self.term(window.name)} ON "
                    f"{self.term(window.stream)} {spec}"
                )
        if isinstance(query.report, rp.Report):
            lines.append(
                "REPORT " + " AND ".join(self.strategy(s) for s in query.report.strategies)
            )
        if query.partition_by is not None:
            lines.append(f"PARTITION BY {self.term(query.partition_by)}")
        if query.event_policy is not ev.SelectionPolicy.UNRESTRICTED:
            lines.append(f"EVENT POLICY {query.event_policy.value.upper()}")
        return lines

    def duration(self, value: int) -> str:
        """An integer duration in the query's unit: ``10m`` rather than ``600000ms``."""
        if self.time_kind is not TimeKind.DATETIME or not value:
            return str(value)
        unit, size = next((u, s) for u, s in _UNITS if value % s == 0)
        return f"{value // size}{unit}"

    def window_spec(self, spec: ds.WindowSpec) -> str:
        match spec:
            case ds.Sliding(width, slide, t0):
                start = f" START {self.duration(t0)}" if t0 else ""
                return f"[RANGE {self.duration(width)} STEP {self.duration(slide)}{start}]"
            case ds.Now():
                return "[NOW]"
            case ds.Landmark(t0):
                return f"[LANDMARK FROM {self.duration(t0)}]" if t0 else "[LANDMARK]"
            case ds.CountBased(count):
                return f"[TRIPLES {count}]"
            case ds.Interval(start, end):
                return f"[FROM {self.duration(start)} TO {self.duration(end)}]"
        raise ValueError(f"no query text for window {spec!r}")

    def strategy(self, strategy: rp.Strategy) -> str:
        match strategy:
            case rp.ContentChange():
                text = "ON CONTENT CHANGE"
            case rp.WindowClose():
                text = "ON WINDOW CLOSE"
            case rp.NonEmpty():
                text = "NON EMPTY"
            case rp.Periodic(period):
                text = f"EVERY {self.duration(period)}"
        return text + (f" OF {self.term(strategy.window)}" if strategy.window else "")


def _over_group(pattern: gp.Extend) -> bool:
    """True when an Extend chain ends on a Group: SELECT expressions of a grouped query."""
    inner: gp.GraphPattern = pattern
    while isinstance(inner, gp.Extend):
        inner = inner.inner
    return isinstance(inner, gp.Group) or (
        isinstance(inner, gp.Filter) and isinstance(inner.inner, gp.Group)
    )


def _inline(
    expression: ex.Expression, aggregates: dict[ox.Variable, ex.Aggregate]
) -> ex.Expression:
    """The expression with the group's aggregate variables replaced by their aggregates."""
    match expression:
        case ox.Variable() if expression in aggregates:
            return aggregates[expression]
        case ex.Binary(operator, left, right):
            return ex.Binary(operator, _inline(left, aggregates), _inline(right, aggregates))
        case ex.Unary(operator, operand):
            return ex.Unary(operator, _inline(operand, aggregates))
        case ex.In(inner, options, negated):
            return ex.In(
                _inline(inner, aggregates), tuple(_inline(o, aggregates) for o in options), negated
            )
        case ex.Call(function, args):
            return ex.Call(function, tuple(_inline(a, aggregates) for a in args))
        case ex.FunctionCall(function, args, distinct):
            return ex.FunctionCall(function, tuple(_inline(a, aggregates) for a in args), distinct)
        case _:
            return expression
