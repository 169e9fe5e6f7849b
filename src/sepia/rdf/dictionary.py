"""Dictionary encoding: terms become integers on entry and are decoded only for output.

One dictionary serves every stream and the background data of a run, so equal terms get
equal ids everywhere. Its whole content is ``rows()`` (id, N-Triples text), so it can be
written into Spark state, broadcast, or rebuilt with ``from_rows`` on another process.
Ids start at 1 and are never reused; "unbound" is never an id (it is ``None``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sepia.rdf.terms import Term, canonical, parse_term, term_to_nt


class Dictionary:
    """A bijection between terms (by their N-Triples text) and positive integers."""

    __slots__ = ("_ids", "_texts")

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._texts: list[str] = [""]  # index 0 unused: ids start at 1

    def __len__(self) -> int:
        return len(self._ids)

    def encode_text(self, text: str) -> int:
        """The id of a term given in N-Triples text, allocating one if it is new."""
        found = self._ids.get(text)
        if found is not None:
            return found
        new = len(self._texts)
        self._ids[text] = new
        self._texts.append(text)
        return new

    def encode(self, term: Term) -> int:
        """The id of a pyoxigraph term (in its canonical form: ``terms.canonical``),
        allocating one if it is new."""
        return self.encode_text(term_to_nt(canonical(term)))

    def encode_many(self, texts: Iterable[str]) -> list[int]:
        """Ids for many N-Triples texts at once (the bulk path for columns of terms)."""
        encode = self.encode_text
        return [encode(text) for text in texts]

    def lookup(self, text: str) -> int | None:
        """The id of a term already known, else None: queries must not grow the dictionary."""
        return self._ids.get(text)

    def decode_text(self, term_id: int) -> str:
        """The N-Triples text of an id; an unknown id is a bug, so it raises."""
        if not 0 < term_id < len(self._texts):
            raise KeyError(f"term id {term_id} is not in the dictionary")
        return self._texts[term_id]

    def decode(self, term_id: int) -> Term:
        """The pyoxigraph term of an id."""
        return parse_term(self.decode_text(term_id))

    def rows(self, since: int = 0) -> Iterator[tuple[int, str]]:
        """(id, text) rows with id > since: the dictionary's state, or the part added since."""
        for term_id in range(since + 1, len(self._texts)):
            yield term_id, self._texts[term_id]

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[int, str]]) -> Dictionary:
        """Rebuild a dictionary from its rows, in any order; gaps or clashes are errors."""
        ordered = sorted(rows)
        dictionary = cls()
        for expected, (term_id, text) in enumerate(ordered, start=1):
            if term_id != expected:
                raise ValueError(f"dictionary rows skip id {expected} (next is {term_id})")
            if dictionary.encode_text(text) != term_id:
                raise ValueError(f"dictionary rows give the term {text} two ids")
        return dictionary

    def extend(self, rows: Iterable[tuple[int, str]]) -> None:
        """Add rows produced by another copy of this dictionary (ids must continue this one's)."""
        for term_id, text in sorted(rows):
            known = self._ids.get(text)
            if known is not None:
                if known != term_id:
                    raise ValueError(f"term {text} has id {known} here and {term_id} there")
                continue
            if term_id != len(self._texts):
                raise ValueError(f"dictionary rows skip id {len(self._texts)} (next is {term_id})")
            self.encode_text(text)
