"""PARTITION BY in the engine (language.md 4b): each value of the variable is matched on
its own events, and the engine's answer is the reference evaluator's (match names up to
renaming: the reference numbers partitions by value, the engine as they appear)."""

from __future__ import annotations

import json
import re
from collections import Counter

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.engine.query.partition import PartitionedQuery, bucket_of, result_order
from sepia.lang import parse_query
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement, StreamSet
from sepia.runtime.local import Session, run

from ..cep.test_differential_cep import cqels_queries, epsparql_queries, interval_streams
from ..generators import S1, S2, SILENT, answering, event_queries, sequence_queries, streams
from ..support import assert_agrees, background, engine_path

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large]
EX = "http://example.org/"

# Timeline (the reference's own partition test, tests/semantics/test_partition.py):
#   t=1 acme 10 | t=2 beta 50 | t=3 acme 12 | t=4 beta 55 | t=5 x news y
# SEQ(A, B) with strict contiguity: over the whole streamset no two prices of one company
# are adjacent, so nothing matches; per company, acme 10 -> 12 and beta 50 -> 55 do.
STOCKS = """PREFIX : <http://example.org/>
SELECT ?c ?p2
FROM STREAM S1 :s
{partition}
WHERE {{ SEQ(A, B)
  DEFINE GPM A ON S1 {{ ?c :price ?p1 }}
  DEFINE GPM B ON S1 {{ ?c :price ?p2 FILTER(?p2 > ?p1) }} }}"""
PRICES = [("acme", 10), ("beta", 50), ("acme", 12), ("beta", 55)]


def stock_session() -> Session:
    session = Session()
    session.register(STOCKS.format(partition="PARTITION BY ?c"), "q")
    return session


def push_prices(session: Session, prices: list[tuple[str, int]], first: int = 1) -> list:
    out = []
    for t, (company, price) in enumerate(prices, start=first):
        subject, price_of = ox.NamedNode(EX + company), ox.NamedNode(EX + "price")
        triple = ox.Triple(subject, price_of, ox.Literal(price))
        out += session.push_graph(EX + "s", t, [triple])
    return out


def test_strict_contiguity_holds_within_each_company():
    unpartitioned = Session()
    unpartitioned.register(STOCKS.format(partition=""), "q")
    assert push_prices(unpartitioned, PRICES) + unpartitioned.flush() == []
    session = stock_session()
    results = push_prices(session, PRICES) + session.flush()
    assert [(r.t, dict(r.binding)["c"].value, r.interval) for r in results] == [
        (3, EX + "acme", (1, 3)),
        (4, EX + "beta", (2, 4)),
    ]
    assert session.state_size()["partitions"] == 2


def test_a_partition_resumes_from_its_snapshot(tmp_path):
    whole = stock_session()
    expected = push_prices(whole, PRICES) + whole.flush()
    first = stock_session()
    head = push_prices(first, PRICES[:3])
    first.save(tmp_path / "state.json")
    assert json.loads((tmp_path / "state.json").read_text())  # a real file of rows
    second = stock_session()
    second.load(tmp_path / "state.json")
    tail = push_prices(second, PRICES[3:], first=4) + second.flush()
    assert head + tail == expected


def binds_everywhere(text: str) -> bool:
    """Whether every innermost block of the query (a GPM, an EVENT, a window, a sequence
    element) binds its PARTITION BY variable (an event binding none belongs to no
    partition: a sequence needing it cannot match)."""
    variable = re.search(r"PARTITION BY (\?\w+)", text)[1]
    blocks = re.findall(r"\{([^{}]*)\}", text)
    return all(re.search(rf"\{variable}\b", block) for block in blocks)


def mostly_shared(queries: st.SearchStrategy) -> st.SearchStrategy:
    """``queries``, three times in four one whose blocks all bind the partition variable."""
    return st.one_of(queries, *[queries.filter(binds_everywhere)] * 3)


