"""GROUP BY on the columnar core (``sepia.engine.columnar.groups``): COUNT, SUM, AVG, MIN
and MAX against the reference evaluator on both engine paths, the batch path cut anywhere,
and hand-derived values of the vector reductions."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import numpy as np
import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.engine.codec import Codec
from sepia.engine.columnar import ColumnarQuery, ColumnBatch, windows
from sepia.engine.columnar.groups import NOT_NUMBER, NumericIds, group_by
from sepia.engine.columnar.query import plan_uncovered
from sepia.engine.columnar.tables import NO_ID, Table
from sepia.engine.plan.planner import plan
from sepia.engine.r2r.aggregates import AggregateSpec, GroupBy
from sepia.engine.r2r.numbers import Terms
from sepia.lang import parse_query
from sepia.rdf.numbers import DECIMAL, INTEGER
from sepia.rdf.stream import StreamElement, StreamSet
from sepia.runtime.local import Session
from sepia.semantics import evaluate

from ..generators import EX, PREDICATES, SUBJECTS, declared, planted, report, stream
from ..shares import judge
from ..support import assert_agrees, background, engine_path, recorded_numbers

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
XSD = "http://www.w3.org/2001/XMLSchema#"


def typed(value: str, datatype: str) -> ox.Literal:
    return ox.Literal(value, datatype=ox.NamedNode(XSD + datatype))


UNTIED = [
    *(typed(str(i), "integer") for i in range(1, 5)),
    typed("0.5", "decimal"), typed("2.25", "decimal"), typed("-1.5", "decimal"),
    typed("123456789.000000001", "decimal"),
    typed("3.5E0", "double"), typed("1.0E1", "double"),
    ox.Literal("x"), ox.Literal("y", language="en"),
]
"""Numbers of every kind, no two of them equal in value (nor once 1 is added to each: the
BIND below), so that MIN and MAX never meet equal numbers of different terms (SPARQL
leaves their order open); strings and IRIs too."""
TIED = [
    *UNTIED,
    typed("01", "integer"), typed("1.0", "decimal"), typed("1.0E0", "double"),
    typed("02", "int"), typed("1.5", "float"), typed("x", "integer"),
    typed("9223372036854775807", "integer"),
]
"""Adds numbers equal to others in another datatype or lexical form, an xsd:int, a
float, an ill-typed literal and the largest 64-bit integer (two of them overflow a SUM):
for COUNT, SUM and AVG. Doubles and floats are dyadic, so that their sums are exact in
any order."""


def content(objects: list[ox.Term]) -> st.SearchStrategy[ox.Triple]:
    return st.builds(
        ox.Triple, st.sampled_from([*SUBJECTS, ox.BlankNode("n")]),
        st.sampled_from(PREDICATES), st.sampled_from([*SUBJECTS, *objects]),
    )


FAMILIES: list[tuple[str, str, str, list[ox.Term]]] = [  # SELECT, WHERE, modifiers, objects
    ("?x (COUNT(*) AS ?n) (SUM(?y) AS ?s) (AVG(?y) AS ?a)", "WINDOW :w1 { ?x :p ?y }",
     "GROUP BY ?x", TIED),
    ("?x (MIN(?y) AS ?lo) (MAX(?y) AS ?hi)", "WINDOW :w1 { ?x ?p ?y }", "GROUP BY ?x", UNTIED),
    ("(COUNT(DISTINCT ?y) AS ?n) (SUM(DISTINCT ?y) AS ?s) (AVG(DISTINCT ?y) AS ?a)",
     "WINDOW :w1 { ?x ?p ?y }", "", TIED),
    ("?p (COUNT(DISTINCT *) AS ?n) (COUNT(?y) AS ?m) (MIN(?y) AS ?lo)",
     "WINDOW :w1 { ?x ?p ?y }", "GROUP BY ?p", UNTIED),
    ("?x ?p (SUM(?y) AS ?s)", "WINDOW :w1 { ?x ?p ?y }", "GROUP BY ?x ?p HAVING (SUM(?y) > 2)",
     TIED),
    ("?x (AVG(?y) * 2 AS ?d) (MAX(?y) AS ?m)", "WINDOW :w1 { ?x :p ?y }", "GROUP BY ?x", UNTIED),
    ("?x (SUM(?z) AS ?s) (MAX(?z) AS ?m) (COUNT(?z) AS ?n)",
     "WINDOW :w1 { ?x :p ?y BIND(?y + 1 AS ?z) }", "GROUP BY ?x", UNTIED),
    ("?z (COUNT(*) AS ?n) (SUM(?y) AS ?s)", "WINDOW :w1 { ?x :p ?y } ?x :r ?z", "GROUP BY ?z",
     TIED),
    ("DISTINCT ?n", "{ SELECT ?x (COUNT(?y) AS ?n) WHERE { WINDOW :w1 { ?x ?p ?y } } GROUP BY ?x }",
     "", TIED),
    ("*", "{ SELECT ?x (SUM(?y) AS ?s) WHERE { WINDOW :w1 { ?x :p ?y } } GROUP BY ?x } "
     "WINDOW :w2 { ?x :q ?w }", "", TIED),
]


@st.composite
def grouped(draw, family: tuple[str, str, str, list[ox.Term]]) -> tuple[str, dict]:
    """A query of ``family`` (windows, report policy and streaming operator drawn) and
    streams planted from it among noise over the family's objects."""
    projection, where, modifiers, objects = family
    windows = ["w1", "w2"] if ":w2" in where else ["w1"]
    operator = draw(st.sampled_from(["RSTREAM", "ISTREAM", "DSTREAM"]))
    text = (
        f"PREFIX : <{EX}>\nREGISTER {operator} :out AS\nSELECT {projection}\n"
        f"{declared(draw, windows)}\n{draw(report(windows))}\nWHERE {{ {where} }} {modifiers}"
    )
    iris = [f"{EX}s1", f"{EX}s2"]
    noise = st.fixed_dictionaries({
        iri: stream(iri, min_size=1, max_size=10, content=content(objects)) for iri in iris
    })
    return text, draw(planted(text, noise))


