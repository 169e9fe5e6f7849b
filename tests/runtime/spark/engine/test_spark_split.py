"""Parallelism without PARTITION BY (`sepia.engine.plan.split`): a query the plan proves
splittable by a GROUP BY variable runs as buckets of its values, and its lines are the
local engine's and the reference evaluator's; near-miss queries stay in one key. W3's
shape, grouped by a variable not in every pattern, splits by the trade where the run
merges its buckets' partial sums, with the same lines."""

from __future__ import annotations

import random
from dataclasses import replace

import pyoxigraph as ox
import pytest

from sepia.lang import parse_query
from sepia.rdf.results import jsonl_line
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import NamedQuery
from sepia.runtime.local import run
from sepia.runtime.spark.elements import STAND_INS
from sepia.runtime.spark.host import job_spec
from sepia.runtime.spark.job import routed_rows, unit_split
from sepia.runtime.spark.run import run_on_spark
from sepia.runtime.spark.units import RunQuery, units_of
from sepia.semantics import evaluate

from ..evaluations import evaluations
from .protocol import drive, element_row

S = "http://example.org/trades"
HEAD = "PREFIX : <http://example.org/>\nREGISTER QUERY q AS\n"
WINDOW = f"FROM STREAM <{S}> [RANGE 4 STEP 2]\n"
SPLIT = HEAD + (
    "SELECT ?company (AVG(?price) AS ?avg) (COUNT(?v) AS ?n) " + WINDOW
    + "WHERE { ?company :price ?price . ?company :volume ?v FILTER(?price > 1) } "
    "GROUP BY ?company HAVING (COUNT(?v) > 0)"
)  # fmt: skip
LINKS = HEAD + (
    "SELECT ?company (COUNT(*) AS ?n) " + WINDOW
    + "WHERE { ?company :link ?x . ?y :link ?company } GROUP BY ?company"
)  # fmt: skip
"""A triple `a :link b` binds ?company to a (first pattern) and to b (second): it goes to
both buckets, and each sees the other's group in part (which it must not report)."""
NEAR_MISSES = {
    "a pattern without ?company": HEAD + "SELECT ?company (AVG(?price) AS ?avg) " + WINDOW
    + "WHERE { ?trade :company ?company ; :price ?price } GROUP BY ?company",
    "an aggregate over all groups": HEAD + "SELECT (AVG(?price) AS ?avg) " + WINDOW
    + "WHERE { ?company :price ?price }",
    "a sub-select": HEAD + "SELECT ?company (AVG(?price) AS ?avg) " + WINDOW
    + "WHERE { ?company :price ?price { SELECT ?company WHERE { ?company :volume ?v } } } "
    "GROUP BY ?company",
}  # fmt: skip


def trades() -> dict[str, list[StreamElement]]:
    """Six companies over ten instants, most elements holding several companies' triples
    (each binds its subject's value only), and a triple no pattern matches."""
    ex = "http://example.org/"
    elements = []
    for t in range(1, 11):
        triples = []
        for k, company in enumerate(["acme", "beta", "gamma", "delta", "eps", "zeta"]):
            if (t + k) % 3:
                c = ox.NamedNode(ex + company)
                triples.append(ox.Triple(c, ox.NamedNode(ex + "price"), ox.Literal(t + k)))
                triples.append(ox.Triple(c, ox.NamedNode(ex + "volume"), ox.Literal(k)))
        triples.append(ox.Triple(ox.NamedNode(ex + "x"), ox.NamedNode(ex + "noise"), ox.Literal(t)))
        elements.append(StreamElement(S, f"{ex}g{t}", t, t, tuple(triples)))
    return {S: elements}


def links() -> dict[str, list[StreamElement]]:
    """Links among five companies, one or two per instant, over ten instants."""
    ex = "http://example.org/"
    names = ["acme", "beta", "gamma", "delta", "eps"]
    link = ox.NamedNode(ex + "link")
    elements = []
    for t in range(1, 11):
        pairs = [(names[t % 5], names[(t * 2) % 5]), (names[(t + 1) % 5], names[t % 5])]
        chosen = pairs[: 1 + t % 2]
        node = lambda name: ox.NamedNode(ex + name)  # noqa: E731
        triples = tuple(ox.Triple(node(a), link, node(b)) for a, b in chosen)
        elements.append(StreamElement(S, f"{ex}g{t}", t, t, triples))
    return {S: elements}


