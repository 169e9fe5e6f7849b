"""Short string terms for hand-derived reasoning tests: the module is generic in its terms."""

from __future__ import annotations

from sepia.reasoning.schema import Schema, Vocabulary

V: Vocabulary[str] = Vocabulary(
    "type", "subClassOf", "subPropertyOf", "domain", "range", lambda t: t.startswith('"')
)


def schema(*triples: str) -> Schema[str]:
    """A schema from "s p o" strings."""
    return Schema.of(map(triple, triples), V)


def triple(text: str) -> tuple[str, str, str]:
    s, p, o = text.split()
    return s, p, o


def triples(*texts: str) -> set[tuple[str, str, str]]:
    return set(map(triple, texts))
