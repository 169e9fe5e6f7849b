"""A PARTITION BY query spread over the Spark job's buckets runs on the columnar core in
each bucket: the bucket's `PartitionedSequence` keeps its own partition values only
(`owns`, asked once per key id), an element binding values of several buckets goes to
each of them and steps only the owned ones there, and the buckets' lines together are
those of one unbucketed local run and of the reference evaluator."""

from __future__ import annotations

import numpy as np
import pyoxigraph as ox
import pytest

from sepia.engine.codec import Codec
from sepia.engine.columnar.partitions import OwnedKeys
from sepia.engine.columnar.sequences import PartitionedSequence
from sepia.engine.hosts.session import Session
from sepia.engine.query.partition import PartitionedQuery, bucket_of
from sepia.lang import parse_query
from sepia.rdf.results import jsonl_line
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind
from sepia.runtime.local import run
from sepia.runtime.spark.elements import STAND_INS
from sepia.runtime.spark.host import job_spec
from sepia.runtime.spark.incremental_engine import PART, parts
from sepia.runtime.spark.job import routed_rows
from sepia.runtime.spark.units import RunQuery, parse_bucket_key, units_of
from sepia.semantics import evaluate

from ..evaluations import evaluations
from .protocol import drive, element_row

EX = "http://example.org/"
S = EX + "s"
COMPANIES = 12

QUERY = """PREFIX : <http://example.org/>
SELECT ?c ?p1 ?p2 ?p3 {within} FROM STREAM S1 <http://example.org/s> PARTITION BY ?c
WHERE {{ SEQ(A {first} B {second} C)
  DEFINE GPM A ON S1 {{ ?c :price ?p1 . ?c :volume ?v1 }}
  DEFINE GPM B ON S1 {{ ?c :price ?p2 . ?c :volume ?v2 FILTER(?p2 > ?p1) }}
  DEFINE GPM C ON S1 {{ ?c :price ?p3 . ?c :volume ?v3 FILTER(?p3 < ?p2) }} }}"""
STRICT = QUERY.format(within="WITHIN 40", first=",", second=",")
NEXT = QUERY.format(within="WITHIN 30", first=";", second=";")
MIXED = QUERY.format(within="", first=";", second=",")


def _company(t: int, k: int) -> ox.NamedNode:
    return ox.NamedNode(f"{EX}c{(t * 5 + k * 7) % COMPANIES}")


def _ticks(count: int) -> list[StreamElement]:
    """Element t at time t: one company's price and volume, and at every third instant a
    second company's too (the element binds two partition values, often of two buckets)."""
    price, volume = ox.NamedNode(EX + "price"), ox.NamedNode(EX + "volume")
    elements = []
    for t in range(count):
        triples = []
        for k in range(1 if t % 3 else 2):
            c = _company(t, k)
            triples += [ox.Triple(c, price, ox.Literal((t * 13 + k * 5) % 17)),
                        ox.Triple(c, volume, ox.Literal(t % 4))]  # fmt: skip
        elements.append(StreamElement(S, f"{EX}g{t}", t, t, tuple(triples)))
    return elements


@pytest.fixture
def columnar(monkeypatch: pytest.MonkeyPatch) -> list[PartitionedSequence]:
    """The columnar core wherever it covers a query; the sequences registered with
    `owns` (the buckets') are collected."""
    monkeypatch.setenv("SEPIA_ENGINE_PATH", "columnar")
    made: list[PartitionedSequence] = []
    register = Session.register

    def collected(self, query, name="query", *, owns=None):
        engine = register(self, query, name, owns=owns)
        if owns is not None:
            made.append(engine)
        return engine

    monkeypatch.setattr(Session, "register", collected)
    return made


@pytest.mark.parametrize("text", [STRICT, NEXT, MIXED])
@pytest.mark.parametrize(("buckets", "batch"), [(3, 7), (4, 25)])
def test_buckets_on_columns_give_the_local_and_the_reference_answer(
    columnar: list[PartitionedSequence], text: str, buckets: int, batch: int
) -> None:
    streams = {S: _ticks(150)}
    query = parse_query(text)
    local = [jsonl_line(r, TimeKind.ABSTRACT) for r in run([("q", query)], streams)]
    reference = [jsonl_line(r, TimeKind.ABSTRACT) for r in evaluate(query, streams, name="q")]
    assert len(local) > 20
    assert evaluations(local) == evaluations(reference)
    got = drive([RunQuery("q", query, 0)], streams, batch_size=batch, buckets=buckets)
    assert got == local
    assert columnar and all(isinstance(e, PartitionedSequence) for e in columnar)
    restored = drive([RunQuery("q", query, 0)], streams, batch_size=batch, buckets=buckets,
                     forget=True)  # fmt: skip
    assert restored == local


