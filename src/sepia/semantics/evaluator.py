"""Continuous evaluation of a query over a finite input (RSP-QL seed 004, Definition 24).

For each evaluation instant t of the report policy: refresh the windows' instantaneous
graphs, evaluate the algebraic expression over the dataset at t (SPARQL parts by pyoxigraph,
MATCH and nested paths by this package), apply the query form, then the streaming operator
(RStream / IStream / DStream against the previous evaluation's bag). Event queries are
push-based: each match is reported once, at the time it completes.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pyoxigraph as ox

from sepia.algebra import pattern as gp
from sepia.algebra import query as qa
from sepia.algebra import report as rp
from sepia.algebra.query import Unsupported
from sepia.algebra.scope import answers_anew, nodes
from sepia.algebra.sparql import FROM, TO, integer_literal, select_text
from sepia.rdf.describe import bounded_description
from sepia.rdf.order import ordered
from sepia.rdf.results import Op, Result
from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import Term
from sepia.rdf.time import TimeKind
from sepia.semantics import r2s
from sepia.semantics.dataset import StreamingDataset
from sepia.semantics.events import EventEvaluator, MatchRow
from sepia.semantics.mappings import Mu
from sepia.semantics.partition import end_of_input, split_by_value
from sepia.semantics.paths import Relation, evaluate_path
from sepia.semantics.report import Instants, evaluation_instants

AT, MATCH = "__at", "__match"
HIDDEN = (FROM, TO, AT, MATCH)


Row = tuple[tuple[tuple[str, Term], ...], int | None, int | None, str | None]
"""A solution as R2S sees it: binding sorted by name, interval, match id (hashable)."""


@dataclass(frozen=True, slots=True)
class Hook:
    """Evaluates what SPARQL cannot say, in one active graph (None: the default graph):
    MATCH becomes its rows at t (interval in hidden variables), a path with nested tests the
    node pairs it relates."""

    run: Evaluation
    graph: ox.NamedNode | None

    def __call__(self, p: gp.GraphPattern) -> str:
        match p:
            case gp.Match(event):
                rows = self.run.events.match_rows(event, self.run.t)
                return _match_values(self.run.data, rows, hidden_of(self.run.match_number[id(p)]))
            case gp.PathPattern(subject, path, obj):
                if isinstance(subject, ox.BlankNode) or isinstance(obj, ox.BlankNode):
                    # it would be read as that very node, not as a variable, and the answer
                    # silently lose its solutions
                    raise Unsupported("a blank node at an end of a path with nested tests")
                data = self.run.data
                graphs = data.default_graph() if self.graph is None else [self.graph]
                pairs = evaluate_path(path, data.triples(graphs))
                return _path_values(data, subject, obj, pairs)
            case _:
                raise Unsupported(f"{type(p).__name__} cannot be evaluated here")

    def within(self, graph: ox.NamedNode) -> Hook:
        return Hook(self.run, graph)

    def named_graphs(self) -> list[ox.NamedNode]:
        return self.run.data.visible_named_graphs()


class Evaluation:
    """The state of one query's continuous evaluation over its finite input."""

    def __init__(
        self,
        query: qa.Query,
        streams: Mapping[str, Sequence[StreamElement]],
        background: ox.Store | None,
        name: str,
        rdfs: bool = False,
        partition: tuple[str, Term] | None = None,
        end_of_input: int | None = None,
    ) -> None:
        self.query = query
        self.name = name
        self.data = StreamingDataset(query.dataset, streams, background, rdfs, query.base)
        self.t = 0
        self.kind = time_kind(streams, query.time_kind)
        if self.data.background.kind not in (None, self.kind):
            raise ValueError(
                f"background versions are stamped in {self.data.background.kind.value} time "
                f"but the run's time is {self.kind.value}"
            )
        self.special = Hook(self, None)
        self.events = EventEvaluator(
            query, self.data, self.special, self.kind, partition, end_of_input
        )
        self.blank_nodes = itertools.count()
        self.match_number = {id(m): k for k, m in enumerate(_matches(query.pattern))}
        """Each MATCH's number: the k-th keeps its interval in ``hidden_of(k)``."""

    # --- the evaluation instants -------------------------------------------------------
    def instants(self, until: int | None) -> list[int]:
        """ET: from the report policy, or every completion time for push-based queries."""
        match self.query.report:
            case rp.Report():
                return evaluation_instants(
                    self.query.report, list(self.data.windows.values()), until
                )
            case rp.PushMatches():
                times = {e.time for es in self.data.streams.values() for e in es}
                for m in _matches(self.query.pattern):
                    times |= self.events.extra_instants(m.event)
                return sorted(t for t in times if until is None or t <= until)
            case rp.Once():
                return [0]

    def changes(self) -> list[int]:
        """The instants at which the data an evaluation reads may change (``_leaping``):
        window contents and background versions; sorted, never empty."""
        found = {0}
        for window in self.data.windows.values():
            found |= window.changes()
        for graph in self.data.background.varying.values():
            found.update(graph.times)
        return sorted(found)

    # --- one evaluation ----------------------------------------------------------------
    def rows(self, t: int) -> list[Mu]:
        """The solutions of the algebraic expression at t (push queries: those due at t)."""
        self.t = t
        self.data.at(t)
        count = len(self.match_number)
        keep = tuple(name for k in range(count) for name in hidden_of(k))
        rows = self.data.select(select_text(self.query.pattern, self.special, keep))
        if count > 1:
            rows = [_combined(r, count) for r in rows]
        if isinstance(self.query.report, rp.PushMatches):
            rows = [r for r in rows if AT in r and int(r.lexical(AT)) == t]
        return rows

    def answer(self, rows: list[Mu]) -> Counter[Row]:
        """The bag of output rows the query form makes of the solutions."""
        match self.query.form:
            case qa.Select():
                return Counter(_row(r) for r in rows)
            case qa.Construct(template):
                return Counter(
                    ((("triple", t),), *_row(r)[1:3], None)
                    for r in rows
                    for t in self.construct(template, r)
                )
            case qa.Ask():
                return Counter({((("boolean", bool(rows)),), None, None, None): 1})  # type: ignore[dict-item]
            case qa.Describe(resources):
                return Counter(
                    dict.fromkeys(
                        (
                            ((("triple", t),), *_row(r)[1:3], None)
                            for r in rows
                            for t in self.describe(resources, r)
                        ),
                        1,
                    )
                )

    def construct(self, template: tuple[gp.TriplePattern, ...], row: Mu) -> set[ox.Triple]:
        """The template instantiated by one solution; blank nodes fresh per solution, and
        triples with an unbound or ill-placed term left out (SPARQL 16.2)."""
        fresh: dict[str, ox.BlankNode] = {}
        triples = set()
        for pattern in template:
            terms = [
                _instantiate(x, row, fresh, self.blank_nodes)
                for x in (pattern.subject, pattern.predicate, pattern.object)
            ]
            try:
                triples.add(ox.Triple(*terms))  # type: ignore[arg-type]
            except (TypeError, ValueError):
                continue
        return triples

    def describe(
        self, resources: tuple[ox.NamedNode | ox.Variable, ...], row: Mu
    ) -> set[ox.Triple]:
        """DESCRIBE's graph for one solution: the concise bounded description of the IRIs
        named and of the terms the solution binds to the variables named (``*``: all its
        variables), literals left out, over the dataset at t (``StreamingDataset.outgoing``)."""
        terms = [row.get(r.value) if isinstance(r, ox.Variable) else r for r in resources]
        if not resources:
            terms = [v for k, v in row.items() if k not in HIDDEN]
        nodes = [x for x in terms if isinstance(x, ox.NamedNode | ox.BlankNode)]
        blank = lambda x: isinstance(x, ox.BlankNode)  # noqa: E731
        return {
            ox.Triple(s, p, o)
            for s, p, o in bounded_description(nodes, self.data.outgoing, blank)
            if isinstance(p, ox.NamedNode)  # (always: read from the store)
        }

    def results(self, t: int, op: Op, bag: Counter[Row]) -> list[Result]:
        """The output lines of one evaluation (DESCRIBE's graphs are written as CONSTRUCT's)."""
        form = self.query.form
        if isinstance(form, qa.Construct | qa.Describe):
            graphs: dict[tuple[int | None, int | None], set[ox.Triple]] = {}
            for binding, start, end, _ in +bag:
                graphs.setdefault((start, end), set()).add(dict(binding)["triple"])  # type: ignore[arg-type]
            return [
                Result(
                    self.name, t, op, triples=tuple(sorted(g, key=str)), interval=_interval(a, b)
                )
                for (a, b), g in sorted(graphs.items(), key=repr)
            ]
        if isinstance(form, qa.Ask):
            return [
                Result(self.name, t, op, boolean=bool(dict(b)["boolean"]))
                for (b, *_), n in bag.items()
                for _ in range(n)
            ]
        rows = [
            Result(self.name, t, op, binding, interval=_interval(start, end), match=match)
            for (binding, start, end, match), n in sorted(bag.items(), key=repr)
            for _ in range(n)
        ]
        return ordered(rows, self.query.order) if self.query.order else rows


