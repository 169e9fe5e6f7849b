"""Tables for a person: Turtle's short forms in cells, wide tables split by columns."""

from __future__ import annotations

import io

import pyoxigraph as ox
from rich.console import Console

from sepia.io.tables import column_groups, print_fitted
from sepia.io.writers import turtle_term

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
PREFIXES = {"": EX, "ex2": EX + "deep/", "xsd": XSD}


def test_iris_take_the_longest_declared_namespace():
    assert turtle_term(ox.NamedNode(EX + "carl"), PREFIXES) == ":carl"
    assert turtle_term(ox.NamedNode(EX + "deep/x"), PREFIXES) == "ex2:x"
    assert turtle_term(ox.NamedNode("http://other.org/a"), PREFIXES) == "<http://other.org/a>"
    # a local part Turtle cannot write after a prefix stays a full IRI
    assert turtle_term(ox.NamedNode(EX + "a/b?c"), PREFIXES) == "<http://example.org/a/b?c>"
    assert turtle_term(ox.NamedNode(EX + "a."), PREFIXES) == "<http://example.org/a.>"


def test_literals_as_turtle_writes_them():
    integer = ox.Literal("42", datatype=ox.NamedNode(XSD + "integer"))
    assert turtle_term(integer, {}) == "42"
    assert turtle_term(ox.Literal("1.5", datatype=ox.NamedNode(XSD + "decimal")), {}) == "1.5"
    assert turtle_term(ox.Literal("true", datatype=ox.NamedNode(XSD + "boolean")), {}) == "true"
    # "1" is a boolean's lexical form Turtle cannot write bare; the datatype is shortened
    assert turtle_term(ox.Literal("1", datatype=ox.NamedNode(XSD + "boolean")),
                       PREFIXES) == '"1"^^xsd:boolean'
    assert turtle_term(ox.Literal("x", language="en"), PREFIXES) == '"x"@en'
    assert turtle_term(ox.Literal("x"), PREFIXES) == '"x"'


def test_a_wide_table_is_split_repeating_its_key_columns():
    headers = ["variant", "system", "a", "b", "c"]
    rows = [["offers", "local", "1" * 30, "2" * 30, "3" * 30]]
    # each column needs its widest cell + 3; the border 1: keys 7+3 + 6+3 + 1 = 20
    assert column_groups(80, headers, rows, keys=2) == [[0, 1, 2], [0, 1, 3], [0, 1, 4]]
    assert column_groups(200, headers, rows, keys=2) == [[0, 1, 2, 3, 4]]
    out = io.StringIO()
    print_fitted(Console(file=out, width=80), "W1", headers, rows, keys=2)
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert sum("offers" in line for line in lines) == 3  # the key in every part
    assert "…" not in out.getvalue()
