"""Continuous evaluation through ``sepia.semantics.evaluate`` on small hand-built queries.

Each test gives its stream as a timeline and the answer derived by hand from the papers.
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
from sepia.rdf.results import result_to_json
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import XSD, TimeKind
from sepia.semantics import evaluate

from . import example_queries
from .support import bgp, element, iri, project

S, W = iri("s"), iri("w")


def lines(results):
    """(t, op, from, to, match, {var: local name}) per result, in output order."""
    return [
        (
            r.t,
            r.op,
            *(r.interval or (None, None)),
            r.match,
            {k: v.value[19:] for k, v in r.values.items()},
        )
        for r in results
    ]


def window_query(expression, spec, report, form=None, into_default=False):
    dataset = ds.Dataset(windows=(ds.WindowDecl(W, S, spec, into_default),))
    form = form or qa.Select()
    return qa.Query(form, expression, dataset, rp.Report(report), qa.Dialect.RSPQL)


# timeline: 1 a-p-b | 2 a-p-e | 4 c-p-d (projected on ?x, 1 and 2 both give a)
STREAM = {
    S.value: [
        element(1, ("a", "p", "b")),
        element(2, ("a", "p", "e")),
        element(4, ("c", "p", "d")),
    ]
}
PAIRS = project(gp.Window(W, bgp(("?x", "p", "?y"))), "x")


def test_istream_and_dstream_are_bag_differences():
    # RANGE 2 with content change: (t-2, t] at 1: {a}, at 2: {a, a}, at 4: {c} (2 left)
    istream = window_query(qa.IStream(PAIRS), ds.Sliding(2, 1), (rp.ContentChange(),))
    assert [(t, op, b["x"]) for t, op, *_, b in lines(evaluate(istream, STREAM))] == [
        (1, "+", "a"),
        (2, "+", "a"),  # present twice now, once before: inserted once
        (4, "+", "c"),
    ]
    dstream = window_query(qa.DStream(PAIRS), ds.Sliding(2, 1), (rp.ContentChange(),))
    assert [(t, op, b["x"]) for t, op, *_, b in lines(evaluate(dstream, STREAM))] == [
        (4, "-", "a"),
        (4, "-", "a"),
    ]


def test_window_close_flush_and_rstream():
    # TUMBLING 2: windows (0,2], (2,4]; closes at 2 and 4 (the flush stops at 4)
    query = window_query(qa.RStream(PAIRS), ds.Sliding(2, 2), (rp.WindowClose(),))
    assert [(t, b["x"]) for t, *_, b in lines(evaluate(query, STREAM))] == [
        (2, "a"),
        (2, "a"),
        (4, "c"),
    ]


def test_construct_ask_and_merged_default_graph():
    # C-SPARQL FROM STREAM: the window is merged into the default graph (no WINDOW block)
    template = (gp.TriplePattern(ox.Variable("y"), iri("q"), ox.Variable("x")),)
    body = project(bgp(("?x", "p", "?y")), "x", "y")
    construct = window_query(
        body, ds.Sliding(2, 2), (rp.WindowClose(),), qa.Construct(template), True
    )
    results = evaluate(construct, STREAM)
    q = iri("q")
    assert [(r.t, set(r.triples)) for r in results] == [
        (2, {ox.Triple(iri("b"), q, iri("a")), ox.Triple(iri("e"), q, iri("a"))}),
        (4, {ox.Triple(iri("d"), q, iri("c"))}),
    ]
    ask = window_query(bgp(("?x", "p", "b")), ds.Now(), (rp.WindowClose(),), qa.Ask(), True)
    assert [(r.t, r.boolean) for r in evaluate(ask, STREAM)] == [(1, True), (2, False), (4, False)]


def test_no_tail_is_retracted_later():
    # CQELS-CEP SEQ(P1, P1, !P2) under DStream: two delays at 1 and 3, an arrival at 5
    delay = ev.Event(bgp(("?v", "delayAt", "?s")), window=W)
    arrive = ev.Event(bgp(("?v", "arriveAt", "?s")), window=W)
    match = project(gp.Match(ev.NoTail(ev.Seq(delay, delay), arrive)), "v")
    stream = {
        S.value: [
            element(1, ("a1", "delayAt", "m")),
            element(3, ("a1", "delayAt", "m")),
            element(5, ("a1", "arriveAt", "m")),
        ]
    }
    inserted = window_query(qa.IStream(match), ds.Sliding(10, 1), (rp.ContentChange(),))
    deleted = window_query(qa.DStream(match), ds.Sliding(10, 1), (rp.ContentChange(),))
    assert lines(evaluate(inserted, stream)) == [(3, "+", 1, 3, None, {"v": "a1"})]
    assert lines(evaluate(deleted, stream)) == [(5, "-", 1, 3, None, {"v": "a1"})]


def test_event_policy_consumes_across_evaluations(monkeypatch):
    # E3 under CHRONOLOGICAL (RSEP-QL Example 11): G1, G2, G3 consumed, nothing at 10
    query = example_queries.e3_rsepql_landmark()
    chronological = qa.Query(
        query.form,
        query.expression,
        query.dataset,
        query.report,
        query.dialect,
        event_policy=ev.SelectionPolicy.CHRONOLOGICAL,
    )
    recent = qa.Query(
        query.form,
        query.expression,
        query.dataset,
        query.report,
        query.dialect,
        event_policy=ev.SelectionPolicy.RECENT,
    )
    stream = {S.value: _e3_stream()}
    assert [(t, a, b) for t, _, a, b, *_ in lines(evaluate(chronological, stream))] == [
        (6, 2, 6),
        (8, 4, 8),
    ]
    assert [(t, a, b) for t, _, a, b, *_ in lines(evaluate(recent, stream))] == [
        (6, 2, 6),
        (8, 6, 8),
    ]


def _e3_stream():
    return [
        element(2, ("a1", "p", "b1")),
        element(4, ("a2", "p", "b2")),
        element(6, ("b1", "q", "c1"), ("a2", "p", "b2")),
        element(8, ("b2", "q", "c2"), ("a3", "p", "b3")),
        element(10, ("b1", "q", "c1")),
    ]


def test_spaseq_kleene_rows_share_a_match_id():
    # SEQ(A ; B+) over one stream: A@10 (L1), B@20 W1 (L1), B@25 W2 (L1), B@30 W3 (L2)
    a = ev.Event(bgp(("?h", "loc", "?l")), stream=S)
    b = ev.Event(bgp(("?w", "at", "?l")), stream=S)
    kleene = ev.Seq(a, ev.Kleene(b), ev.SelectionPolicy.SKIP_TILL_NEXT)
    query = qa.Query(
        qa.Select(),
        project(gp.Match(kleene), "h", "w"),
        ds.Dataset(streams=(ds.StreamDecl(S, "S1"),)),
        rp.PushMatches(),
        qa.Dialect.SPASEQ,
    )
    stream = {
        S.value: [
            element(10, ("H1", "loc", "L1")),
            element(20, ("W1", "at", "L1")),
            element(25, ("W2", "at", "L1")),
            element(30, ("W3", "at", "L2")),
        ]
    }
    assert lines(evaluate(query, stream)) == [
        (20, "+", 10, 20, "m1", {"h": "H1", "w": "W1"}),
        (25, "+", 10, 25, "m2", {"h": "H1", "w": "W1"}),
        (25, "+", 10, 25, "m2", {"h": "H1", "w": "W2"}),
    ]


def test_plain_sparql_is_evaluated_once():
    background = ox.Store()
    background.add(ox.Quad(iri("a"), iri("p"), iri("b")))
    query = qa.Query(
        qa.Select(),
        project(bgp(("?x", "p", "?y")), "x"),
        ds.Dataset(),
        rp.Once(),
        qa.Dialect.SPARQL,
    )
    assert lines(evaluate(query, {}, background)) == [(0, "+", None, None, None, {"x": "a"})]


def test_durations_on_wall_clock_time():
    # EP-SPARQL: {?c :price ?a} SEQ {?c :price ?b} FILTER(getDURATION() < "PT5S"), times in
    # epoch ms: x at 1 s and 3 s (2 s apart: kept), y at 1 s and 9 s (8 s: dropped)
    def at(ms, company, price):
        e = element(ms, (company, "price", price))
        return StreamElement(e.stream, e.graph, ms, ms, e.triples, TimeKind.DATETIME)

    stream = {
        S.value: [
            at(1000, "x", "p1"),
            at(1000, "y", "q1"),
            at(3000, "x", "p2"),
            at(9000, "y", "q2"),
        ]
    }
    price = lambda v: ev.OccurrencePattern(bgp(("?c", "price", f"?{v}")))  # noqa: E731
    five_seconds = ox.Literal("PT5S", datatype=ox.NamedNode(XSD + "dayTimeDuration"))
    condition = ex.Binary(ex.BinaryOperator.LESS, ex.Call("GETDURATION", ()), five_seconds)
    match = gp.Match(ev.EventFilter(condition, ev.SeqJoin(price("a"), price("b"))))
    query = qa.Query(
        qa.Select(), project(match, "c"), ds.Dataset(), rp.PushMatches(), qa.Dialect.EPSPARQL
    )
    results = evaluate(query, stream)
    assert [(r.t, r.interval, r.values["c"]) for r in results] == [(3000, (1000, 3000), iri("x"))]
    assert result_to_json(results[0], TimeKind.DATETIME)["t"] == "1970-01-01T00:00:03.000Z"


def test_csparql_timestamp_is_the_latest_window_element_holding_the_triple():
    # TUMBLING 10, evaluated at its close 10: a-p-b arrived at 2 and again at 5, c-p-d at 7
    stream = {
        S.value: [
            element(2, ("a", "p", "b")),
            element(5, ("a", "p", "b")),
            element(7, ("c", "p", "d")),
        ]
    }
    x, y, ts = ox.Variable("x"), ox.Variable("y"), ox.Variable("ts")
    stamped = gp.Extend(bgp(("?x", "p", "?y")), ts, ex.Call("TIMESTAMP", (x, iri("p"), y)))
    query = window_query(
        gp.Project(stamped, (x, ts)), ds.Sliding(10, 10), (rp.WindowClose(),), into_default=True
    )
    found = {
        (r.t, r.values["x"].value[19:], int(r.values["ts"].value)) for r in evaluate(query, stream)
    }
    assert found == {(10, "a", 5), (10, "c", 7)}


def test_nested_path_inside_a_window_reads_the_window():
    # window at 2 holds a-next-b, b-ok-t, b-next-c; the background's c-ok-t is not in it
    stream = {
        S.value: [element(1, ("a", "next", "b"), ("b", "ok", "t")), element(2, ("b", "next", "c"))]
    }
    background = ox.Store()
    background.add(ox.Quad(iri("c"), iri("ok"), iri("t")))
    path = pa.OneOrMore(pa.Sequence(pa.Link(iri("next")), pa.NestedTest(pa.Link(iri("ok")))))
    inside = gp.Window(W, gp.PathPattern(ox.Variable("x"), path, ox.Variable("y")))
    query = window_query(project(inside, "x", "y"), ds.Sliding(10, 10), (rp.WindowClose(),))
    found = {
        (r.values["x"].value[19:], r.values["y"].value[19:])
        for r in evaluate(query, stream, background)
    }
    assert found == {("a", "b")}


def test_first_and_last_inside_seq_see_the_restricted_left_side():
    # RSEP-QL Eq. 7: for each (mu2, t3, t4) the left side is mu2(E1) under W[0, t3 - 1].
    # FIRST over the whole window would be x1 @1 only, which cannot precede y2-q-z; within
    # the scope of y2-q-z @3 the first event is x2 @2. LAST over the whole window would be
    # x3 @4, after both right events; within their scopes it is x1 @1 and x2 @2.
    stream = {
        S.value: [
            element(1, ("x1", "p", "y1")),
            element(2, ("x2", "p", "y2")),
            element(3, ("y2", "q", "z"), ("y1", "q", "w")),
            element(4, ("x3", "p", "y1")),
        ]
    }
    e1 = ev.Event(bgp(("?x", "p", "?y")), window=W)
    e2 = ev.Event(bgp(("?y", "q", "?z")), window=W)
    dataset = ds.Dataset(windows=(ds.WindowDecl(W, S, ds.Sliding(10, 1)),))

    def matches(pattern):
        query = qa.Query(
            qa.Select(),
            project(gp.Match(pattern), "x", "z"),
            dataset,
            rp.PushMatches(),
            qa.Dialect.RSEPQL,
        )
        return [(t, a, b, v["x"], v["z"]) for t, _, a, b, _, v in lines(evaluate(query, stream))]

    both = [(3, 1, 3, "x1", "w"), (3, 2, 3, "x2", "z")]
    assert matches(ev.Seq(ev.First(e1), e2)) == both
    assert matches(ev.Seq(ev.Last(e1), e2)) == both