@settings(max_examples=150, deadline=None, suppress_health_check=CHECKS)
@given(answering(mostly_shared(st.one_of(sequence_queries(partitioned=True),
                                         event_queries(partitioned=True))),
                 st.one_of(streams(), SILENT), aimed=True))
def test_partitioned_queries_agree_with_the_reference(case):
    """Streams planted from the query, aimed (``generators.planted``)."""
    assert_agrees(*case, renamed=True)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=CHECKS)
@given(st.one_of(sequence_queries(partitioned=True), event_queries(partitioned=True)), streams())
def test_partitioned_queries_agree_with_the_reference_long(text, data):
    assert_agrees(text, data, renamed=True)


@settings(max_examples=100, deadline=None, suppress_health_check=CHECKS)
@given(answering(epsparql_queries(partitioned=True), interval_streams()))
def test_partitioned_epsparql_agrees_with_the_reference(case):
    assert_agrees(*case, renamed=True)


@settings(max_examples=100, deadline=None, suppress_health_check=CHECKS)
@given(answering(mostly_shared(cqels_queries(partitioned=True)), st.one_of(streams(), SILENT),
                 aimed=True))
def test_partitioned_cqels_cep_agrees_with_the_reference(case):
    assert_agrees(*case, renamed=True)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=CHECKS)
@given(
    st.one_of(
        st.tuples(epsparql_queries(partitioned=True), interval_streams()),
        st.tuples(cqels_queries(partitioned=True), streams()),
    )
)
def test_partitioned_cep_operators_agree_with_the_reference_long(case):
    assert_agrees(*case, renamed=True)


def row_engine(text: str) -> PartitionedQuery:
    """The query on the row engine owning every value: the Spark job's router (the
    buckets themselves run on the columnar core where it covers the query)."""
    with engine_path("rows"):
        engine = Session(background()).register(text, "q", owns=lambda _: True)
    assert isinstance(engine, PartitionedQuery)
    return engine


def bucketed(text: str, data: dict[str, list[StreamElement]], buckets: int) -> list[Result]:
    """The query's results with its partition values spread over ``buckets`` sessions, as
    the Spark job spreads them: each is given the elements binding a value it owns and, for
    every other element, one without triples (its stream and time only); the results are
    merged by time, then the instant whose step made them (the end of input last), then
    ``result_order``."""
    elements = list(StreamSet(data).merged())
    router = row_engine(text)
    tagged: list[tuple[tuple, Result]] = []
    for bucket in range(buckets):
        session = Session(background())
        session.register(text, "q", owns=lambda v, b=bucket: bucket_of(v, buckets) == b)
        for e in elements:
            mine = bucket in {bucket_of(v, buckets) for v in router.values_of(e)}
            fed = e if mine else StreamElement(e.stream, e.graph, e.end, e.end, (), e.kind)
            instant = session.pending[0].time if session.pending else None
            tagged += [((r.t, instant, result_order(r)), r) for r in session.push(fed)]
        last = elements[-1].time
        tagged += [((r.t, last, result_order(r)), r) for r in session.watermark(last)]
        tagged += [((r.t, last + 1, result_order(r)), r) for r in session.flush()]
    return [r for _, r in sorted(tagged, key=lambda pair: pair[0])]


@settings(max_examples=150, deadline=None, suppress_health_check=CHECKS)
@given(
    st.one_of(
        sequence_queries(partitioned=True), event_queries(partitioned=True),
        epsparql_queries(partitioned=True), cqels_queries(partitioned=True),
    ),
    streams(),
    st.integers(2, 5),
)
def test_partitions_spread_over_buckets_give_the_same_lines(text, data, buckets):
    """Owning some values only, buckets together report what one engine does: the same
    results with the same match names, in the same order unless a ``, !B`` holds results
    back (the Spark job keeps such a query in one bucket)."""
    whole = list(run([("q", parse_query(text))], data, background()))
    spread = bucketed(text, data, buckets)
    if row_engine(text).holds:
        assert Counter(spread) == Counter(whole), text
    else:
        assert spread == whole, text