@pytest.mark.parametrize("path", ["columnar-always", "rows"])
@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f"{f[0]} {f[2]}".strip())
@settings(max_examples=20, deadline=None, suppress_health_check=CHECKS)
@given(data=st.data())
def test_groups_agree_with_the_reference(path, family, data):
    """Each family on both engine paths; every one runs on the columnar core when asked."""
    text, streams = data.draw(grouped(family), label="example")
    with engine_path(path):
        session = Session(background())
        session.register(parse_query(text), "q")
        assert isinstance(session.queries[0], ColumnarQuery) == (path != "rows"), text
        assert_agrees(text, streams)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f"{f[0]} {f[2]}".strip())
@settings(max_examples=20, deadline=None, suppress_health_check=CHECKS)
@given(data=st.data())
def test_groups_with_numbers_learnt_as_elements_arrive_agree(family, data):
    """Single pushes become a window chunk every 2 elements here (``LOOSE``), each
    chunk's objects learnt by ``NumericIds.learn`` before the evaluations read them: the
    reference's answers still."""
    text, streams = data.draw(grouped(family), label="example")
    with pytest.MonkeyPatch.context() as patch, engine_path("columnar-always"):
        patch.setattr(windows, "LOOSE", 2)
        assert_agrees(text, streams)


def test_numbers_learnt_ahead_are_those_found_at_evaluation():
    """``learn`` takes ids in any order with repeats and unknown ones mixed with known:
    12.5 is (decimal, 1 digit, 125), -3 (integer, 0, -3), an IRI no number; ``of``
    then gives what a cache that learnt nothing ahead finds."""
    codec = Codec()
    a, b, c, d = (codec.encode(t) for t in (typed("12.5", "decimal"), typed("-3", "integer"),
                                            ox.NamedNode(EX + "s"), typed("0.25", "decimal")))
    ahead, fresh = NumericIds(Terms(codec)), NumericIds(Terms(codec))
    ahead.learn(np.array([b, a, b], dtype=np.int64))
    ahead.learn(np.array([c, a, NO_ID], dtype=np.int64))
    assert ahead.ids.tolist() == sorted([a, b, c])
    ids = np.array(sorted([a, b, c, d]), dtype=np.int64)
    found = [c.tolist() for c in ahead.of(ids)]
    assert found == [c.tolist() for c in fresh.of(ids)]
    by_id = dict(zip(ids.tolist(), zip(*found, strict=True), strict=True))
    assert (by_id[a], by_id[b], by_id[d]) == ((DECIMAL, 1, 125), (INTEGER, 0, -3), (DECIMAL, 2, 25))
    assert by_id[c][0] == NOT_NUMBER


