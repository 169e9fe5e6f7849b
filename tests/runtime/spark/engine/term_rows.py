"""The route stage's term text of an element worked out directly, term by term: the
oracle `elements.TermTexts`' rows (a table of a chunk's distinct terms) are checked against."""

from __future__ import annotations

from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import canonical
from sepia.runtime.spark.elements import ElementRow, term_text


def term_row(file: str, seq: int, element: StreamElement) -> ElementRow:
    """The row of an element with each term of its triples in canonical form, as text."""
    terms = [str(canonical(term)) for triple in element.triples for term in triple]
    return (element.stream, file, seq, element.graph, element.start, element.end,
            element.kind.value, term_text(terms))  # fmt: skip
