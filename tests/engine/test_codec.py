"""The codec builds the terms of canonical texts without the parser where it can
(``unescaped_term``): the terms it builds are exactly the parser's."""

from __future__ import annotations

import pyoxigraph as ox
from hypothesis import given
from hypothesis import strategies as st

from sepia.engine.codec import Codec, unescaped_term
from sepia.rdf.terms import canonical, parse_term
from sepia.rdf.vocabulary import XSD

DATATYPES = [XSD + "integer", XSD + "decimal", XSD + "string", XSD + "dateTime", "http://e/t"]
terms = st.one_of(
    st.builds(lambda s: ox.NamedNode("http://e/" + s), st.text("abcé/-_.~", max_size=8)),
    st.builds(ox.Literal, st.text(max_size=8)),
    st.builds(
        lambda s, d: ox.Literal(s, datatype=ox.NamedNode(d)),
        st.text(max_size=8),
        st.sampled_from(DATATYPES),
    ),
    st.builds(
        lambda s, lang: ox.Literal(s, language=lang),
        st.text(max_size=8),
        st.sampled_from(["en", "de-ch", "x-y-z"]),
    ),
    st.builds(ox.BlankNode, st.sampled_from(["b0", "x1"])),
)


@given(terms)
def test_a_term_built_from_its_text_is_the_parsers(term: ox.NamedNode | ox.Literal) -> None:
    text = str(canonical(term))
    built = unescaped_term(text)
    assert built is None or (built == parse_term(text) and str(built) == text)
    codec = Codec()
    term_id = codec.encode(term)
    codec._decoded.clear()  # decode from the text, as for a term a reader encoded in bulk
    assert codec.decode(term_id) == parse_term(text)


def test_which_texts_take_the_parser() -> None:
    assert unescaped_term('"a\\"b"') is None  # an escaped quote
    assert unescaped_term("_:b0") is None
    assert unescaped_term('"x"@en') == ox.Literal("x", language="en")
    assert unescaped_term('"7"^^<' + XSD + "integer>") == ox.Literal(
        "7", datatype=ox.NamedNode(XSD + "integer")
    )