def time_kind(
    streams: Mapping[str, Sequence[StreamElement]], default: TimeKind | None = None
) -> TimeKind:
    """The run's kind of time: its elements' (abstract units when there is none)."""
    return next((e.kind for es in streams.values() for e in es), default or TimeKind.ABSTRACT)


def evaluate(
    query: qa.Query,
    streams: Mapping[str, Sequence[StreamElement]],
    background: ox.Store | None = None,
    *,
    name: str = "query",
    until: int | None = None,
    rdfs: bool = False,
) -> list[Result]:
    """Ans(Q): every result of the continuous evaluation of ``query`` over the finite
    ``streams`` (stream IRI -> elements in time order) and ``background`` data, with RDFS
    entailment when ``rdfs`` is set or the query says ``ENTAILMENT rdfs``. A PARTITION BY
    query is the union of its partitions' answers, its match ids prefixed with the
    partition's number.

    >>> from sepia import load_background, parse_query, read_stream
    >>> e1, ex = "examples/e1-shops-coupons/", "http://example.org/"
    >>> streams = {ex + s: list(read_stream(f"{e1}stream-{s}.trig", ex + s))
    ...            for s in ("nearby", "coupons")}
    >>> answer = evaluate(parse_query(open(e1 + "query.rq").read()), streams,
    ...                   load_background(e1 + "background.ttl"))
    >>> sorted((r.t, r.binding["shopper"].value.removeprefix(ex)) for r in answer)
    [(8, 'carl'), (8, 'eve'), (16, 'diana')]
    """
    rdfs = rdfs or query.entailment is qa.Entailment.RDFS
    if query.partition_by is None:
        return continuous(Evaluation(query, streams, background, name, rdfs), until)
    results: list[Result] = []
    variable = query.partition_by.value
    end = end_of_input(query, streams)
    for n, (value, members) in enumerate(partitions(query, streams, background, rdfs).items()):
        run = Evaluation(query, members, background, name, rdfs, (variable, value), end)
        results += [
            dataclasses.replace(r, match=None if r.match is None else f"p{n}.{r.match}")
            for r in continuous(run, until)
        ]
    return sorted(results, key=lambda r: r.t)


