"""PARTITION BY (language.md 4b): strict contiguity and the like within each partition.

Timeline: acme 10 @1 | beta 50 @2 | acme 12 @3 | beta 55 @4 | news @5 (binds no ?c).
SEQ(A , B) with B's FILTER(?p2 > ?p1): over the whole streamset every event's successor is
the other company's, so nothing matches; per company, acme 10 -> 12 [1, 3] and beta
50 -> 55 [2, 4] are strictly contiguous.
"""

from __future__ import annotations

import dataclasses

import pyoxigraph as ox

from sepia.algebra import dataset as ds
from sepia.algebra import event as ev
from sepia.algebra import expression as ex
from sepia.algebra import pattern as gp
from sepia.algebra import query as qa
from sepia.algebra import report as rp
from sepia.rdf.stream import StreamElement
from sepia.semantics import evaluate
from sepia.semantics.evaluator import partitions

from .support import bgp, iri, project

S = iri("s")
INTEGER = ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")


def price(time: int, company: str, value: int) -> StreamElement:
    triple = ox.Triple(iri(company), iri("price"), ox.Literal(str(value), datatype=INTEGER))
    return StreamElement(S.value, f"g{time}", time, time, (triple,))


STREAM = {
    S.value: [
        price(1, "acme", 10),
        price(2, "beta", 50),
        price(3, "acme", 12),
        price(4, "beta", 55),
        StreamElement(S.value, "g5", 5, 5, (ox.Triple(iri("x"), iri("news"), iri("y")),)),
    ]
}


def query(partitioned: bool) -> qa.Query:
    a = ev.Event(bgp(("?c", "price", "?p1")), stream=S, label="A")
    rise = ex.Binary(ex.BinaryOperator.GREATER, ox.Variable("p2"), ox.Variable("p1"))
    b = ev.Event(gp.Filter(rise, bgp(("?c", "price", "?p2"))), stream=S, label="B")
    q = qa.Query(
        qa.Select(),
        project(gp.Match(ev.Seq(a, b, ev.SelectionPolicy.STRICT_CONTIGUITY)), "c", "p2"),
        ds.Dataset(streams=(ds.StreamDecl(S, "S1"),)),
        rp.PushMatches(),
        qa.Dialect.SPASEQ,
    )
    return dataclasses.replace(q, partition_by=ox.Variable("c") if partitioned else None)


def test_partitions_hold_the_events_binding_each_value():
    parts = partitions(query(True), STREAM, None)
    assert {k.value[19:]: [e.time for e in v[S.value]] for k, v in parts.items()} == {
        "acme": [1, 3],
        "beta": [2, 4],
    }


def test_strict_contiguity_within_each_partition():
    assert evaluate(query(False), STREAM) == []
    found = [(r.t, r.interval, r.values["c"].value[19:]) for r in evaluate(query(True), STREAM)]
    assert found == [(3, (1, 3), "acme"), (4, (2, 4), "beta")]


def test_a_partition_ends_with_the_whole_input():
    """SEQ(A, !B) over one company's prices: acme's last event is at 3, the input's at 5,
    so acme's waiting run (from its price at 3) completes when the whole input ends, at 5,
    not at 3; beta's (from 4) completes at 5 too."""
    a = ev.Event(bgp(("?c", "price", "?p1")), stream=S, label="A")
    b = ev.Event(bgp(("?c", "price", "?p2")), stream=S, label="B")
    q = qa.Query(
        qa.Select(),
        project(gp.Match(ev.Seq(a, ev.Negation(b), ev.SelectionPolicy.SKIP_TILL_NEXT)), "c"),
        ds.Dataset(streams=(ds.StreamDecl(S, "S1"),)),
        rp.PushMatches(),
        qa.Dialect.SPASEQ,
        partition_by=ox.Variable("c"),
    )
    got = {(r.t, r.interval, r.binding[0][1]) for r in evaluate(q, STREAM)}
    assert got == {(5, (3, 3), iri("acme")), (5, (4, 4), iri("beta"))}
