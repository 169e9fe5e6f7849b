"""The route stage on the columnar core (`column_routes`): a PARTITION BY query whose
buckets run on the columnar core gets its partition keys by one group-by per chunk, and
its element rows cross the shuffle as term text, which the buckets encode without parsing.

Checked against values worked out apart from the engine: an element goes to the bucket of
each company it gives both a price and a volume of (the query's GPMs), and nowhere else;
and the buckets' lines together equal `--engine local`'s and the reference evaluator's on
W4-like queries (the v-shape under WITHIN, `,` and `;`), keys spread over 2 to 5 buckets,
in-process through the engine protocol and in a real Spark run."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from sepia.engine.codec import Codec
from sepia.engine.query.partition import bucket_of
from sepia.lang import parse_query
from sepia.rdf.results import jsonl_line
from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import canonical
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import NamedQuery
from sepia.runtime.local import run
from sepia.runtime.spark.columns import element_columns
from sepia.runtime.spark.elements import is_term_text, ntriples, term_text, to_element
from sepia.runtime.spark.host import job_spec
from sepia.runtime.spark.job import routed_rows
from sepia.runtime.spark.run import SparkRunOptions, run_on_spark
from sepia.runtime.spark.units import RunQuery, parse_bucket_key, units_of
from sepia.semantics import evaluate

from ..evaluations import evaluations
from .protocol import drive, element_row
from .test_spark_differential import trig

EX = "http://example.org/"
S, OTHER = EX + "stocks", EX + "news"
PRICE, VOLUME = ox.NamedNode(EX + "price"), ox.NamedNode(EX + "volume")
COMPANIES = 9

V_SHAPE = """PREFIX : <http://example.org/>
SELECT ?company ?p1 ?p2 ?p3 WITHIN {within} FROM STREAM S1 <http://example.org/stocks>
PARTITION BY ?company
WHERE {{ SEQ(A {first} B {second} C)
  DEFINE GPM A ON S1 {{ ?company :price ?p1 . ?company :volume ?v1 }}
  DEFINE GPM B ON S1 {{ ?company :price ?p2 . ?company :volume ?v2 FILTER(?p2 < ?p1) }}
  DEFINE GPM C ON S1 {{ ?company :price ?p3 . ?company :volume ?v3 FILTER(?p3 > ?p2) }} }}"""
STRICT = V_SHAPE.format(within=30, first=",", second=",")
NEXT = V_SHAPE.format(within=20, first=";", second=";")


def _company(n: int) -> ox.NamedNode:
    return ox.NamedNode(f"{EX}company{n % COMPANIES}")


def _ticks(count: int) -> list[StreamElement]:
    """Element t at time t: a trade of one company (price and volume); every fourth
    element also trades a second company, every fifth also carries a third company's price
    without its volume (it joins no partition of that company: no GPM matches)."""
    elements = []
    for t in range(count):
        triples = []
        for k in range(2 if t % 4 == 0 else 1):
            c = _company(t * 4 + k * 5)
            price = ox.Literal(str((t * 7 + k * 3) % 11), datatype=ox.NamedNode(
                "http://www.w3.org/2001/XMLSchema#integer"))  # fmt: skip
            triples += [ox.Triple(c, PRICE, price), ox.Triple(c, VOLUME, ox.Literal(t % 5))]
        if t % 5 == 0:
            triples.append(ox.Triple(_company(t + 2), PRICE, ox.Literal(1)))
        elements.append(StreamElement(S, f"{EX}g{t}", t, t, tuple(triples)))
    return elements


def _traded(element: StreamElement) -> set[ox.NamedNode]:
    """The companies an element gives both a price and a volume of (by hand: A's BGP)."""
    priced = {t.subject for t in element.triples if t.predicate == PRICE}
    return {t.subject for t in element.triples if t.predicate == VOLUME} & priced  # type: ignore[return-value]


@pytest.fixture(autouse=True)
def columnar(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEPIA_ENGINE_PATH", "columnar")


@pytest.mark.parametrize("buckets", [2, 3, 5])
def test_each_element_goes_to_the_buckets_of_the_companies_it_trades(buckets: int) -> None:
    ticks = _ticks(60)
    news = StreamElement(OTHER, EX + "n", 3, 3, ticks[4].triples)  # a stream the query skips
    rows = [element_row(e, n) for n, e in enumerate([*ticks, news])]
    spec = job_spec(units_of([("q", parse_query(STRICT))]), None, streams=(S, OTHER),
                    buckets=buckets)  # fmt: skip
    got: dict[int, set[int]] = {}
    for _, key, row in routed_rows(spec, rows):
        assert row[0] == S and is_term_text(row[7])
        got.setdefault(row[2], set()).add(parse_bucket_key(key)[0])
        assert to_element(row) == to_element(rows[row[2]])  # the same element, unparsed
    wanted = {n: {bucket_of(c, buckets) for c in _traded(e)} for n, e in enumerate(ticks)}
    assert got == {n: b for n, b in wanted.items() if b}
    assert len({b for bs in got.values() for b in bs}) == buckets  # keys spread over all
    assert any(len(b) == 2 for b in got.values())  # some elements go to two buckets


@pytest.mark.parametrize("text", [STRICT, NEXT])
@pytest.mark.parametrize(("buckets", "batch"), [(2, 9), (3, 40), (5, 17)])
def test_buckets_routed_on_columns_give_the_local_and_the_reference_answer(
    text: str, buckets: int, batch: int
) -> None:
    streams = {S: _ticks(160)}
    query = parse_query(text)
    local = [jsonl_line(r, TimeKind.ABSTRACT) for r in run([("q", query)], streams)]
    reference = [jsonl_line(r, TimeKind.ABSTRACT) for r in evaluate(query, streams, name="q")]
    assert len(local) > 15
    assert evaluations(local) == evaluations(reference)
    got = drive([RunQuery("q", query, 0)], streams, batch_size=batch, buckets=buckets)
    assert got == local


def test_term_text_encodes_as_the_parsed_triples_do() -> None:
    """Non-canonical literals, language tags, blank nodes, escaped characters: a row's
    term text gives the ids its N-Triples gives, alone or mixed with N-Triples rows (term
    text holds each term in the canonical form the engine's dictionary encodes)."""
    xsd = "http://www.w3.org/2001/XMLSchema#"
    odd = [
        ox.Literal("007", datatype=ox.NamedNode(xsd + "int")),
        ox.Literal("Bonjour", language="FR"),
        ox.Literal('two words, a "quote"\nand\x1fa unit separator'),
        ox.BlankNode("b1"),
    ]
    element = StreamElement(S, EX + "g", 1, 1, tuple(
        ox.Triple(ox.BlankNode("s"), PRICE, o) for o in odd))  # fmt: skip
    plain = element_row(element, 0)
    codec = Codec()
    terms = [codec.decode_text(i) for t in element.triples for i in codec.encode_triples([t])[0]]
    texts = (*plain[:7], term_text(terms))
    assert is_term_text(texts[7]) and not is_term_text(plain[7])
    held = [ox.Triple(t.subject, t.predicate, canonical(t.object)) for t in element.triples]
    assert to_element(texts).triples == tuple(held)  # the terms as the engine holds them
    assert str(held[0].object) == '"7"^^<http://www.w3.org/2001/XMLSchema#integer>'
    assert ntriples(plain[7]) == plain[7]
    other = element_row(_ticks(1)[0], 1)
    for rows in ([texts], [texts, other], [other, texts]):
        mine, theirs = Codec(), Codec()
        a = element_columns(rows, mine)
        b = element_columns([(*r[:7], ntriples(r[7])) for r in rows], theirs)
        assert (a.element.tolist(), a.s.tolist(), a.p.tolist(), a.o.tolist()) == (
            b.element.tolist(), b.s.tolist(), b.p.tolist(), b.o.tolist())  # fmt: skip
        assert list(mine.rows()) == list(theirs.rows())


@pytest.mark.spark
def test_a_spark_run_routed_on_columns_gives_the_local_lines(spark, tmp_path) -> None:
    streams = {S: _ticks(120)}
    path = tmp_path / "stocks.trig"
    path.write_text(trig(streams[S]))
    out = tmp_path / "results.jsonl"
    queries = [NamedQuery("q", parse_query(STRICT), tmp_path)]
    run_on_spark(queries, {S: str(path)}, [], SparkRunOptions(buckets=3), output=str(out),
                 spark=spark)  # fmt: skip
    local = [jsonl_line(r, TimeKind.ABSTRACT) for r in run([("q", parse_query(STRICT))], streams)]
    assert out.read_text().splitlines() == local
