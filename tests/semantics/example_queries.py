"""The worked examples' queries as algebra trees, built by hand from the papers.

They let the reference evaluator be tested on the examples independently of the parser:
each tree is what ``examples/*/query.rq`` means, written the way seed papers state it.
"""

from __future__ import annotations

import pyoxigraph as ox

from sepia.algebra import dataset as ds
from sepia.algebra import event as ev
from sepia.algebra import expression as ex
from sepia.algebra import path as pa
from sepia.algebra import pattern as gp
from sepia.algebra import query as qa
from sepia.algebra import report as rp

EX = "http://example.org/"
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")


def iri(name: str) -> ox.NamedNode:
    return ox.NamedNode(EX + name)


def var(name: str) -> ox.Variable:
    return ox.Variable(name)


def tp(s, p, o) -> gp.TriplePattern:
    def term(x):
        return (
            var(x[1:])
            if isinstance(x, str) and x.startswith("?")
            else iri(x)
            if isinstance(x, str)
            else x
        )

    return gp.TriplePattern(term(s), term(p), term(o))


def bgp(*triples) -> gp.Bgp:
    return gp.Bgp(tuple(tp(*t) for t in triples))


def project(inner: gp.GraphPattern, *names: str) -> gp.Project:
    return gp.Project(inner, tuple(var(n) for n in names))


def e1_shops_coupons() -> qa.Query:
    """RSP-QL Example 10: RStream, WC and NC of w2."""
    w1, w2 = iri("w1"), iri("w2")
    where = gp.Join(
        gp.Join(
            gp.Window(w1, bgp(("?shopper", "isNearby", "?shop"))),
            gp.Window(w2, bgp(("?shop_owner", "offers", "?coupon"))),
        ),
        bgp(("?shop_owner", "owns", "?shop")),
    )
    dataset = ds.Dataset(
        windows=(
            ds.WindowDecl(w1, iri("nearby"), ds.Sliding(5, 2, 1)),
            ds.WindowDecl(w2, iri("coupons"), ds.Sliding(2, 2, 0)),
        )
    )
    report = rp.Report((rp.WindowClose(w2), rp.NonEmpty(w2)))
    pattern = project(where, "shopper", "shop", "shop_owner", "coupon")
    return qa.Query(qa.Select(), qa.RStream(pattern), dataset, report, qa.Dialect.RSPQL)


def e2_subway_delays() -> qa.Query:
    """CQELS-CEP Example 6: NO_TAIL(SEQ(P1, P1), P2) in window W, joined with the map."""
    w = iri("W")
    p1 = ev.Event(bgp(("?v", "delayAt", "?s")), window=w)
    p2 = ev.Event(bgp(("?v", "arriveAt", "?s")), window=w)
    subway_path = pa.OneOrMore(
        pa.Sequence(
            pa.Sequence(
                pa.Inverse(pa.Link(iri("beg"))), pa.NestedTest(pa.Link(iri("means")), iri("subway"))
            ),
            pa.Link(iri("end")),
        )
    )
    where = gp.Join(
        gp.Join(gp.Match(ev.NoTail(ev.Seq(p1, p1), p2)), bgp(("?v", RDF_TYPE, "subway"))),
        gp.PathPattern(var("s"), subway_path, iri("c")),
    )
    dataset = ds.Dataset(
        default_graphs=(iri("transportationMap"),),
        windows=(ds.WindowDecl(w, iri("publicTransport"), ds.Sliding(10, 1, 0)),),
    )
    return qa.Query(
        qa.Select(), project(where, "s"), dataset, rp.PushMatches(), qa.Dialect.CQELS_CEP
    )


def e3_rsepql_landmark() -> qa.Query:
    """RSEP-QL Example 4: EVENT w1 {?x :p ?y} SEQ EVENT w2 {?y :q ?z}."""
    w1, w2 = iri("w1"), iri("w2")
    pattern = ev.Seq(
        ev.Event(bgp(("?x", "p", "?y")), window=w1), ev.Event(bgp(("?y", "q", "?z")), window=w2)
    )
    dataset = ds.Dataset(
        windows=(
            ds.WindowDecl(w1, iri("s"), ds.Landmark(1)),
            ds.WindowDecl(w2, iri("s"), ds.Sliding(5, 1, 0)),
        )
    )
    where = project(gp.Match(pattern), "x", "y", "z")
    return qa.Query(qa.Select(), where, dataset, rp.PushMatches(), qa.Dialect.RSEPQL)


def e4_spaseq(policy: ev.SelectionPolicy) -> qa.Query:
    """SEQ(A op B) with A on S1 (power), B on S2 (weather), WITHIN 50."""
    a = ev.Event(bgp(("?h", "pow", "?p"), ("?h", "loc", "?l")), stream=iri("power"), label="A")
    b = ev.Event(bgp(("?w", "value", "?v"), ("?w", "loc", "?l")), stream=iri("weather"), label="B")
    dataset = ds.Dataset(
        streams=(ds.StreamDecl(iri("power"), "S1"), ds.StreamDecl(iri("weather"), "S2"))
    )
    where = project(gp.Match(ev.Seq(a, b, policy)), "h", "p", "l", "w", "v")
    return qa.Query(
        qa.Select(), where, dataset, rp.PushMatches(), qa.Dialect.SPASEQ, within=qa.Within(50)
    )


def e5_epsparql() -> qa.Query:
    """{?c :price ?p1} SEQ {?c :price ?p2} SEQ {?c :price ?p3} FILTER(...)."""

    def price(v: str) -> ev.OccurrencePattern:
        return ev.OccurrencePattern(bgp(("?c", "price", f"?{v}")))

    def number(text: str, datatype: str) -> ox.Literal:
        return ox.Literal(
            text, datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#" + datatype)
        )

    op = ex.BinaryOperator
    condition = ex.Binary(
        op.AND,
        ex.Binary(
            op.AND,
            ex.Binary(
                op.LESS, var("p2"), ex.Binary(op.MULTIPLY, var("p1"), number("0.7", "decimal"))
            ),
            ex.Binary(
                op.GREATER, var("p3"), ex.Binary(op.MULTIPLY, var("p1"), number("1.05", "decimal"))
            ),
        ),
        ex.Binary(op.LESS, ex.Call("GETDURATION", ()), number("30", "integer")),
    )
    sequence = ev.SeqJoin(ev.SeqJoin(price("p1"), price("p2")), price("p3"))
    where = project(gp.Match(ev.EventFilter(condition, sequence)), "c", "p1", "p2", "p3")
    return qa.Query(qa.Select(), where, ds.Dataset(), rp.PushMatches(), qa.Dialect.EPSPARQL)