def partitions(
    query: qa.Query,
    streams: Mapping[str, Sequence[StreamElement]],
    background: ox.Store | None = None,
    rdfs: bool = False,
) -> dict[Term, dict[str, list[StreamElement]]]:
    """PARTITION BY: each value's streams (``split_by_value``), the values an element
    binds found by evaluating the event patterns over the whole input."""
    whole = Evaluation(query, streams, background, "partitions", rdfs)
    return split_by_value(query, whole.data, whole.events.per_element)


def continuous(run: Evaluation, until: int | None) -> list[Result]:
    """Definition 24: evaluate at every instant of ET, stream out through R2S."""
    operator, op = _stream_operator(run.query)
    if isinstance(run.query.report, rp.Report) and not run.match_number:
        return _leaping(run, run.query.report, until, operator, op)
    previous: Counter[Row] = Counter()
    results: list[Result] = []
    for t in run.instants(until):
        now = run.answer(run.rows(t))
        results += run.results(t, op, operator(now, previous))
        previous = now
    return results


def _leaping(
    run: Evaluation,
    report: rp.Report,
    until: int | None,
    operator: Callable[..., Counter[Row]],
    op: Op,
) -> list[Result]:
    """Definition 24 for a report policy, leaping over instants that answer nothing.

    Without MATCH, the answer at t depends on the windows' contents and the background
    versions at t only. So once an instant of ET streams out nothing (R2S makes nothing of
    an answer it just made, and NON EMPTY fails again on the same windows), every later
    instant before the next change of that data streams out nothing too: the evaluation goes
    on at the first instant of ET at or after that change. The work follows the changes and
    the results, not the length of a gap in time."""
    instants = Instants(report, list(run.data.windows.values()), until)
    changes = run.changes()
    anew = answers_anew(run.query)
    previous: Counter[Row] = Counter()
    results: list[Result] = []
    t = instants.first(instants.low)
    while t is not None:
        out: list[Result] = []
        if instants.holds(t):
            now = run.answer(run.rows(t))
            out = run.results(t, op, operator(now, previous))
            previous = now
        results += out
        after = t + 1
        if not out and not (anew and previous):  # quiet until the data changes
            later = bisect.bisect_right(changes, t)
            after = changes[later] if later < len(changes) else instants.high + 1
        t = instants.first(after)
    return results


