"""Element rows' N-Triples cut into terms by the columnar reader's expressions
(`columns.triple_ids` through `frontend.ntriples_ids`) give each element the terms that
parsing its lines gives, in canonical form, and say when they cannot (a blank node, an
escape), so the caller parses those."""

from __future__ import annotations

import numpy as np
import pyoxigraph as ox

from sepia.engine.codec import Codec
from sepia.engine.columnar.frontend import ntriples_ids
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.stream import StreamElement
from sepia.runtime.spark import elements as element_rows
from sepia.runtime.spark.columns import triple_ids
from sepia.runtime.spark.elements import (
    TermTexts,
    as_text,
    is_term_text,
    ntriples,
    to_element,
)

from .term_rows import term_row

XSD = "http://www.w3.org/2001/XMLSchema#"
PLAIN = [
    '<http://ex.org/a> <http://ex.org/price> "25.30"^^<' + XSD + "decimal> .\n"
    '<http://ex.org/a> <http://ex.org/volume> "7"^^<' + XSD + "integer> .",
    "",
    '<http://ex.org/b> <http://ex.org/name> "Bee"^^<' + XSD + "string> .",
    '<http://ex.org/b> <http://ex.org/label> "abeille"@fr .\n'
    '<http://ex.org/b> <http://ex.org/price> "-0.0"^^<' + XSD + "decimal> .\n"
    '<http://ex.org/c> <http://ex.org/price> "+5"^^<' + XSD + "integer> .",
]
"""Four elements (one without triples): padded decimals, an explicit xsd:string, a language
tag and a non-canonical integer."""


def _by_parsing(documents: list[str]) -> list[list[tuple[str, str, str]]]:
    """Each element's triples as the canonical N-Triples texts a plain dictionary gives
    its parsed terms (worked out independently of the columnar reader)."""
    dictionary = Dictionary()
    found = []
    for text in documents:
        triples = [q.triple for q in ox.parse(text, format=ox.RdfFormat.N_TRIPLES)] if text else []
        texts = [tuple(dictionary.decode_text(dictionary.encode(t)) for t in tr) for tr in triples]
        found.append(texts)
    return found


def _decoded(codec: Codec, ids: tuple[np.ndarray, ...], count: int) -> list[list[tuple]]:
    s, p, o, element = ids
    found: list[list[tuple]] = [[] for _ in range(count)]
    for si, pi, oi, e in zip(s.tolist(), p.tolist(), o.tolist(), element.tolist(), strict=True):
        found[e].append(tuple(codec.decode_text(i) for i in (si, pi, oi)))
    return found


def test_cut_terms_are_the_parsed_canonical_terms() -> None:
    codec = Codec()
    ids = ntriples_ids(PLAIN, codec)
    assert ids is not None
    assert ids[3].tolist() == [0, 0, 2, 3, 3, 3]
    assert _decoded(codec, ids, len(PLAIN)) == _by_parsing(PLAIN)
    decimals = {codec.decode_text(i) for i in ids[2].tolist()}
    assert f'"25.3"^^<{XSD}decimal>' in decimals and f'"0"^^<{XSD}decimal>' in decimals
    assert f'"5"^^<{XSD}integer>' in decimals and '"Bee"' in decimals


def test_blank_nodes_and_escapes_are_left_to_the_parser() -> None:
    blank = ["_:b0 <http://ex.org/p> <http://ex.org/o> ."]
    escaped = ['<http://ex.org/s> <http://ex.org/p> "two\\nlines" .']
    assert ntriples_ids(blank, Codec()) is None
    assert ntriples_ids(escaped, Codec()) is None
    mixed = [*PLAIN, *escaped]
    codec = Codec()
    assert _decoded(codec, triple_ids(mixed, codec), len(mixed)) == _by_parsing(mixed)


def test_no_triples_at_all() -> None:
    s, p, o, element = triple_ids(["", ""], Codec())
    assert len(s) == len(p) == len(o) == len(element) == 0


def test_the_route_stage_s_term_text_is_the_parsed_canonical_terms() -> None:
    # the route stage's term text: what a bucket encodes by text, without a parse
    documents = [*PLAIN, '_:b0 <http://ex.org/says> "l\\u00e0\\n"@EN .']
    elements = [
        StreamElement("http://s", f"http://g/{n}", n, n,
                      tuple(q.triple for q in ox.parse(text, format=ox.RdfFormat.N_TRIPLES)))
        for n, text in enumerate(documents)
    ]  # fmt: skip
    texts = [term_row("f", n, element)[7] for n, element in enumerate(elements)]
    assert texts[1] == "" and all(is_term_text(t) for n, t in enumerate(texts) if n != 1)
    codec = Codec()
    assert _decoded(codec, triple_ids(texts, codec), len(texts)) == _by_parsing(documents)
    assert [to_element(("s", "f", 0, "g", 0, 0, "abstract", t)).triples for t in texts] == [
        tuple(q.triple for q in ox.parse(ntriples(t), format=ox.RdfFormat.N_TRIPLES))
        for t in _canonical_documents(documents)
    ]



def test_a_task_s_term_texts_made_once_are_each_element_s_parsed_canonical_terms(
    monkeypatch,
) -> None:
    # the route stage's TermTexts: repeated terms (a padded decimal, a tag in capitals, a
    # blank node) take the text made when first met, and the bound starts it afresh
    monkeypatch.setattr(element_rows, "TERM_TEXTS", 3)
    documents = [
        *PLAIN,
        *PLAIN,
        '_:b0 <http://ex.org/says> "x"@EN .\n_:b0 <http://ex.org/price> "25.30"^^<' + XSD
        + "decimal> .",
    ]
    elements = [
        StreamElement("http://s", f"http://g/{n}", n, n,
                      tuple(q.triple for q in ox.parse(text, format=ox.RdfFormat.N_TRIPLES)))
        for n, text in enumerate(documents)
    ]  # fmt: skip
    texts = TermTexts()
    rows = [texts("f", n, element) for n, element in enumerate(elements)]
    assert len(texts.known) <= 3 + 9  # afresh after more than 3: at most one element's more
    codec = Codec()
    found = triple_ids([row[7] for row in rows], codec)
    assert _decoded(codec, found, len(rows)) == _by_parsing(documents)
    assert [as_text(row) for row in rows] == [
        term_row("f", n, element) for n, element in enumerate(elements)
    ]


def _canonical_documents(documents: list[str]) -> list[str]:
    """Each document's triples in canonical form, as N-Triples lines."""
    return [
        "\n".join(" ".join(texts) + " ." for texts in element)
        for element in _by_parsing(documents)
    ]
