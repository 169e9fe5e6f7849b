"""Query networks on Spark: a registered CONSTRUCT query's results feed the queries that read
its stream, in the same unit, as `--engine local` does.

An EP-SPARQL query names no stream: it reads every stream, the derived ones too. The Spark
job once put such a reader in a unit of its own, where no derived element ever arrived: the
rule's drop was printed, the rated drop that follows from it was not.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import strategies as st

from engine.generators import BACKGROUND, streams
from engine.hosts.test_network import consumers, event_producers, window_producers
from engine.support import background
from runtime.spark.engine.test_spark_differential import fixed, runs_locally, trig
from sepia.io.streams import read_stream
from sepia.lang import parse_query
from sepia.rdf.results import jsonl_line
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import NamedQuery
from sepia.runtime.local import run
from sepia.runtime.spark.run import run_on_spark
from sepia.runtime.spark.units import units_of
from sepia.semantics import evaluate_network

EX = "http://example.org/"
RULE = """PREFIX : <http://example.org/>
REGISTER STREAM :drops AS
CONSTRUCT { ?c :dropped ?p2 }
WHERE { { ?c :price ?p1 } SEQ { ?c :price ?p2 } FILTER(?p2 < ?p1 * 0.8) }"""
RATED = """PREFIX : <http://example.org/>
SELECT ?c ?r
WHERE { { ?c :dropped ?p } SEQ { ?r :rates ?c } }"""
PRICES = f"""@prefix : <{EX}> .
@prefix prov: <http://www.w3.org/ns/prov#> .
:g1 {{ :acme :price 100 . }}
:g1 prov:generatedAtTime 1 .
:g2 {{ :beta :price 50 . }}
:g2 prov:generatedAtTime 2 .
:g3 {{ :acme :price 70 . }}
:g3 prov:generatedAtTime 3 .
:g5 {{ :moody :rates :acme . }}
:g5 prov:generatedAtTime 5 .
"""


def test_a_query_naming_no_stream_shares_the_unit_of_what_it_reads():
    units = units_of([("rule", parse_query(RULE)), ("rated", parse_query(RATED))])
    assert [[q.name for q in unit.queries] for unit in units] == [["rule", "rated"]]
    assert units[0].streams == ()  # reads every input stream


def test_the_rated_drop_of_the_issue_is_the_reference_s(tmp_path):
    """The drop at 3 (100 -> 70) and the rating at 5 make the second query's result at 5
    over [1, 5], by hand and by the reference."""
    path = tmp_path / "s.trig"
    path.write_text(PRICES)
    data = {EX + "s": list(read_stream(path, EX + "s"))}
    pairs = [("rule", parse_query(RULE)), ("rated", parse_query(RATED))]
    rated = [r for r in evaluate_network(pairs, data) if r.query == "rated"]
    assert [(r.t, r.interval, [str(v) for _, v in r.binding]) for r in rated] == [
        (5, (1, 5), [f"<{EX}acme>", f"<{EX}moody>"])
    ]


def generated_networks(count: int) -> list[tuple[str, str, dict]]:
    """Fixed producer / consumer pairs over generated streams that the local engine runs."""

    def keep(producer: str, consumer: str, _data: dict) -> bool:
        return runs_locally(producer) and runs_locally(consumer)

    strategy = st.tuples(st.one_of(window_producers(), event_producers()), consumers(), streams())
    return fixed(strategy, count, keep)


def moved(n: int, text: str) -> str:
    """Network n's streams apart from the others' (:s1, :s2 and the derived :d)."""
    return re.sub(r":(s[12]|d)\b", rf":n{n}\1", text)


def spark_agrees_with_local(spark, tmp_path, texts: dict[str, str], files: dict[str, str]):
    """Each query's jsonl lines from a Spark run of `texts` over the stream `files` (IRI ->
    TriG text) are `--engine local`'s."""
    bindings = {}
    for k, (iri, text) in enumerate(files.items()):
        bindings[iri] = str(tmp_path / f"stream{k}.trig")
        (tmp_path / f"stream{k}.trig").write_text(text)
    data = {iri: list(read_stream(path, iri)) for iri, path in bindings.items()}
    pairs = [(name, parse_query(text)) for name, text in texts.items()]
    store = tmp_path / "background.trig"
    store.write_text(BACKGROUND)
    expected = [jsonl_line(r, TimeKind.ABSTRACT) for r in run(pairs, data, background())]
    out = tmp_path / "results.jsonl"
    named = [NamedQuery(name, query, tmp_path) for name, query in pairs]
    run_on_spark(named, bindings, [(None, store)], output=str(out), spark=spark)
    lines = out.read_text().splitlines()
    for name in texts:
        mine = [line for line in lines if f'"query": "{name}"' in line]
        assert mine == [line for line in expected if f'"query": "{name}"' in line], texts[name]
    return lines


@pytest.mark.spark
def test_the_rated_drop_leaves_on_spark(spark, tmp_path):
    lines = spark_agrees_with_local(spark, tmp_path, {"rule": RULE, "rated": RATED},
                                    {EX + "s": PRICES})  # fmt: skip
    assert sum('"query": "rated"' in line for line in lines) == 1


@pytest.mark.spark
def test_generated_networks_on_spark_give_the_local_jsonl(spark, tmp_path):
    """Three generated producer / consumer pairs in one Spark run (an EP-SPARQL consumer
    reads every stream: the local run has the same queries)."""
    texts, files = {}, {}
    for n, (producer, consumer, generated) in enumerate(generated_networks(3)):
        texts[f"p{n}"], texts[f"c{n}"] = moved(n, producer), moved(n, consumer)
        for iri, elements in generated.items():
            iri_n = iri.replace(f"{EX}s", f"{EX}n{n}s")
            files[iri_n] = trig([
                replace(e, stream=iri_n, graph=f"{iri_n}/g{k}")
                for k, e in enumerate(elements) if e.triples
            ])  # fmt: skip
    spark_agrees_with_local(spark, tmp_path, texts, files)