def test_numbers_taught_join_those_learnt_and_replace_none():
    """``taught`` adds the values given for ids not known (-3 at b, 0.25 at d) and leaves
    those known alone (12.5 at a stays (decimal, 1, 125) though taught otherwise); the
    cache then gives for a taught id what it would have learnt from its text."""
    codec = Codec()
    a, b, c, d = (codec.encode(t) for t in (typed("12.5", "decimal"), typed("-3", "integer"),
                                            ox.NamedNode(EX + "s"), typed("0.25", "decimal")))
    numbers = NumericIds(Terms(codec))
    numbers.learn(np.array([a, c], dtype=np.int64))
    taught = np.array(sorted([a, b, d]), dtype=np.int64)
    given = {a: (INTEGER, 0, 7), b: (INTEGER, 0, -3), d: (DECIMAL, 2, 25)}
    kind, digits, mantissa = (np.array([given[i][k] for i in taught.tolist()], dtype=np.int64)
                              for k in range(3))
    numbers.taught(taught, kind, digits, mantissa)
    assert numbers.ids.tolist() == sorted([a, b, c, d])
    ids = np.array(sorted([a, b, c, d]), dtype=np.int64)
    found = dict(zip(ids.tolist(), zip(*(c.tolist() for c in numbers.of(ids)), strict=True),
                     strict=True))
    assert (found[a], found[b], found[d]) == ((DECIMAL, 1, 125), (INTEGER, 0, -3),
                                              (DECIMAL, 2, 25))
    assert found[c][0] == NOT_NUMBER


@settings(max_examples=60, deadline=None, suppress_health_check=CHECKS)
@given(st.sampled_from(FAMILIES).flatmap(grouped), st.lists(st.integers(0, 40), max_size=4))
def test_group_batches_cut_anywhere_agree_with_the_reference(example, cuts):
    """``push_columns`` with the input cut at arbitrary elements: the reference's answer."""
    text, streams = example
    expected = evaluate(parse_query(text), streams, background(), name="q")
    judge(text, streams, expected)
    with engine_path("columnar-always"):
        session = Session(background())
        session.register(parse_query(text), "q")
    merged = list(StreamSet(streams).merged())
    batch = ColumnBatch.from_elements(merged, session.dictionary)
    bounds = sorted({0, len(merged), *(c for c in cuts if c < len(merged))})
    got = [r for a, b in pairwise(bounds) for r in session.push_columns(batch.slice(a, b))]
    assert Counter(got + session.flush()) == Counter(expected), text


def _table(codec: Codec, rows: list[tuple[str, ox.Term | None]]) -> Table:
    """Slot 0: a company IRI, slot 1: a price (None: unbound)."""
    company = [codec.encode(ox.NamedNode(EX + c)) for c, _ in rows]
    price = [NO_ID if p is None else codec.encode(p) for _, p in rows]
    return Table({0: np.array(company, dtype=np.int64), 1: np.array(price, dtype=np.int64)},
                 len(rows))


def _grouped(codec: Codec, table: Table, *specs: AggregateSpec, keys=(0,)) -> dict:
    node = GroupBy(None, (), None, keys, specs)  # type: ignore[arg-type]
    out = group_by(table, node, NumericIds(Terms(codec)))
    columns = [out.columns.get(k) for k in (*keys, *(s.target for s in specs))]
    return {
        tuple(None if c is None or c[i] == NO_ID else str(codec.decode(int(c[i])))
              for c in columns[: len(keys)]):
        tuple(None if c[i] == NO_ID else str(codec.decode(int(c[i]))) for c in columns[len(keys):])
        for i in range(out.size)
    }


def test_hand_derived_sums_averages_and_extremes():
    """W3's shape: prices per company. a: 10.5 + 11.25 + 12 = 33.75, over 3 = 11.25; b:
    1 + 2 = 3 (integers stay integers), their average 1.5 (a decimal); c: 0.1 and 0.2 sum
    to exactly 0.3; d: one unbound price makes SUM, AVG, MIN and MAX unbound, COUNT(?p) 1."""
    codec = Codec()
    table = _table(codec, [
        ("a", typed("10.5", "decimal")), ("a", typed("11.25", "decimal")),
        ("a", typed("12", "integer")), ("b", typed("1", "integer")),
        ("b", typed("2", "integer")), ("c", typed("0.1", "decimal")),
        ("c", typed("0.2", "decimal")), ("d", typed("5", "integer")), ("d", None),
    ])
    specs = [AggregateSpec(f, 1, False, 2 + n)
             for n, f in enumerate(["SUM", "AVG", "MIN", "MAX", "COUNT"])]
    got = _grouped(codec, table, *specs)
    decimal, integer = f"^^<{XSD}decimal>", f"^^<{XSD}integer>"
    assert got[(f"<{EX}a>",)] == (f'"33.75"{decimal}', f'"11.25"{decimal}', f'"10.5"{decimal}',
                                  f'"12"{integer}', f'"3"{integer}')
    assert got[(f"<{EX}b>",)] == (f'"3"{integer}', f'"1.5"{decimal}', f'"1"{integer}',
                                  f'"2"{integer}', f'"2"{integer}')
    assert got[(f"<{EX}c>",)] == (f'"0.3"{decimal}', f'"0.15"{decimal}', f'"0.1"{decimal}',
                                  f'"0.2"{decimal}', f'"2"{integer}')
    assert got[(f"<{EX}d>",)] == (None, None, None, None, f'"1"{integer}')


