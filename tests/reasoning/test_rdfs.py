"""The schema closure and the per-triple expansion, rule by rule, derived by hand."""

from __future__ import annotations

from sepia.reasoning.rdfs import closure, entailed, graph_closure

from .vocabulary import V, schema, triple, triples

UNIVERSITY = schema(
    "Student subClassOf Person",
    "Person subClassOf Agent",
    "attends subPropertyOf participates",
    "participates domain Agent",
    "attends domain Student",
    "attends range Course",
)


def test_hierarchies_are_closed_transitively_and_cycles_include_themselves():
    s = schema("A subClassOf B", "B subClassOf C", "C subClassOf D", "X subClassOf Y",
               "Y subClassOf X", "p subPropertyOf q", "q subPropertyOf r")
    assert s.super_classes["A"] == {"B", "C", "D"}
    assert s.super_classes["C"] == {"D"}
    assert s.super_classes["X"] == {"X", "Y"}
    assert s.super_properties["p"] == {"q", "r"}
    assert s.classes_of("B") == {"B", "C", "D"}
    assert s.classes_of("Z") == {"Z"}


def test_domains_and_ranges_are_inherited_down_properties_and_up_classes():
    assert UNIVERSITY.subject_types["attends"] == {"Student", "Person", "Agent"}
    assert UNIVERSITY.subject_types["participates"] == {"Agent"}
    assert UNIVERSITY.object_types["attends"] == {"Course"}
    assert "participates" not in UNIVERSITY.object_types


def test_each_rule_alone():
    assert entailed(triple("a attends c"), schema("attends domain S")) == triples(
        "a attends c", "a type S")  # rdfs2
    assert entailed(triple("a attends c"), schema("attends range C")) == triples(
        "a attends c", "c type C")  # rdfs3
    assert entailed(triple("p subPropertyOf q"), schema("q subPropertyOf r")) == triples(
        "p subPropertyOf q", "p subPropertyOf r")  # rdfs5
    assert entailed(triple("a p b"), schema("p subPropertyOf q")) == triples(
        "a p b", "a q b")  # rdfs7
    assert entailed(triple("a type A"), schema("A subClassOf B")) == triples(
        "a type A", "a type B")  # rdfs9
    assert entailed(triple("A subClassOf B"), schema("B subClassOf C")) == triples(
        "A subClassOf B", "A subClassOf C")  # rdfs11


def test_rules_combined_and_no_type_for_a_literal():
    assert entailed(triple("alice attends c1"), UNIVERSITY) == triples(
        "alice attends c1", "alice participates c1",
        "alice type Student", "alice type Person", "alice type Agent", "c1 type Course")
    assert entailed(("bob", "attends", '"x"'), UNIVERSITY) == triples(
        "bob type Student", "bob type Person", "bob type Agent") | {
        ("bob", "attends", '"x"'), ("bob", "participates", '"x"')}


def test_a_sub_property_of_rdf_type_types_through_the_class_hierarchy():
    s = schema("hasType subPropertyOf type", "A subClassOf B")
    assert entailed(triple("x hasType A"), s) == triples(
        "x hasType A", "x type A", "x type B")


def test_derived_triples_are_expanded_again_when_their_predicate_has_rules():
    # rdf:type with a range: every class a derived type names is a Class (a fixpoint)
    s = schema("type range Class", "A subClassOf B")
    assert entailed(triple("x type A"), s) == triples(
        "x type A", "x type B", "A type Class", "B type Class", "Class type Class")


def test_closure_is_the_union_of_expansions():
    graph = triples("alice attends c1", "bob type Student", "c1 type Course")
    assert closure(graph, UNIVERSITY) == triples(
        "alice attends c1", "alice participates c1", "alice type Student",
        "alice type Person", "alice type Agent", "c1 type Course",
        "bob type Student", "bob type Person", "bob type Agent")


def test_a_graph_is_closed_under_its_own_schema_and_never_gets_the_background_schema():
    graph = triples("x p y", "p domain C", "C subClassOf Person")
    assert graph_closure(graph, UNIVERSITY) == graph | triples(
        "x type C", "x type Person", "x type Agent", "C subClassOf Agent")
    assert graph_closure(set(), UNIVERSITY) == set()
    assert V.schema_predicates == {"subClassOf", "subPropertyOf", "domain", "range"}
