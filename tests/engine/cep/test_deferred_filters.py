"""A SPAseq GPM's FILTER that reads a variable an earlier GPM binds is checked on the run's
mapping, and it is still part of that GPM, over its event's graph (Definition 7 of
"A Query Language for Semantic Complex Event Processing: Syntax, Semantics and
Implementation", Gillani, Zimmermann, Picard, Laforest): under a negation too, where
Algorithm 9 (Appendix C.4.2) deletes a run only for an event that matches the negated GPM's
pattern P_theta, theta being the run's mapping. Derived by hand, checked on the reference
and the engine."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from sepia.algebra.query import Unsupported
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.runtime.local import run
from sepia.semantics import evaluate

from ..generators import EX, S1

A, B, C, P, Q, R, S = (ox.NamedNode(f"{EX}{n}") for n in ("a", "b", "c", "p", "q", "r", "s"))


def inputs(stamped: list, background: str = "") -> tuple[dict, ox.Store]:
    data = {S1: [StreamElement(S1, f"_:g{i}", t, t, tuple(x)) for i, (t, x) in enumerate(stamped)]}
    store = ox.Store()
    store.load(f"@prefix : <{EX}> .\n{background}".encode(), format=ox.RdfFormat.TURTLE)
    return data, store


def rows(results) -> list:
    """Each result's interval and binding, sorted."""
    return sorted((r.interval, sorted(r.values.items())) for r in results)


def answers(text: str, stamped: list) -> tuple[list, list]:
    """The rows of the reference and of the engine."""
    (data, store), query = inputs(stamped), parse_query(text)
    return rows(evaluate(query, data, store, name="q")), rows(run([("q", query)], data, store))


def test_a_negated_gpm_blocks_only_where_its_filter_on_the_run_holds():
    """SEQ(A ; !B ; C): A {:a :p :b} at 0 binds ?x = :a, ?v = :b. B's FILTER(?w != ?v) reads
    A's ?v: the event {:a :q :b} at 1 matches B's triple pattern with ?w = :b, but under the
    run's mapping ?w != ?v is false, so it is not a B (P_theta does not match it) and
    does not block; C {:a :r :c} at 2 completes the match [0, 2]: x = :a, v = :b, z = :c.
    (Had the event at 1 been {:a :q :c}, the FILTER would hold and no match would come.)"""
    text = (
        f"PREFIX : <{EX}>\nSELECT ?x ?v ?z\nFROM STREAM S1 :s1\nWHERE {{ SEQ(A ; !B ; C)\n"
        "DEFINE GPM A ON S1 { ?x :p ?v }\n"
        "DEFINE GPM B ON S1 { ?x :q ?w FILTER(?w != ?v) }\n"
        "DEFINE GPM C ON S1 { ?x :r ?z } }"
    )
    stamped = [(0, [ox.Triple(A, P, B)]), (1, [ox.Triple(A, Q, B)]), (2, [ox.Triple(A, R, C)])]
    expected = [((0, 2), [("v", B), ("x", A), ("z", C)])]
    reference, engine = answers(text, stamped)
    assert reference == expected
    assert engine == expected
    blocked = [*stamped[:1], (1, [ox.Triple(A, Q, C)]), *stamped[2:]]
    assert answers(text, blocked) == ([], [])


def test_a_deferred_filter_exists_reads_the_event_graph():
    """SEQ(A ; B): A {:a :p :c} at 0 binds ?v = :c. B's FILTER EXISTS { ?w :s ?v } reads
    A's ?v, so it waits for the run's mapping, but it is B's: it reads B's event. The event
    at 1 {:a :q :b} holds no :s triple (the background's :b :s :c is not B's event), so it
    is not a B; the event at 2 {:a :q :b . :b :s :c} is: one match [0, 2], x = :a, v = :c,
    w = :b (skip-till-next would have stopped at 1 had the event at 1 been a B). The
    engine's automaton checks deferred FILTERs on mappings, without the event's graph: it
    refuses the query (the reference runs it) rather than answer without the event."""
    text = (
        f"PREFIX : <{EX}>\nSELECT ?x ?v ?w\nFROM STREAM S1 :s1\nWHERE {{ SEQ(A ; B)\n"
        "DEFINE GPM A ON S1 { ?x :p ?v }\n"
        "DEFINE GPM B ON S1 { ?x :q ?w FILTER EXISTS { ?w :s ?v } } }"
    )
    stamped = [(0, [ox.Triple(A, P, C)]), (1, [ox.Triple(A, Q, B)]),
               (2, [ox.Triple(A, Q, B), ox.Triple(B, S, C)])]  # fmt: skip
    data, store = inputs(stamped, ":b :s :c .")
    query = parse_query(text)
    expected = [((0, 2), [("v", C), ("w", B), ("x", A)])]
    assert rows(evaluate(query, data, store, name="q")) == expected
    with pytest.raises(Unsupported, match="FILTER EXISTS reading a variable another GPM"):
        list(run([("q", query)], data, store))