MERGED = HEAD + (
    "SELECT ?company (AVG(?price) AS ?avg) (SUM(?price) AS ?total) (COUNT(*) AS ?n) " + WINDOW
    + "WHERE { ?trade :company ?company ; :price ?price } GROUP BY ?company"
)  # fmt: skip
"""W3's shape: ?trade in one place of both patterns, grouped by ?company."""


def trade_nodes(seed: int) -> dict[str, list[StreamElement]]:
    """One to three trades an element over twenty instants, four companies, prices as
    integers, decimals and doubles (sums that round: 0.1 + 0.2), one not a number (its
    company's averages unbound while it is in the window), a trade's price now and then
    in the next element."""
    ex = "http://example.org/"
    rng = random.Random(seed)
    xsd = "http://www.w3.org/2001/XMLSchema#"
    prices = [ox.Literal("0.1", datatype=ox.NamedNode(xsd + "double")),
              ox.Literal("0.2", datatype=ox.NamedNode(xsd + "double")),
              ox.Literal("2.25", datatype=ox.NamedNode(xsd + "decimal")),
              ox.Literal("7", datatype=ox.NamedNode(xsd + "integer")),
              ox.Literal("1e300", datatype=ox.NamedNode(xsd + "double"))]  # fmt: skip
    company, price = ox.NamedNode(ex + "company"), ox.NamedNode(ex + "price")
    elements, late, n = [], [], 0
    for t in range(1, 21):
        triples, late = late, []
        for _ in range(rng.randint(1, 3)):
            trade, n = ox.NamedNode(f"{ex}t{n}"), n + 1
            owner = ox.NamedNode(ex + rng.choice(["acme", "beta", "gamma", "delta"]))
            value = ox.Literal("n/a") if n == 7 else rng.choice(prices)
            triples.append(ox.Triple(trade, company, owner))
            (late if rng.random() < 0.2 else triples).append(ox.Triple(trade, price, value))
        elements.append(StreamElement(S, f"{ex}g{t}", t, t, tuple(triples)))
    return {S: elements}


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("buckets", [2, 3, 4])
@pytest.mark.parametrize("batch", [1, 20])
def test_merged_partial_sums_give_the_local_and_reference_lines(seed, buckets, batch) -> None:
    data = trade_nodes(seed)
    expected = local(MERGED, data)
    assert len(set(expected)) > 20
    assert any('"avg"' not in line for line in expected)  # the trade that is no number
    assert evaluations(expected) == evaluations(reference(MERGED, data))
    query = [RunQuery("q", parse_query(MERGED), 0)]
    got = drive(query, data, batch_size=batch, buckets=buckets, merges=True)
    assert evaluations(got) == evaluations(expected)


def test_a_merged_split_s_triples_go_to_their_trade_s_bucket_only() -> None:
    """Each triple binds one trade, so it goes to one bucket; without merging, one key."""
    units = units_of([("q", parse_query(MERGED))])
    rows = [element_row(e, n) for n, e in enumerate(trade_nodes(1)[S])]
    alone = job_spec(units, streams=(S,), buckets=3)
    assert unit_split(alone, 0) is None
    assert {key for _, key, _ in routed_rows(alone, rows)} == {None}
    spec = replace(alone, merges=True)
    split = unit_split(spec, 0)
    assert split is not None and split.variable.value == "trade"
    sent: dict[str, set[str | None]] = {}
    for _, key, row in routed_rows(spec, rows):
        if row[3] == STAND_INS:  # an instant's stand-ins for the buckets that got nothing
            continue
        for line in filter(None, row[7].split("\n")):
            sent.setdefault(line.split(" ")[0], set()).add(key)
    assert len(sent) > 20 and all(len(keys) == 1 for keys in sent.values())


def local(text: str, data) -> list[str]:
    return [jsonl_line(r, TimeKind.ABSTRACT) for r in run([("q", parse_query(text))], data)]


def reference(text: str, data) -> list[str]:
    return [jsonl_line(r, TimeKind.ABSTRACT) for r in evaluate(parse_query(text), data, name="q")]


