"""EP-SPARQL's occurrence patterns equal up to variable names (``epsparql.AlikePatterns``):
matched once per element for every operand, each match put in each pattern's own slots.
Hand-worked groupings and answers, each also checked against the reference evaluator."""

from __future__ import annotations

import pyoxigraph as ox

from sepia.engine.cep.epsparql import Layout, alike_patterns
from sepia.engine.plan.planner import plan
from sepia.lang import parse_query
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.stream import StreamElement

from .test_epsparql_ranges import EX, S1, answers, lit, query


def groups(text: str) -> tuple[list[list[tuple[str, ...]]], list[tuple[int, int]]]:
    """The names bound by each alike group's members, and the patterns left to their plans."""
    physical = plan(parse_query(text), Dictionary())
    names = physical.slots.names
    hidden = frozenset(i for i, n in enumerate(names) if not physical.slots.visible(n))
    found, planned = alike_patterns(
        physical.kind.occurrences, Layout(len(names), hidden)  # type: ignore[union-attr]
    )
    return [
        [tuple(names[slot] for slot, _ in binds) for _, _, binds in group.members]
        for group in found
    ], planned


def test_patterns_alike_up_to_names_share_one_group():
    """The three price patterns are one shape; a repeated variable, a constant object and
    another predicate are each their own; a blank node (a hidden slot) goes by its plan."""
    text = query(
        "{ ?c :p ?a } SEQ { ?d :p ?b } SEQ { ?c :p ?e } SEQ { ?f :p ?f } SEQ { ?g :p :k }"
        " SEQ { ?c :q ?h } SEQ { _:z :p ?i }"
    )
    shared, planned = groups(text)
    assert [sorted(g) for g in shared] == [
        [("c", "a"), ("c", "e"), ("d", "b")], [("f",)], [("g",)], [("c", "h")],
    ]
    assert planned == [(6, 0)]


def element(t: int, *triples: tuple[str, str, ox.NamedNode | ox.Literal]) -> StreamElement:
    return StreamElement(S1, f"{EX}g{t}", t, t, tuple(
        ox.Triple(ox.NamedNode(EX + s), ox.NamedNode(EX + p), o) for s, p, o in triples
    ))


def test_one_match_serves_every_operand_in_its_own_slots():
    """a's 1 then b's 2 then a's 3 (the first element repeating its triple): ?x's price
    pairs with each later price of the same subject; ?s :p ?s only matches b :p b."""
    b = ox.NamedNode(EX + "b")
    data = {S1: [
        element(0, ("a", "p", lit("1")), ("a", "p", lit("1"))),
        element(1, ("b", "p", lit("2")), ("b", "p", b)),
        element(2, ("a", "p", lit("3"))),
        element(3, ("b", "p", lit("4"))),
    ]}
    assert answers(query("{ ?x :p ?y } SEQ { ?x :p ?z }"), data) == [
        (2, (0, 2), (("x", "a"), ("y", "1"), ("z", "3"))),
        (3, (1, 3), (("x", "b"), ("y", "2"), ("z", "4"))),
        (3, (1, 3), (("x", "b"), ("y", "b"), ("z", "4"))),
    ]
    assert answers(query("{ ?s :p ?s } SEQ { ?s :p ?z }"), data) == [
        (3, (1, 3), (("s", "b"), ("z", "4"))),
    ]
