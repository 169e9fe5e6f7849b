"""Query forms over encoded solutions (RSP-QL seed 004, Definition 11's QF), and the results
they stream out.

At each evaluation the form turns the solutions into a bag (SELECT: the rows of the output
and hidden slots; CONSTRUCT: the template's triples under each solution, fresh blank nodes
for each; ASK: one boolean; DESCRIBE: the concise bounded descriptions, a set per match
interval); the streaming operator (``streams``) then says which of it goes out, and
``results`` decodes that into ``Result``s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pyoxigraph as ox

from sepia.algebra import query as qa
from sepia.engine.cep.intervals import values_at
from sepia.engine.r2r import operators as po
from sepia.engine.r2s.construct import fresh_blank
from sepia.engine.rows import FROM, HIDDEN, TO, Row, Slots
from sepia.rdf.describe import bounded_description
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.order import ordered
from sepia.rdf.results import Op, Result, Solution

EncodedTriple = tuple[int, int, int]


class QueryForm:
    """The form of one query (``name``) over its slot table and the session's dictionary;
    event queries (``events``) keep the match interval with each answer."""

    def __init__(
        self,
        query: qa.Query,
        name: str,
        slots: Slots,
        dictionary: Dictionary,
        default_graph: tuple[po.GraphRef, ...],
        events: bool,
    ) -> None:
        self.query = query
        self.name = name
        self.slots = slots
        self.dictionary = dictionary
        self.interval = [slots.index(h) for h in (FROM, TO)] if events else []
        self.kept = [i for i, n in enumerate(slots.names) if slots.visible(n) or n in HIDDEN]
        """The slots a SELECT answer keeps: the output variables and the hidden ones."""
        self.selected = values_at(self.kept)
        """A row's values in those slots, by one getter call."""
        windows = [po.WindowGraph(w.name) for w in query.dataset.windows]
        self.described = [*default_graph, *(w for w in windows if w not in default_graph)]
        """What DESCRIBE reads: the default graph, then each window's graph not in it."""

    def answer(
        self, rows: list[Row], graphs: Callable[[po.GraphRef], object]
    ) -> Counter[tuple]:
        """The bag the query form makes of the solutions (DESCRIBE: a set per interval)
        over the graphs ``graphs`` reads (DESCRIBE only)."""
        at = self.interval
        match self.query.form:
            case qa.Ask():
                return Counter({(bool(rows),): 1})
            case qa.Construct(template):
                return Counter(
                    (*t, *(row[i] for i in at))
                    for row in rows
                    for t in self.instantiate(template, row)
                )
            case qa.Describe(resources):
                described = (
                    (*t, *(row[i] for i in at))
                    for row in rows
                    for t in self.describe(resources, row, graphs)
                )
                return Counter(dict.fromkeys(described, 1))
            case _:
                return Counter(map(self.selected, rows))

    def instantiate(self, template, row: Row) -> set[EncodedTriple]:
        """The template's triples under one solution (each once), unbound ones left out;
        its blank nodes fresh for this solution (SPARQL 16.2, ``construct.fresh_blank``)."""
        slots, encode = self.slots, self.dictionary.encode
        fresh: dict[str, int] = {}
        triples = set()
        for pattern in template:
            ids = [
                row[slots.index(x.value)]
                if isinstance(x, ox.Variable)
                else fresh_blank(self.dictionary, fresh, x.value)
                if isinstance(x, ox.BlankNode)
                else encode(x)
                for x in (pattern.subject, pattern.predicate, pattern.object)
            ]
            s, p, o = ids
            if s is not None and p is not None and o is not None and self.well_placed(ids):
                triples.add((s, p, o))
        return triples

    def describe(
        self, resources: tuple, row: Row, graphs: Callable[[po.GraphRef], object]
    ) -> set[EncodedTriple]:
        """DESCRIBE's triples for one solution (``sepia.rdf.describe``): the concise
        bounded description of the IRIs named and the terms bound to the variables named
        (``*``: every variable), over the default graph and every window's graph."""
        slots, decode = self.slots, self.dictionary.decode
        encode = self.dictionary.encode
        ids = [
            row[slots.index(r.value)] if isinstance(r, ox.Variable) else encode(r)
            for r in resources
        ]
        if not resources:
            ids = [v for n, v in zip(slots.names, row, strict=True) if slots.visible(n)]
        nodes = [i for i in ids if i is not None and not isinstance(decode(i), ox.Literal)]
        read = [graphs(g) for g in self.described]
        return bounded_description(
            nodes,
            lambda s: {t for g in read for t in g.match(s, None, None)},  # type: ignore[attr-defined]
            lambda i: isinstance(decode(i), ox.BlankNode),
        )

    def well_placed(self, ids: list[int | None]) -> bool:
        s, p, _ = (self.dictionary.decode(i) for i in ids)  # type: ignore[arg-type]
        return not isinstance(s, ox.Literal) and isinstance(p, ox.NamedNode)

    def results(self, t: int, bag: Counter[tuple], op: Op) -> list[Result]:
        """The bag streamed out at t, decoded into results (CONSTRUCT and DESCRIBE: one
        result per match interval, its triples in text order)."""
        if not bag:
            return []
        decode = self.dictionary.decode
        match self.query.form:
            case qa.Ask():
                return [Result(self.name, t, op, boolean=b) for (b,) in bag.elements()]
            case qa.Construct() | qa.Describe():
                graphs: dict[tuple, list[ox.Triple]] = {}
                for key in +bag:
                    graphs.setdefault(tuple(key[3:]), []).append(ox.Triple(*map(decode, key[:3])))  # type: ignore[arg-type]
                return [
                    Result(self.name, t, op, triples=tuple(sorted(g, key=str)),
                           interval=(at[0], at[1]) if at else None)
                    for at, g in sorted(graphs.items(), key=repr)
                ]
        rows = self._selected(t, op, bag)
        return ordered(rows, self.query.order) if self.query.order else rows

    def _selected(self, t: int, op: Op, bag: Counter[tuple]) -> list[Result]:
        """SELECT rows as results: the bound output variables decoded, an event match's
        interval and match number from the hidden slots; the variables put in name order
        once for all rows (``Result.of_solution``) rather than sorted in each. A row binding
        every output variable (most rows) is decoded by one getter call, and the results
        are made together (``Result.of_solutions``): W8 pushes 152,626 matches."""
        names = [self.slots.names[i] for i in self.kept]
        shown = sorted((n, p) for p, n in enumerate(names) if n not in HIDDEN)
        start, end, number = (names.index(h) if h in names else None for h in HIDDEN)
        decode = self.dictionary.decode
        output = [n for n, _ in shown]
        read = values_at([p for _, p in shown])
        rows = list(bag.elements())
        bindings = []
        for row in rows:
            values = read(row)
            if None in values:
                pairs = zip(output, values, strict=True)
                bound = [(n, decode(v)) for n, v in pairs if v is not None]
                bindings.append(Solution(bound))
            else:
                bindings.append(Solution(zip(output, map(decode, values), strict=True)))
        intervals: list[tuple[int, int] | None] = [None] * len(rows)
        if start is not None and end is not None:
            intervals = [
                None if (first := row[start]) is None or (last := row[end]) is None
                else (first, last)
                for row in rows
            ]
        matches: list[str | None] = [None] * len(rows)
        if number is not None:
            matches = [None if row[number] is None else f"m{row[number]}" for row in rows]
        return Result.of_solutions(self.name, op, [t] * len(rows), bindings, intervals, matches)