def test_the_implicit_group_over_no_rows_and_distinct_counts():
    """No GROUP BY over no solutions: one group, COUNT 0, SUM 0, AVG 0, MIN unbound;
    COUNT(DISTINCT ?p) counts 2 and 2.0 apart (two terms), SUM(DISTINCT) adds each once."""
    codec = Codec()
    empty = _table(codec, [])
    specs = [AggregateSpec("COUNT", 1, False, 2), AggregateSpec("SUM", 1, False, 3),
             AggregateSpec("AVG", 1, False, 4), AggregateSpec("MIN", 1, False, 5)]
    integer = f"^^<{XSD}integer>"
    assert _grouped(codec, empty, *specs, keys=()) == {
        (): (f'"0"{integer}', f'"0"{integer}', f'"0"{integer}', None)
    }
    table = _table(codec, [("a", typed("2", "integer")), ("b", typed("2", "integer")),
                           ("c", typed("2.0", "decimal"))])
    distinct = [AggregateSpec("COUNT", 1, True, 2), AggregateSpec("SUM", 1, True, 3)]
    assert _grouped(codec, table, *distinct, keys=()) == {
        (): (f'"2"{integer}', f'"4"^^<{XSD}decimal>')
    }


def test_a_join_on_an_aggregate_stays_on_the_row_engine():
    """A vector join needs its keys bound in every row; SUM may leave ?s unbound."""
    text = (
        f"PREFIX : <{EX}>\nREGISTER RSTREAM :out AS\nSELECT *\n"
        "FROM NAMED WINDOW :w1 ON :s1 [RANGE 4 STEP 2]\n"
        "WHERE { { SELECT ?x (SUM(?y) AS ?s) WHERE { WINDOW :w1 { ?x :p ?y } } GROUP BY ?x }"
        " ?s :r ?z }"
    )
    reason = plan_uncovered(plan(parse_query(text), Codec()))
    assert reason == "a join on a variable a BIND or an aggregate may leave unbound"
    counted = text.replace("SUM(?y)", "COUNT(?y)")  # COUNT is always bound
    assert plan_uncovered(plan(parse_query(counted), Codec())) is None


def test_w3_average_price_runs_on_the_columnar_core():
    """W3's C-SPARQL query (a 40 s window merged with the default graph): the columnar
    core's AVG per company is the reference's on trades with hand-picked prices."""
    query = """
PREFIX st: <http://stockmarket.org/trade#>
REGISTER QUERY averagePrice AS
SELECT ?company (AVG(?price) AS ?average)
FROM STREAM <http://stockmarket.org/trades> [RANGE 40s STEP 10s]
WHERE { ?trade st:company ?company ; st:price ?price . }
GROUP BY ?company
"""
    trade = "http://stockmarket.org/trade#"
    prices = ["10.5", "11.25", "12.125", "9", "10.5", "13.75"]
    elements = [
        StreamElement("http://stockmarket.org/trades", f"_:e{n}", 1000 * (n * 7 + 1),
                      1000 * (n * 7 + 1), (
                          ox.Triple(ox.NamedNode(f"{EX}t{n}"), ox.NamedNode(trade + "company"),
                                    ox.NamedNode(f"{EX}c{n % 2}")),
                          ox.Triple(ox.NamedNode(f"{EX}t{n}"), ox.NamedNode(trade + "price"),
                                    typed(price, "decimal")),
                      ))
        for n, price in enumerate(prices)
    ]
    data = {"http://stockmarket.org/trades": elements}
    with engine_path("columnar"):
        session = Session(ox.Store())
        session.register(parse_query(query), "q")
        assert isinstance(session.queries[0], ColumnarQuery)
        assert_agrees(query, data, ox.Store())


