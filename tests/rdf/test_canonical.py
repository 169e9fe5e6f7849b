"""Terms in pyoxigraph's canonical form (``sepia.rdf.terms.canonical``): the form the
reference evaluator's store and queries give back, which the engine's dictionary encodes so
that both evaluators print the same terms. The fast path (lexical forms already canonical,
checked by a pattern) must agree with pyoxigraph itself on every input."""

from __future__ import annotations

import pyoxigraph as ox
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sepia.engine.codec import Codec
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.terms import XSD, _held, canonical, decimal_text

DATATYPES = ["integer", "decimal", "int", "double", "boolean", "dateTime", "string"]
lexical = st.one_of(
    st.from_regex(r"[+-]?[0-9]{1,22}(\.[0-9]{0,22})?", fullmatch=True),
    st.from_regex(r"[+-]?\.[0-9]{1,5}", fullmatch=True),
    st.from_regex(r"-?(0|[1-9][0-9]{0,17})\.[0-9]{0,17}0", fullmatch=True),  # padded
    st.sampled_from(["abc", "1e3", "INF", "1", "0", "true", "2026-01-01T00:00:00.000Z", ""]),
)


@given(lexical, st.sampled_from(DATATYPES))
def test_canonical_is_what_pyoxigraph_holds(value, datatype):
    term = ox.Literal(value, datatype=ox.NamedNode(XSD + datatype))
    assert canonical(term) == _held(term)


def test_hand_picked_forms():
    integer, decimal = ox.NamedNode(XSD + "integer"), ox.NamedNode(XSD + "decimal")
    held = ox.Literal("102.1", datatype=decimal)
    assert canonical(ox.Literal("102.10", datatype=decimal)) == held
    assert canonical(ox.Literal("-0", datatype=integer)) == ox.Literal("0", datatype=integer)
    assert canonical(ox.Literal("007", datatype=ox.NamedNode(XSD + "int"))) == ox.Literal(
        "7", datatype=integer
    )  # pyoxigraph keeps derived integer types as xsd:integer
    assert canonical(ox.Literal("Hi", language="EN")) == ox.Literal("Hi", language="en")
    assert canonical(ox.Literal(" 5 ")) == ox.Literal(" 5 ")
    iri = ox.NamedNode("http://example.org/A")
    assert canonical(iri) is iri


def test_decimal_text_by_hand():
    assert decimal_text("", "107", "80") == "107.8"
    assert decimal_text("", "107", "00") == "107"
    assert decimal_text("", "7", "050") == "7.05"
    assert decimal_text("-", "0", "00") == "0"
    assert decimal_text("-", "0", "10") == "-0.1"


@pytest.mark.parametrize("dictionary", [Dictionary, Codec])
def test_the_dictionary_encodes_equal_values_of_one_form_once(dictionary):
    dictionary = dictionary()
    decimal = ox.NamedNode(XSD + "decimal")
    first = dictionary.encode(ox.Literal("1.50", datatype=decimal))
    assert dictionary.encode(ox.Literal("1.5", datatype=decimal)) == first
    assert dictionary.decode(first) == ox.Literal("1.5", datatype=decimal)
