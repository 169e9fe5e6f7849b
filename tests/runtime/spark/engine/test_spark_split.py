"""Parallelism without PARTITION BY (`sepia.engine.plan.split`): a query the plan proves
splittable by a GROUP BY variable runs as buckets of its values, and its lines are the
local engine's and the reference evaluator's; near-miss queries stay in one key."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from sepia.lang import parse_query
from sepia.rdf.results import jsonl_line
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import NamedQuery
from sepia.runtime.local import run
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