def test_the_split_query_is_split_and_its_triples_shared_by_company() -> None:
    spec = job_spec(units_of([("q", parse_query(SPLIT))]), streams=(S,), buckets=3)
    assert unit_split(spec, 0) is not None
    rows = [element_row(e, n) for n, e in enumerate(trades()[S])]
    keys = {key for _, key, _ in routed_rows(spec, rows)}
    assert keys == {"0/3", "1/3", "2/3"}
    noise = [row for _, _, row in routed_rows(spec, rows) if "noise" in row[7]]
    assert noise == []  # a triple binding no company joins no result: it goes nowhere


@pytest.mark.parametrize("case", ["trades", "links"])
@pytest.mark.parametrize("buckets", [2, 3, 4])
@pytest.mark.parametrize("batch", [1, 3])
def test_split_buckets_give_the_local_and_reference_lines(case, buckets, batch) -> None:
    text, data = (SPLIT, trades()) if case == "trades" else (LINKS, links())
    expected = local(text, data)
    assert len(set(expected)) > 10  # many groups over many windows
    assert evaluations(expected) == evaluations(reference(text, data))
    got = drive([RunQuery("q", parse_query(text), 0)], data, batch_size=batch, buckets=buckets)
    assert evaluations(got) == evaluations(expected)


@pytest.mark.parametrize("why", sorted(NEAR_MISSES))
def test_near_misses_stay_in_one_key_and_agree(why) -> None:
    text = NEAR_MISSES[why]
    spec = job_spec(units_of([("q", parse_query(text))]), streams=(S,), buckets=3)
    assert unit_split(spec, 0) is None, why
    data = trades()
    got = drive([RunQuery("q", parse_query(text), 0)], data, buckets=3)
    assert evaluations(got) == evaluations(local(text, data)) == evaluations(reference(text, data))


@pytest.mark.spark
def test_a_spark_run_of_the_split_query_gives_the_local_lines(spark, tmp_path) -> None:
    """Through Spark: the route stage's shares and stand-ins over the run's 4 buckets
    (local[2]), each bucket keeping its own groups."""
    data = trades()
    prov = "<http://www.w3.org/ns/prov#generatedAtTime>"
    path = tmp_path / "trades.trig"
    path.write_text("".join(
        f"<{e.graph}> {{ {' '.join(f'{t} .' for t in e.triples)} }}\n<{e.graph}> {prov} {e.end} .\n"
        for e in data[S]
    ))  # fmt: skip
    out = tmp_path / "results.jsonl"
    query = NamedQuery("q", parse_query(SPLIT), tmp_path)
    run_on_spark([query], {S: str(path)}, output=str(out), spark=spark)
    assert evaluations(out.read_text().splitlines()) == evaluations(local(SPLIT, data))


@pytest.mark.spark
def test_a_spark_run_of_w3_splits_by_the_trade_and_gives_the_local_lines(spark, tmp_path) -> None:
    """W3 itself (4,000 elements: four 40 s windows of 110 companies), a run of one file
    over 3 buckets: each bucket's partial sums merged by the driver give the lines of
    `--engine local`, each evaluation's rows in any order (as the output allows)."""
    from sepia.io.streams import read_stream
    from sepia.runtime.spark.run import SparkRunOptions
    from sepia.workloads import generate

    manifest = generate("W3", 4_000, 7, tmp_path / "w3")
    (stream,) = manifest.streams
    (variant,) = manifest.variants
    path = tmp_path / "w3" / stream.path
    query = parse_query((tmp_path / "w3" / variant.query).read_text())
    spec = replace(job_spec(units_of([("q", query)]), streams=(stream.iri,), buckets=3),
                   merges=True)  # fmt: skip
    assert unit_split(spec, 0) is not None
    out = tmp_path / "results.jsonl"
    run_on_spark([NamedQuery("q", query, tmp_path)], {stream.iri: str(path)}, [],
                 SparkRunOptions(buckets=3), output=str(out), spark=spark)  # fmt: skip
    elements = {stream.iri: list(read_stream(path, stream.iri))}
    expected = [jsonl_line(r, TimeKind.DATETIME) for r in run([("q", query)], elements)]
    assert len(expected) > 300
    assert evaluations(out.read_text().splitlines()) == evaluations(expected)
