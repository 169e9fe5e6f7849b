"""RDF terms, dictionary encoding, stream elements and time: the data model every layer shares."""

from sepia.rdf.dictionary import Dictionary
from sepia.rdf.stream import StreamElement, StreamSet
from sepia.rdf.terms import Term, parse_term, term_to_nt
from sepia.rdf.time import TimeKind, TimeValue, format_time, parse_time_literal

__all__ = [
    "Dictionary",
    "StreamElement",
    "StreamSet",
    "Term",
    "TimeKind",
    "TimeValue",
    "format_time",
    "parse_term",
    "parse_time_literal",
    "term_to_nt",
]
