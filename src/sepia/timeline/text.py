"""Terms, triples and results written short for a picture: IRIs under the query's prefixes."""

from __future__ import annotations

from collections.abc import Iterable

import pyoxigraph as ox

from sepia.rdf.results import Result
from sepia.rdf.terms import Term, turtle_term
from sepia.rdf.time import TimeKind, format_time
from sepia.rdf.vocabulary import RDF, RDFS, XSD

WELL_KNOWN = (("rdf", RDF), ("rdfs", RDFS), ("xsd", XSD))


class Shortener:
    """Writes terms as the query wrote them: ``:carl`` for <http://example.org/carl> under
    ``PREFIX : <http://example.org/>``, plain numbers for xsd numeric literals."""

    def __init__(
        self, prefixes: Iterable[tuple[str, str]], kind: TimeKind = TimeKind.ABSTRACT
    ) -> None:
        self.kind = kind
        given = list(prefixes)
        taken = {name for name, _ in given}
        known = [(name, iri) for name, iri in WELL_KNOWN if name not in taken]
        self.prefixes = sorted(given + known, key=lambda p: -len(p[1]))

    def term(self, term: Term) -> str:
        if isinstance(term, ox.NamedNode) and term.value == f"{RDF}type":
            return "a"
        return turtle_term(term, dict(self.prefixes))

    def triple(self, triple: ox.Triple) -> str:
        return " ".join(self.term(x) for x in (triple.subject, triple.predicate, triple.object))

    def triples(self, triples: Iterable[ox.Triple]) -> str:
        return " . ".join(self.triple(t) for t in triples)

    def result(self, result: Result) -> str:
        """A result's bindings (or triples, or boolean), its interval and time."""
        if result.binding is not None:
            body = " ".join(f"?{k}={self.term(v)}" for k, v in result.values.items())
        elif result.triples is not None:
            body = self.triples(result.triples)
        else:
            body = str(result.boolean).lower()
        interval = result.interval
        span = f" [{self.time(interval[0])}, {self.time(interval[1])}]" if interval else ""
        return f"{result.op} t={self.time(result.t)}{span}: {body}"

    def time(self, t: float) -> str:
        """A time as results print it (ISO 8601 for dateTime streams)."""
        return str(format_time(int(t), self.kind))

    def values(self, result: Result) -> str:
        """The result in brief: its values in variable order, or its triples, or boolean."""
        if result.binding is not None:
            return ", ".join(self.term(v) for _, v in sorted(result.values.items()))
        if result.triples is not None:
            return self.triples(result.triples)
        return str(result.boolean).lower()
