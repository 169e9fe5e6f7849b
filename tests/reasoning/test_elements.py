"""Elements closed on arrival (``reasoning.elements``): a triple whose predicate no rule
reads entails only itself, one whose predicate some rule reads is expanded; worked out by
hand from the schema."""

from __future__ import annotations

import pyoxigraph as ox

from sepia.rdf.dictionary import Dictionary
from sepia.rdf.vocabulary import RDF, RDFS
from sepia.reasoning.elements import ElementClosure

EX = "http://example.org/"


def node(name: str) -> ox.NamedNode:
    return ox.NamedNode(name if name.startswith("http") else EX + name)


SCHEMA = [
    ox.Triple(node("Leaf"), node(RDFS + "subClassOf"), node("Listed")),
    ox.Triple(node("Listed"), node(RDFS + "subClassOf"), node("Company")),
    ox.Triple(node("owns"), node(RDFS + "domain"), node("Owner")),
]


def test_only_triples_some_rule_reads_are_expanded():
    """(c price 10) entails itself alone; (c type Leaf) also entails c type Listed and c
    type Company (rdfs9 twice); (c owns d) entails c type Owner (rdfs2)."""
    dictionary = Dictionary()
    closure = ElementClosure(SCHEMA, dictionary)
    e = dictionary.encode
    c, d, kind = e(node("c")), e(node("d")), e(node(RDF + "type"))
    price = (c, e(node("price")), e(ox.Literal("10")))
    assert price[1] not in closure.ruled and kind in closure.ruled
    assert set(closure.close([price])) == {price}
    typed = (c, kind, e(node("Leaf")))
    assert set(closure.close([price, typed])) == {
        price, typed, (c, kind, e(node("Listed"))), (c, kind, e(node("Company"))),
    }
    owns = (c, e(node("owns")), d)
    assert set(closure.close([owns])) == {owns, (c, kind, e(node("Owner")))}


def test_a_triple_no_rule_reads_is_kept_in_the_cache_as_the_others():
    """The cache holds every triple seen (the dictionary's collection sees its ids there,
    whichever way it was closed)."""
    dictionary = Dictionary()
    closure = ElementClosure(SCHEMA, dictionary)
    e = dictionary.encode
    price = (e(node("c")), e(node("price")), e(ox.Literal("10")))
    closure.close([price])
    assert list(closure.expansion(price)) == [price]
    assert price in closure._expansions
