"""RDF terms are pyoxigraph's; this module converts them to and from N-Triples text.

N-Triples text is the one external form of a term in Sepia: the dictionary keys on it,
the jsonl writer prints it, and Spark rows carry it when they carry terms at all.
"""

from __future__ import annotations

from functools import lru_cache

import pyoxigraph as ox

Term = ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple

_SUBJECT = "<urn:sepia:s> "
_PREDICATE = "<urn:sepia:p> "


def term_to_nt(term: Term) -> str:
    """The N-Triples form of a term (pyoxigraph's ``str`` is exactly that)."""
    return str(term)


@lru_cache(maxsize=65536)
def parse_term(text: str) -> Term:
    """Parse one term written in N-Triples syntax, as found in jsonl results or dictionary rows."""
    try:
        quads = list(ox.parse(_SUBJECT + _PREDICATE + text + " .", format=ox.RdfFormat.N_TRIPLES))
    except SyntaxError as error:
        raise ValueError(f"not an RDF term in N-Triples syntax: {text!r} ({error})") from None
    if len(quads) != 1:
        raise ValueError(f"not a single RDF term: {text!r}")
    return quads[0].object
