"""The run's dictionary with the two caches the engine's hot paths need.

``Dictionary.encode`` goes through a term's N-Triples text and ``decode`` parses it back;
per triple on entry and per output term that cost more than the engine's own work. This
subclass remembers term -> id and id -> term for the terms it has seen (a term encoded is
remembered both ways, so the terms of the input are never parsed back from their text);
its rows are the dictionary's, so state is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyoxigraph as ox

from sepia.engine.graph import EncodedTriple
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.terms import Term, canonical, literal_parts, term_to_nt


class Codec(Dictionary):
    """A ``Dictionary`` that caches encodings and decodings of pyoxigraph terms."""

    __slots__ = ("__weakref__", "_decoded", "_encoded", "_variants")

    def __init__(self) -> None:
        super().__init__()
        self._encoded: dict[Term, int] = {}
        self._decoded: dict[int, Term] = {}
        """Every id ``_encoded`` names has its canonical term here."""
        self._variants: dict[int, list[Term]] = {}
        """Ids' other keys in ``_encoded`` (``"01"^^xsd:integer`` beside ``"1"``), so that
        forgetting deletes exactly the dropped ids' keys without a pass over all of them."""

    def copy(self) -> Codec:
        """The same terms under the same ids (allocation goes on from the same id), watched
        by no cache: a session starts from a background encoded once (`PreparedBackground`)
        for the cost of copying dicts, not of encoding its triples again."""
        copied = Codec()
        copied._ids, copied._texts, copied._next = dict(self._ids), dict(self._texts), self._next
        copied._encoded, copied._decoded = dict(self._encoded), dict(self._decoded)
        copied._variants = {term_id: list(terms) for term_id, terms in self._variants.items()}
        return copied

    def encode(self, term: Term) -> int:
        found = self._encoded.get(term)
        if found is None:
            kept = canonical(term)
            found = self._encoded[term] = self.encode_text(term_to_nt(kept))
            self._decoded.setdefault(found, kept)
            if kept != term:
                self._variants.setdefault(found, []).append(term)
        return found

    def encode_canonical(self, term: Term, text: str) -> int:
        found = self._encoded.get(term)
        if found is None:
            found = self._encoded[term] = self.encode_text(text)
            self._decoded.setdefault(found, term)
        return found

    def encode_triples(self, triples: Iterable[ox.Triple]) -> list[EncodedTriple]:
        """Triples as ids, one dict lookup per known term (ids are never 0)."""
        known, encode = self._encoded.get, self.encode
        return [
            (known(s) or encode(s), known(p) or encode(p), known(o) or encode(o))
            for s, p, o in triples
        ]

    def decode(self, term_id: int) -> Term:
        found = self._decoded.get(term_id)
        if found is None:
            found = unescaped_term(self.decode_text(term_id)) or super().decode(term_id)
            self._decoded[term_id] = found
        return found

    def forget(self, dropped: set[int]) -> None:
        """``Dictionary.forget``, and the cached terms of the ids dropped with it: work in
        proportion to the ids dropped, not to the dictionary (a collection pauses the run)."""
        super().forget(dropped)
        encoded, decoded, variants = self._encoded, self._decoded, self._variants
        for term_id in dropped:
            term = decoded.pop(term_id, None)
            if term is not None:
                encoded.pop(term, None)
            for variant in variants.pop(term_id, ()):
                del encoded[variant]


def unescaped_term(text: str) -> Term | None:
    """The term of a canonical N-Triples text built without the parser (a third of its
    cost), or None: an IRI, or a literal plain, typed or language-tagged, with no escape in
    it (canonical text escapes every quote and backslash). Blank nodes, triple terms and
    directional tags take the parser."""
    if "\\" in text:
        return None
    if text[0] == "<":
        return ox.NamedNode(text[1:-1]) if text[1] != "<" else None
    if text[0] != '"':
        return None
    lexical, rest = literal_parts(text)
    if not rest:
        return ox.Literal(lexical)
    if rest.startswith("^^<"):
        return ox.Literal(lexical, datatype=ox.NamedNode(rest[3:-1]))
    if rest[0] == "@" and "--" not in rest:
        return ox.Literal(lexical, language=rest[1:])
    return None


def encode_triples(dictionary: Dictionary, triples: Iterable[ox.Triple]) -> list[EncodedTriple]:
    """An element's triples as ids: with a ``Codec``, one dict lookup per known term (ids
    are never 0), instead of a method call each (per triple on entry, the hottest path)."""
    if isinstance(dictionary, Codec):
        return dictionary.encode_triples(triples)
    encode = dictionary.encode
    return [(encode(s), encode(p), encode(o)) for s, p, o in triples]
