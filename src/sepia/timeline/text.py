"""Terms, triples and results written short for a picture: IRIs under the query's prefixes."""

from __future__ import annotations

from collections.abc import Iterable

import pyoxigraph as ox

from sepia.rdf.results import Result
from sepia.rdf.terms import Term

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
WELL_KNOWN = (("rdf", RDF), ("rdfs", "http://www.w3.org/2000/01/rdf-schema#"), ("xsd", XSD))


class Shortener:
    """Writes terms as the query wrote them: ``:carl`` for <http://example.org/carl> under
    ``PREFIX : <http://example.org/>``, plain numbers for xsd numeric literals."""

    def __init__(self, prefixes: Iterable[tuple[str, str]]) -> None:
        given = list(prefixes)
        taken = {name for name, _ in given}
        known = [(name, iri) for name, iri in WELL_KNOWN if name not in taken]
        self.prefixes = sorted(given + known, key=lambda p: -len(p[1]))

    def term(self, term: Term) -> str:
        if isinstance(term, ox.NamedNode) and term.value == f"{RDF}type":
            return "a"
        if isinstance(term, ox.NamedNode):
            for prefix, iri in self.prefixes:
                if term.value.startswith(iri) and iri:
                    return f"{prefix}:{term.value[len(iri) :]}"
            return f"<{term.value}>"
        if isinstance(term, ox.Literal) and term.datatype.value in (
            f"{XSD}integer",
            f"{XSD}decimal",
            f"{XSD}double",
            f"{XSD}boolean",
        ):
            return term.value
        return str(term)

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
        span = f" [{result.interval[0]}, {result.interval[1]}]" if result.interval else ""
        return f"{result.op} t={result.t}{span}: {body}"

    def values(self, result: Result) -> str:
        """The result in brief: its values in variable order, or its triples, or boolean."""
        if result.binding is not None:
            return ", ".join(self.term(v) for _, v in sorted(result.values.items()))
        if result.triples is not None:
            return self.triples(result.triples)
        return str(result.boolean).lower()