def _stream_operator(query: qa.Query):
    match query.expression:
        case qa.IStream():
            return r2s.istream, "+"
        case qa.DStream():
            return r2s.dstream, "-"
        case _:
            return r2s.rstream, "+"


def _matches(node: object) -> list[gp.Match]:
    """The MATCH nodes inside a graph pattern."""
    return nodes(node, gp.Match, inside=False)


def hidden_of(k: int) -> tuple[str, str, str, str]:
    """The hidden variables of the k-th MATCH of a query (interval, report time, match):
    the first one's are ``HIDDEN``; each other MATCH has its own, so that joining two
    MATCHes does not equate their intervals (``_combined`` merges them)."""
    return HIDDEN if k == 0 else tuple(f"{h}_{k}" for h in HIDDEN)  # type: ignore[return-value]


def _combined(row: Mu, count: int) -> Mu:
    """A solution of several MATCHes (joined, or in OPTIONAL / UNION branches) as one
    match: its interval covers those of the matches it holds, it is reported when the last
    of them is (the time its last event arrives), its match names joined by '+'."""
    held = [hidden_of(k) for k in range(count) if hidden_of(k)[2] in row]
    names = {n for k in range(count) for n in hidden_of(k)}
    out = {k: v for k, v in row.items() if k not in names}
    if held:
        number = lambda name: int(row.lexical(name))  # noqa: E731
        out[FROM] = integer_literal(min(number(h[0]) for h in held))
        out[TO] = integer_literal(max(number(h[1]) for h in held))
        out[AT] = integer_literal(max(number(h[2]) for h in held))
        matches = [row.lexical(h[3]) for h in held if h[3] in row]
        if matches:
            out[MATCH] = ox.Literal("+".join(matches))
    return Mu(out)


def _match_values(
    data: StreamingDataset, rows: list[MatchRow], hidden: tuple[str, str, str, str]
) -> str:
    names = sorted(set().union(*(r.mu for r in rows))) if rows else []
    table = [
        [r.mu.get(n) for n in names]
        + [integer_literal(r.start), integer_literal(r.end), integer_literal(r.reported_at)]
        + [None if r.match is None else ox.Literal(r.match)]
        for r in rows
    ]
    return data.table([*names, *hidden], table)


def _path_values(
    data: StreamingDataset, subject: object, obj: object, pairs: Relation
) -> str:
    """The solutions of ``subject path obj`` from the path's (start, end) pairs."""
    ends = [(i, t) for i, t in enumerate((subject, obj)) if isinstance(t, ox.Variable)]
    if len(ends) == 2 and subject == obj:
        pairs, ends = {p for p in pairs if p[0] == p[1]}, ends[:1]
    fixed = [(i, t) for i, t in enumerate((subject, obj)) if not isinstance(t, ox.Variable)]
    table = {tuple(p[i] for i, _ in ends) for p in pairs if all(p[i] == t for i, t in fixed)}
    return data.table([t.value for _, t in ends], [list(r) for r in table])


def _interval(start: int | None, end: int | None) -> tuple[int, int] | None:
    return None if start is None or end is None else (start, end)


def _row(m: Mu) -> Row:
    binding = tuple(sorted((k, v) for k, v in m.items() if k not in HIDDEN))
    start = int(m.lexical(FROM)) if FROM in m else None
    end = int(m.lexical(TO)) if TO in m else None
    match = m.lexical(MATCH) if MATCH in m else None
    return binding, start, end, match


def _instantiate(term, row: Mu, fresh: dict[str, ox.BlankNode], counter) -> object:
    if isinstance(term, ox.Variable):
        return row.get(term.value)
    if isinstance(term, ox.BlankNode):
        return fresh.setdefault(term.value, ox.BlankNode(f"c{next(counter)}"))
    return term