@pytest.mark.parametrize("within", ["", "WITHIN 3"])
def test_a_bucket_learns_of_the_instants_of_other_buckets(within):
    """acme and beta fall in different buckets of two. acme's A at 1 meets no B: its tail
    negation completes at the end of the whole input (5), or under WITHIN 3 at its horizon
    4, told by beta's price at 5. The acme bucket sees no element after 1: only the
    stand-ins of beta's elements tell it that time went on."""
    text = f"""PREFIX : <{EX}>
    SELECT ?c {within} FROM STREAM S1 :s PARTITION BY ?c
    WHERE {{ SEQ(A ; !B) DEFINE GPM A ON S1 {{ ?c :price ?p }}
             DEFINE GPM B ON S1 {{ ?c :halt ?h }} }}"""
    price = ox.NamedNode(EX + "price")
    events = [(1, "acme"), (2, "beta"), (5, "beta")]
    data = {EX + "s": [
        StreamElement(EX + "s", f"{EX}g{t}", t, t,
                      (ox.Triple(ox.NamedNode(EX + c), price, ox.Literal(t)),))
        for t, c in events
    ]}  # fmt: skip
    assert bucket_of(ox.NamedNode(EX + "acme"), 2) != bucket_of(ox.NamedNode(EX + "beta"), 2)
    spread = bucketed(text, data, 2)
    assert spread == list(run([("q", parse_query(text))], data, background()))
    acme = [r.t for r in spread if dict(r.binding)["c"].value == EX + "acme"]
    assert acme == [4 if within else 5]


BUY, REFUND, ITEM = (ox.NamedNode(EX + x) for x in ("buy", "refund", "item"))


def buy_one_per_card(session: Session, cards: int) -> int:
    """Card t buys the item at t (no result yet); the most partitions live at once."""
    peak = 0
    for t in range(cards):
        card = ox.NamedNode(f"{EX}card{t}")
        assert session.push_graph(EX + "s", t, [ox.Triple(card, BUY, ITEM)]) == []
        peak = max(peak, session.state_size()["partitions"])
    return peak


def test_partitions_whose_runs_expired_are_dropped():
    """A new card every time unit, each with one purchase: under WITHIN 5 a card's run
    expires 5 units after its purchase, and its partition, then holding nothing, goes. Over
    3,000 cards no more than the cards of the last WITHIN (plus the one arriving) are live,
    and a card dropped long ago that comes back starts afresh (its match is found)."""
    session = Session()
    session.register(
        f"""PREFIX : <{EX}>
        SELECT ?c WITHIN 5 FROM STREAM S1 :s PARTITION BY ?c
        WHERE {{ SEQ(A ; B) DEFINE GPM A ON S1 {{ ?c :buy ?x }}
                 DEFINE GPM B ON S1 {{ ?c :refund ?x }} }}""",
        "q",
    )
    peak = buy_one_per_card(session, 3_000)
    card0 = ox.NamedNode(EX + "card0")  # dropped long ago
    late = session.push_graph(EX + "s", 3_000, [ox.Triple(card0, BUY, ITEM)])
    late += session.push_graph(EX + "s", 3_001, [ox.Triple(card0, REFUND, ITEM)])
    assert peak <= 8
    late += session.flush()
    assert [(dict(r.binding)["c"], r.interval) for r in late] == [(card0, (3_000, 3_001))]


