"""RDFS entailment per semantics.md: each graph closed on its own, under the background's
schema and its own (rules rdfs2, rdfs3, rdfs5, rdfs7, rdfs9, rdfs11)."""

from __future__ import annotations

import pyoxigraph as ox

from sepia.algebra import dataset as ds
from sepia.algebra import pattern as gp
from sepia.algebra import query as qa
from sepia.algebra import report as rp
from sepia.reasoning.entailment import (
    DOMAIN,
    RANGE,
    RDF_TYPE,
    SUB_CLASS,
    SUB_PROPERTY,
    rdfs_closure,
)
from sepia.semantics import evaluate

from .support import bgp, element, iri, project


def t(s, p, o):
    return ox.Triple(
        iri(s) if isinstance(s, str) else s,
        p if isinstance(p, ox.NamedNode) else iri(p),
        o if not isinstance(o, str) else iri(o),
    )


SCHEMA = {
    t("Student", SUB_CLASS, "Person"),
    t("Person", SUB_CLASS, "Agent"),
    t("attends", SUB_PROPERTY, "participates"),
    t("attends", DOMAIN, "Student"),
    t("attends", RANGE, "Course"),
}


def test_closure_of_one_graph():
    graph = {t("alice", "attends", "c1"), t("bob", "attends", ox.Literal("x"))}
    assert rdfs_closure(graph, SCHEMA) == graph | {
        t("alice", "participates", "c1"),
        t("bob", "participates", ox.Literal("x")),
        t("alice", RDF_TYPE, "Student"),
        t("alice", RDF_TYPE, "Person"),
        t("alice", RDF_TYPE, "Agent"),
        t("bob", RDF_TYPE, "Student"),
        t("bob", RDF_TYPE, "Person"),
        t("bob", RDF_TYPE, "Agent"),
        t("c1", RDF_TYPE, "Course"),  # a literal object gets no range type
    }


def test_own_schema_triples_are_closed_but_background_ones_not_copied():
    own = {t("Teacher", SUB_CLASS, "Person")}
    assert rdfs_closure(own, SCHEMA) == own | {t("Teacher", SUB_CLASS, "Agent")}
    assert rdfs_closure(set(), SCHEMA) == set()


def test_windows_read_their_own_closure():
    # w = RANGE 2: alice attends c1 @1 is in (t-2, t] at 1 and 2, gone at 3 (bob @3)
    background = ox.Store()
    background.extend(ox.Quad(x.subject, x.predicate, x.object) for x in SCHEMA)
    background.add(ox.Quad(iri("carol"), RDF_TYPE, iri("Student")))
    stream = {
        iri("s").value: [element(1, ("alice", "attends", "c1")), element(3, ("bob", "likes", "c1"))]
    }
    w = iri("w")
    query = qa.Query(
        qa.Select(),
        qa.RStream(project(gp.Window(w, bgp(("?x", RDF_TYPE, "Person"))), "x")),
        ds.Dataset(windows=(ds.WindowDecl(w, iri("s"), ds.Sliding(2, 1)),)),
        rp.Report((rp.ContentChange(),)),
        qa.Dialect.CQELS,
    )
    found = [(r.t, r.values["x"]) for r in evaluate(query, stream, background, rdfs=True)]
    # carol's type is background data: never inside the window; at 3 alice's type is gone
    assert found == [(1, iri("alice"))]
    assert evaluate(query, stream, background) == []


def test_the_closure_is_a_fixpoint_when_rdf_type_has_rules_of_its_own() -> None:
    # x a A and A subClassOf B give x a B (rdfs9); rdf:type's range C then types A and B
    # (rdfs3), and those new type triples have C as object, so C a C too.
    schema = [t(RDF_TYPE, RANGE, "C"), t("A", SUB_CLASS, "B")]
    closed = rdfs_closure([t("x", RDF_TYPE, "A")], schema)
    assert {t("x", RDF_TYPE, "B"), t("B", RDF_TYPE, "C"), t("C", RDF_TYPE, "C")} <= closed
