"""A fixed sample of the engine's differential-test cases (tests/engine/generators.py:
RSP-QL, SPAseq and RSEP-QL queries over generated streams) through the Spark job's engine:
the jsonl lines must be `--engine local`'s, line for line.

The sample is fixed (hypothesis derandomized, no example database): 40 cases, 8 per family
(PARTITION BY ones included), go through the engine protocol in-process, in batches of 1 to
4 elements, half of them restoring every step from the state rows (protocol.py), PARTITION
BY queries spread over 1 to 3 buckets; six go through one real Spark run together, one or
two per family (streams and queries renamed apart), with the run's default buckets (4 on
the tests' local[2]), and a PARTITION BY case whose buckets only learn of each other's
instants from stand-ins."""

from __future__ import annotations

import re
from collections.abc import Callable

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from engine.generators import BACKGROUND, event_queries, queries, sequence_queries, streams
from engine.support import background
from sepia.engine import Unsupported
from sepia.lang import parse_query
from sepia.rdf.results import jsonl_line
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import NamedQuery
from sepia.runtime.local import Session, run
from sepia.runtime.spark.run import run_on_spark
from sepia.runtime.spark.units import RunQuery

from .protocol import drive

Case = tuple[str, dict[str, list[StreamElement]]]
FAMILIES = (
    queries(),
    sequence_queries(),
    event_queries(),
    sequence_queries(partitioned=True),
    event_queries(partitioned=True),
)


def fixed(strategy: st.SearchStrategy, count: int, keep: Callable[..., bool]) -> list:
    """The first `count` examples of `strategy` that `keep` accepts, the same on every run."""
    found: list = []

    @settings(derandomize=True, database=None, max_examples=count * 4, phases=[Phase.generate],
              deadline=None, suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(strategy)
    def collect(example) -> None:
        if len(found) < count and keep(*example):
            found.append(example)

    collect()
    return found


def runs_locally(text: str, _streams: object = None) -> bool:
    try:
        Session(background()).register(text, "q")
    except Unsupported:
        return False
    return True


def local_lines(text: str, data: dict[str, list[StreamElement]], name: str = "q") -> list[str]:
    """What `sepia run --engine local --format jsonl` writes for the query over `data`."""
    results = run([(name, parse_query(text))], data, background())
    return [jsonl_line(r, TimeKind.ABSTRACT) for r in results]


SAMPLE = [
    case for family in FAMILIES for case in fixed(st.tuples(family, streams()), 8, runs_locally)
]


@pytest.mark.parametrize("number", range(len(SAMPLE)))
def test_protocol_steps_give_the_local_jsonl(number):
    text, data = SAMPLE[number]
    batch, buckets = 1 + number % 4, 1 + number % 3
    got = drive([RunQuery("q", parse_query(text), 0)], data, background(),
                batch_size=batch, forget=number % 2 == 1, buckets=buckets)  # fmt: skip
    assert got == local_lines(text, data), text


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.one_of(sequence_queries(partitioned=True), event_queries(partitioned=True)),
    streams(),
    st.integers(2, 4),
    st.integers(1, 4),
    st.booleans(),
)
def test_partitions_spread_over_buckets_give_the_local_jsonl(text, data, buckets, batch, forget):
    """The route stage's buckets and stand-ins and the order of the buckets' results, on
    generated PARTITION BY queries (each bucket's state restored from its rows at every
    step with `forget`): line for line `--engine local`'s."""
    if not runs_locally(text):
        return
    got = drive([RunQuery("q", parse_query(text), 0)], data, background(),
                batch_size=batch, buckets=buckets, forget=forget)  # fmt: skip
    assert got == local_lines(text, data), text


TAIL = """PREFIX : <http://example.org/>
SELECT ?c {within} FROM STREAM S1 :s1 PARTITION BY ?c
WHERE {{ SEQ(A ; !B) DEFINE GPM A ON S1 {{ ?c :price ?p }}
         DEFINE GPM B ON S1 {{ ?c :halt ?h }} }}"""


def tail_case(within: str) -> Case:
    """acme's price at 1, beta's at 2 and 5: with two buckets (or four), acme's and beta's
    elements go to different ones (tests/engine/test_partition.py has this timeline)."""
    s1, price = "http://example.org/s1", ox.NamedNode("http://example.org/price")
    data = {s1: [
        StreamElement(s1, f"http://example.org/g{t}", t, t,
                      (ox.Triple(ox.NamedNode(f"http://example.org/{c}"), price, ox.Literal(t)),))
        for t, c in [(1, "acme"), (2, "beta"), (5, "beta")]
    ]}  # fmt: skip
    return TAIL.format(within=within), data


@pytest.mark.parametrize("within", ["", "WITHIN 3"])
def test_a_bucket_hears_of_the_instants_of_the_others(within):
    """acme's tail negation completes at the whole input's end, or at its WITHIN horizon,
    only if the route stage's stand-ins tell acme's bucket of beta's instants."""
    text, data = tail_case(within)
    expected = local_lines(text, data)
    end = '"t": 4' if within else '"t": 5'
    assert any(end in line and "acme" in line for line in expected), expected
    for batch in (1, 3):
        got = drive([RunQuery("q", parse_query(text), 0)], data, batch_size=batch, buckets=2)
        assert got == expected


def renamed(n: int, text: str, data: dict[str, list[StreamElement]]) -> Case:
    """Case n with its streams (and element names) moved apart from the other cases', and
    without empty elements (a stream file cannot hold them, io.md)."""
    text = re.sub(r":s([12])\b", rf":c{n}s\1", text)
    moved = {
        iri.replace("/s", f"/c{n}s"): [
            StreamElement(iri.replace("/s", f"/c{n}s"), f"http://example.org/c{n}/g{k}",
                          e.start, e.end, e.triples, e.kind)
            for k, e in enumerate(elements)
            if e.triples
        ]
        for iri, elements in data.items()
    }  # fmt: skip
    return text, moved


def trig(elements: list[StreamElement]) -> str:
    """A stream file (io.md) holding `elements`."""
    prov = "<http://www.w3.org/ns/prov#generatedAtTime>"
    return "".join(
        f"<{e.graph}> {{ {' '.join(f'{t} .' for t in e.triples)} }}\n<{e.graph}> {prov} {e.end} .\n"
        for e in elements
    )


@pytest.mark.spark
def test_a_spark_run_gives_the_local_jsonl_per_query(spark, tmp_path):
    sample = [
        renamed(n, *SAMPLE[k]) for n, k in enumerate((0, 1, 8, 16, 24, 32))
    ]  # 24, 32: PARTITION BY
    sample.append(renamed(len(sample), *tail_case("WITHIN 3")))  # buckets of 4: see there
    bindings, queries_ = {}, []
    for n, (text, data) in enumerate(sample):
        queries_.append(NamedQuery(f"q{n}", parse_query(text), tmp_path))
        for iri, elements in data.items():
            path = tmp_path / f"c{n}-{iri.rsplit('/', 1)[1]}.trig"
            path.write_text(trig(elements))
            bindings[iri] = str(path)
    store = tmp_path / "background.trig"
    store.write_text(BACKGROUND)
    out = tmp_path / "results.jsonl"
    run_on_spark(queries_, bindings, [(None, store)], output=str(out), spark=spark)
    lines = out.read_text().splitlines()
    for n, (text, data) in enumerate(sample):
        mine = [line for line in lines if f'"query": "q{n}"' in line]
        assert mine == local_lines(text, data, f"q{n}"), text