def test_epsparql_partitions_past_the_horizon_are_dropped():
    """EP-SPARQL under getDURATION() < 5: a card's purchase is of no use 5 units on, so its
    partition then holds nothing and goes (the horizon's deadline), though no event of its
    own comes. Over 3,000 cards no more than the last 5 (and the arriving one) are live."""
    session = Session()
    session.register(
        f"""PREFIX : <{EX}>
        SELECT ?c PARTITION BY ?c
        WHERE {{ {{ ?c :buy ?x }} SEQ {{ ?c :refund ?x }} FILTER(getDURATION() < 5) }}""",
        "q",
    )
    peak = buy_one_per_card(session, 3_000)
    last = ox.NamedNode(f"{EX}card2998")  # bought at 2998: 3002 - 2998 = 4 < 5
    found = session.push_graph(EX + "s", 3_002, [ox.Triple(last, REFUND, ITEM)])
    found += session.flush()
    assert peak <= 6
    assert [(dict(r.binding)["c"], r.interval) for r in found] == [(last, (2_998, 3_002))]


WAIT = f"""PREFIX : <{EX}>
SELECT ?c FROM STREAM S1 :s PARTITION BY ?c
WHERE {{ SEQ(A , !B , C?) DEFINE GPM A ON S1 {{ ?c :price ?p }}
         DEFINE GPM B ON S1 {{ ?c :halt ?h }} DEFINE GPM C ON S1 {{ ?c :never ?n }} }}"""
# x: price @0, next x event @5 (a price: no halt, so x's match [0, 0] is settled at 5);
# y: price @1, price @2 (settles [1, 1]), halt @3 (kills [2, 2]); the input ends at 6.
TIMELINE = [(0, "x", "price"), (1, "y", "price"), (2, "y", "price"), (3, "y", "halt"),
            (5, "x", "price"), (6, "y", "price")]


def push_timeline(session: Session, events: list[tuple[int, str, str]]) -> list:
    out = []
    for t, company, what in events:
        triple = ox.Triple(ox.NamedNode(EX + company), ox.NamedNode(EX + what), ox.Literal(t))
        out += session.push_graph(EX + "s", t, [triple])
    return out


def test_results_wait_for_an_older_match_waiting_on_its_partitions_next_event(tmp_path):
    """y's match [1, 1] is known at 2, but x's [0, 0] only when x's next event comes at 5:
    results leave in time order, so y's waits for x's."""
    session = Session()
    session.register(WAIT, "q")
    early = push_timeline(session, TIMELINE[:4])
    assert early == []  # y's [1, 1] is held behind x's [0, 0]
    session.save(tmp_path / "held.json")
    resumed = Session()
    resumed.register(WAIT, "q")
    resumed.load(tmp_path / "held.json")
    results = push_timeline(resumed, TIMELINE[4:]) + resumed.flush()
    company = lambda r: dict(r.binding)["c"].value.removeprefix(EX)  # noqa: E731
    assert [(r.t, company(r), r.interval) for r in results] == [
        (0, "x", (0, 0)), (1, "y", (1, 1)), (5, "x", (5, 5)), (6, "y", (6, 6)),
    ]


def test_a_guarded_tail_negation_holds_later_results():
    """Found by the long differential test: x=b's run (A at 0) waits for b's next event to
    check ``, !B``, then its tail ``!D`` would complete at its horizon 1; b has no next
    event, so it completes when the input ends, and x=a's results at 2 wait for it."""
    query = (
        "PREFIX : <http://example.org/>\nSELECT * WITHIN 1\nFROM STREAM S1 :s1\n"
        "FROM STREAM S2 :s2\nPARTITION BY ?x\nWHERE { SEQ(A , !B , !D)\n"
        "DEFINE GPM A ON S1 { ?x :p ?y }\nDEFINE GPM B ON S2 { ?y ?k ?z }\n"
        "DEFINE GPM D ON S2 { ?x ?j ?v } }"
    )
    a, b, p = (ox.NamedNode(EX + x) for x in "abp")
    elements = [(0, b), (1, a), (2, None), (2, None), (2, a)]
    s1 = [
        StreamElement(S1, f"_:g{n}", t, t, () if x is None else (ox.Triple(x, p, a),))
        for n, (t, x) in enumerate(elements)
    ]
    assert_agrees(query, {S1: s1, S2: [StreamElement(S2, "_:g0", 0, 0, ())]}, renamed=True)