@given(st.lists(st.one_of(
    st.integers(-(2**64), 2**64).map(lambda i: typed(str(i), "integer")),
    st.decimals(allow_nan=False, allow_infinity=False, places=4).map(
        lambda d: typed(str(d), "decimal")),
    st.sampled_from(TIED), st.just(ox.NamedNode(EX + "s")), st.just(ox.BlankNode("b")),
), min_size=1, max_size=12))
@settings(max_examples=60, deadline=None, suppress_health_check=CHECKS)
def test_numbers_read_from_text_equal_the_terms(literals: list) -> None:
    """Terms and NumericIds read canonical integers and decimals from the dictionary's
    text without decoding them: each value equals the one found from the pyoxigraph term
    (a store's answer for the rest), and a sum's literal is the term pyoxigraph writes."""
    from sepia.engine.columnar.groups import _decomposed
    from sepia.engine.r2r.numbers import _plain, _stored
    from sepia.rdf.numbers import number_of

    codec = Codec()
    ids = [codec.encode(term) for term in literals]
    distinct = np.unique(np.array(ids, dtype=np.int64))
    kind, digits, mantissa = NumericIds(Terms(codec)).of(distinct)  # from the text first
    terms = Terms(codec)
    terms.canonical(ids)
    assert list(zip(kind.tolist(), digits.tolist(), mantissa.tolist(), strict=True)) == [
        _decomposed(terms.number(i)) for i in distinct.tolist()]
    for i in ids:
        term = codec.decode(i)
        expected = _plain(term) if isinstance(term, ox.Literal) else None
        if expected is False:
            ((stored, numeric),) = _stored([term])
            expected = number_of(stored) if numeric else None
        assert terms.number(i) == expected
    for text, kind in (("-12.5", 1), ("7", 0), ("0", 1)):
        found = terms.literal(text, kind)
        assert codec.decode(found) == typed(text, ("integer", "decimal")[kind])
        assert terms.number(found) == number_of(codec.decode(found))


def test_prices_read_with_a_file_are_taught_to_the_group_by(tmp_path, monkeypatch) -> None:
    """A window's AVG over a file read as columns: the reader's numbers of each block
    are taught to the GROUP BY's values (as a sequence's are), so its evaluations learn
    none of them one by one; its lines are those of the file's elements pushed as rows
    and the reference evaluator's (the window closing at 2 s holds :a's 12.50 and 7.5,
    average 10, and :b's 3 alone)."""
    from sepia.engine.columnar.frontend import stream_columns
    from sepia.io.streams import read_stream

    prices = [("a", "12.50"), ("b", "3"), ("a", "7.5"), ("b", "3.0"), ("a", "1")]
    stamps = [f'"2026-01-01T00:00:0{n}.000Z"^^<{XSD}dateTime>' for n in range(len(prices))]
    path = tmp_path / "s.trig"
    path.write_text("".join(
        f"<{EX}g{n}> <http://www.w3.org/ns/prov#generatedAtTime> {stamps[n]} .\n"
        f'<{EX}g{n}> {{ <{EX}{who}> <{EX}p> "{price}"^^<{XSD}decimal> . }}\n'
        for n, (who, price) in enumerate(prices)), encoding="utf-8")  # fmt: skip
    stream_iri = f"{EX}s"
    text = (f"PREFIX : <{EX}>\nSELECT ?who (AVG(?x) AS ?avg) FROM STREAM <{stream_iri}> "
            "[RANGE 4s STEP 2s] WHERE { ?who :p ?x } GROUP BY ?who")  # fmt: skip
    taught, learnt = recorded_numbers(monkeypatch)
    session = Session()
    session.register(parse_query(text), "q")
    assert isinstance(session.queries[0], ColumnarQuery)
    blocks = list(stream_columns(path, stream_iri, session.dictionary, session.predicates()))
    got = [r for batch in blocks for r in session.push_columns(batch)] + session.flush()
    assert taught and not learnt
    elements = list(read_stream(path, stream_iri))
    rows = Session()
    rows.register(parse_query(text), "q")
    expected = [r for e in elements for r in rows.push(e)] + rows.flush()
    assert [(r.t, str(r.binding)) for r in got] == [(r.t, str(r.binding)) for r in expected]
    two = got[0].t + 2000
    assert {r.binding["who"].value[-1]: r.binding["avg"].value for r in got if r.t == two} == {
        "a": "10", "b": "3"}
    reference = evaluate(parse_query(text), {stream_iri: elements}, name="q")
    assert sorted(map(str, reference)) == sorted(map(str, got))
