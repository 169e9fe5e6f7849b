"""What a query can read of an element's closure (``reasoning.reads``), worked out by hand
from each query's patterns, and an element closed for a query keeping only those derived
triples (its own triples always)."""

from __future__ import annotations

import pyoxigraph as ox

from sepia.lang import parse_query
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.vocabulary import RDF, RDFS
from sepia.reasoning.elements import ElementClosure
from sepia.reasoning.reads import EVERYTHING, Reads, reads_of

EX = "http://example.org/"
PREFIX = f"PREFIX : <{EX}>\n"
KIND = ox.NamedNode(RDF + "type")


def node(name: str) -> ox.NamedNode:
    return ox.NamedNode(EX + name)


def reads(where: str, head: str = "SELECT *") -> Reads:
    return reads_of(parse_query(f"{PREFIX}{head} WHERE {{ {where} }}"))


def test_constant_predicates_and_classes_are_read():
    """W8's shape: the price predicate, and rdf:type with the one class named."""
    found = reads("{ ?c :price ?p1 } EQUALS { ?c a :Listed } SEQ { ?c :price ?p2 }")
    assert found == Reads(frozenset({node("price")}), frozenset({node("Listed")}))


def test_a_variable_class_reads_every_typing():
    found = reads("{ ?c a ?class } SEQ { ?c :price ?p }")
    assert found == Reads(frozenset({KIND, node("price")}), frozenset())


def test_a_variable_predicate_reads_everything():
    assert reads("{ ?c :price ?p } SEQ { ?c ?any :Listed }") is EVERYTHING


def test_patterns_inside_filters_and_paths_are_read():
    """EXISTS reads :owns; the path :p/^:q reads :p and :q."""
    found = reads("?c :p/^:q ?d FILTER EXISTS { ?d :owns ?e } ?c a :Listed")
    predicates = frozenset(node(p) for p in ("p", "q", "owns"))
    assert found == Reads(predicates, frozenset({node("Listed")}))


def test_a_zero_length_path_or_a_negated_set_reads_everything():
    """``:p*`` and ``:p?`` match every node of the graph at length 0, ``!:p`` any predicate."""
    for path in (":p*", ":p?", "!:p", ":q/(:p*)"):
        assert reads(f"?c {path} ?d . ?c a :Listed") is EVERYTHING, path


def test_describe_reads_everything():
    query = parse_query(f"{PREFIX}DESCRIBE ?c WHERE {{ ?c a :Listed }}")
    assert reads_of(query) is EVERYTHING


SCHEMA = [  # Leaf < Mid < Top: a typing with Leaf entails Mid and Top (rdfs9 twice)
    ox.Triple(node("Leaf"), ox.NamedNode(RDFS + "subClassOf"), node("Mid")),
    ox.Triple(node("Mid"), ox.NamedNode(RDFS + "subClassOf"), node("Top")),
    ox.Triple(node("owns"), ox.NamedNode(RDFS + "subPropertyOf"), node("has")),
]


def closed(found: Reads, *triples: tuple[str, str, str]) -> set[tuple[str, str, str]]:
    """``triples`` (local names, ``a`` for rdf:type) closed for a query reading ``found``,
    as local names again."""
    dictionary = Dictionary()
    closure = ElementClosure(SCHEMA, dictionary, found)
    term = lambda name: KIND if name == "a" else node(name)  # noqa: E731
    ids = [tuple(dictionary.encode(term(x)) for x in t) for t in triples]
    name = lambda i: "a" if dictionary.decode(i) == KIND else dictionary.decode(i).value[len(EX):]  # noqa: E731
    return {tuple(name(i) for i in t) for t in closure.close(ids)}  # type: ignore[misc]


def test_an_element_keeps_its_own_triples_and_the_derived_ones_read():
    """The query reads Top (reached from Leaf through Mid) and :has: of c a Leaf's
    consequences c a Top stays, c a Mid goes; c owns d keeps c has d (rdfs7)."""
    found = reads("{ ?c a :Top } SEQ { ?c :has ?d }")
    element = (("c", "a", "Leaf"), ("c", "owns", "d"))
    assert closed(found, *element) == {*element, ("c", "a", "Top"), ("c", "has", "d")}


def test_a_variable_class_keeps_every_derived_typing():
    found = reads("{ ?c a ?k }")
    assert closed(found, ("c", "a", "Leaf")) == {("c", "a", k) for k in ("Leaf", "Mid", "Top")}


def test_a_query_reading_nothing_derived_keeps_the_element_as_it_came():
    found = reads("{ ?c :price ?p }")
    element = (("c", "a", "Leaf"), ("c", "owns", "d"))
    assert closed(found, *element) == set(element)
    assert closed(EVERYTHING, ("c", "a", "Leaf")) == {("c", "a", k) for k in ("Leaf", "Mid", "Top")}