def test_an_element_of_two_buckets_steps_only_the_owned_value_in_each() -> None:
    """The route stage sends an element binding c0 and c7 to both values' buckets (when
    they differ); each bucket's engine then makes c0's runs only where c0 is its own."""
    query = parse_query(MIXED)
    spec = job_spec(units_of([("q", query)]), None, streams=(S,), buckets=4)
    both = StreamElement(S, EX + "g", 1, 1, tuple(
        ox.Triple(ox.NamedNode(EX + c), ox.NamedNode(EX + p), ox.Literal(3))
        for c in ("c0", "c7") for p in ("price", "volume")
    ))  # fmt: skip
    keys = [key for _, key, _ in routed_rows(spec, [element_row(both, 0)])]
    wanted = {bucket_of(ox.NamedNode(EX + c), 4) for c in ("c0", "c7")}
    assert {parse_bucket_key(k)[0] for k in keys} == wanted
    for key in keys:
        bucket, _ = parse_bucket_key(key)
        session = Session()
        engine = session.register(query, "q", owns=lambda v, b=bucket: bucket_of(v, 4) == b)
        assert isinstance(engine, PartitionedSequence)
        session.push(both)
        session.flush()
        waiting = engine.runs[1]
        assert waiting is not None
        owned = {str(session.dictionary.decode(int(c))) for c in waiting.columns[engine.slot]}
        assert owned == {f"<{EX}{c}>" for c in ("c0", "c7")
                         if bucket_of(ox.NamedNode(EX + c), 4) == bucket}  # fmt: skip


def test_columnar_buckets_get_no_stand_ins_and_row_buckets_do(monkeypatch) -> None:
    """Stand-ins tell a row engine's partitions of the instants of the others (WITHIN
    deadlines); a columnar bucket steps runs by its own partitions' events only."""
    rows = [element_row(e, n) for n, e in enumerate(_ticks(30))]
    spec = job_spec(units_of([("q", parse_query(STRICT))]), None, streams=(S,), buckets=4)
    for path, stand_ins in (("columnar", False), ("rows", True)):
        monkeypatch.setenv("SEPIA_ENGINE_PATH", path)
        routed = list(routed_rows(spec, rows))
        assert any(row[3] == STAND_INS for _, _, row in routed) is stand_ins, path
        assert sum(row[3] != STAND_INS for _, _, row in routed) == 40  # 30, 10 of them twice
        monkeypatch.setenv("SEPIA_ENGINE_PATH", "rows")
        assert isinstance(Session().register(STRICT, owns=lambda v: True), PartitionedQuery)


def test_owned_keys_ask_once_per_id_and_forget_with_the_dictionary() -> None:
    codec = Codec()
    ids = [codec.encode(ox.NamedNode(f"{EX}c{n}")) for n in range(6)]
    asked: list[str] = []

    def owns(term: ox.NamedNode) -> bool:
        asked.append(term.value)
        return term.value.endswith(("c1", "c4"))

    keys = OwnedKeys(owns, codec)
    mask = keys.mask(np.array([ids[4], ids[0], ids[4], ids[1], ids[0]], dtype=np.int64))
    assert mask.tolist() == [True, False, True, True, False]
    assert keys.mask(np.array([ids[1], ids[0], ids[5]], dtype=np.int64)).tolist() == [
        True, False, False]  # fmt: skip
    assert sorted(asked) == [f"{EX}c{n}" for n in (0, 1, 4, 5)]  # each id once
    codec.forget({ids[0], ids[1]})
    assert keys.known.keys() == {ids[4], ids[5]}


def test_a_columnar_steps_state_changes_in_the_parts_of_the_partitions_it_touched(
    columnar: list[PartitionedSequence],
) -> None:
    """The runs are stored one part per partition value: an event of one company rewrites
    that company's runs and the clock, not every company's."""
    session = Session()
    engine = session.register(MIXED, "q")
    assert isinstance(engine, PartitionedSequence)
    ticks = _ticks(41)
    for element in ticks[:40]:
        session.push(element)
    session.watermark(39)
    before, _ = parts(engine, {})
    session.push(ticks[40])  # one company's price and volume (t = 40)
    session.flush()
    after, written = parts(engine, before)
    changed = set(written)
    company = session.dictionary.encode(_company(40, 0))
    assert changed == {"clock", f"runs{PART}{company}"}
    assert sum(name.startswith(f"runs{PART}") for name in after) == COMPANIES
