"""The route stage reads a stream file as columns (`job._column_batches`) where one unit
runs on the columnar core, on one key, split or spread over buckets: each piece by the
columnar reader (into the router's dictionary, or the task's for one key or a split),
each key's share packed from the columns.

Checked against rows worked out by hand from the file's text: each element goes to the
bucket of its company (on one key: to the key), once, with its seq (file order across
pieces), graph, time in epoch ms, and the term text of the triples the query reads
only (a padded decimal in its canonical form); a piece that leaves the reader's shape,
from its start or in its middle, is read on by the row reader and gives the same rows;
and a Spark run gives `--engine local`'s lines."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pyarrow as pa
import pyoxigraph as ox
import pytest

from sepia.engine.codec import Codec
from sepia.engine.columnar import frontend
from sepia.engine.query.partition import bucket_of
from sepia.io.streams import read_stream
from sepia.lang import parse_query
from sepia.rdf.results import jsonl_line
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import NamedQuery
from sepia.runtime.local import run
from sepia.runtime.spark import column_routes, ingest, job, splits
from sepia.runtime.spark.element_batches import unpack
from sepia.runtime.spark.elements import PACKED_TERMS
from sepia.runtime.spark.host import job_spec
from sepia.runtime.spark.ingest import IngestOptions
from sepia.runtime.spark.job import route_files
from sepia.runtime.spark.run import SparkRunOptions, run_on_spark
from sepia.runtime.spark.units import bucket_key, units_of

from ..evaluations import evaluations

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
S = EX + "stocks"
ELEMENTS = 200
NEW_YEAR = 1_767_225_600_000
"""2026-01-01T00:00:00Z in epoch ms."""
QUERY = f"""PREFIX : <{EX}>
SELECT ?company ?p1 ?p2 ?p3 WITHIN 2 SECONDS FROM STREAM S1 <{S}>
PARTITION BY ?company
WHERE {{ SEQ(A ; B ; C)
  DEFINE GPM A ON S1 {{ ?company :price ?p1 . ?company :volume ?v1 }}
  DEFINE GPM B ON S1 {{ ?company :price ?p2 . ?company :volume ?v2 FILTER(?p2 < ?p1) }}
  DEFINE GPM C ON S1 {{ ?company :price ?p3 . ?company :volume ?v3 FILTER(?p3 > ?p2) }} }}"""
ONE_KEY = QUERY.replace("PARTITION BY ?company\n", "")
SPLIT = f"""PREFIX : <{EX}>
SELECT ?company (AVG(?p) AS ?average) (COUNT(?v) AS ?n)
FROM STREAM <{S}> [RANGE 2s STEP 1s]
WHERE {{ ?company :price ?p . ?company :volume ?v }} GROUP BY ?company"""
"""Split by ?company (`sepia.engine.plan.split`): every triple pattern binds it."""


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEPIA_ENGINE_PATH", "columnar")
    monkeypatch.setattr(splits, "PIECE_BYTES", 5_000)
    monkeypatch.setattr(splits, "WINDOW", 4_000)


def _price(n: int) -> str:
    return f"{10 + n % 7}.{n % 9 + 1}"


def _stocks(path: Path, odd: int | None = None) -> Path:
    """The generators' layout: element n at 100 n ms, company c(n mod 5) with a padded
    price ("12.30"), a volume and a sector; element `odd` writes its sector's predicate
    as a prefixed name, which the columnar reader does not take."""
    lines = [f"@prefix prov: <http://www.w3.org/ns/prov#> .\n@prefix ex: <{EX}> .\n"]
    for n in range(ELEMENTS):
        graph, company = f"<{EX}e{n}>", f"<{EX}c{n % 5}>"
        sector = "ex:sector" if n == odd else f"<{EX}sector>"
        stamp = f"2026-01-01T00:00:{n // 10:02d}.{n % 10 * 100:03d}Z"
        lines.append(
            f'{graph} prov:generatedAtTime "{stamp}"^^<{XSD}dateTime> .\n'
            f'{graph} {{ {company} <{EX}price> "{_price(n)}0"^^<{XSD}decimal> . '
            f'{company} <{EX}volume> "{100 * n}"^^<{XSD}integer> . '
            f"{company} {sector} <{EX}s{n % 3}> . }}\n"
        )
    path.write_text("".join(lines))
    return path


def _wanted(path: Path, buckets: int | None, seqs: list[int]) -> set[tuple]:
    """Each element's (bucket, row), by hand: the price and volume triples only; None:
    one key."""
    wanted = set()
    for n, seq in zip(range(ELEMENTS), seqs, strict=True):
        company = f"<{EX}c{n % 5}>"
        text = "\x1f".join([company, f"<{EX}price>", f'"{_price(n)}"^^<{XSD}decimal>',
                            company, f"<{EX}volume>", f'"{100 * n}"^^<{XSD}integer>'])  # fmt: skip
        at = NEW_YEAR + 100 * n
        key = None
        if buckets is not None:
            key = bucket_key(bucket_of(ox.NamedNode(f"{EX}c{n % 5}"), buckets), buckets)
        wanted.add((key, (S, str(path), seq, f"{EX}e{n}", at, at,
                                                  "dateTime", text)))  # fmt: skip
    return wanted


def _routed(
    path: Path, buckets: int, query: str = QUERY
) -> tuple[set[tuple], list[str], list[int]]:
    """The (key, unpacked row) pairs the route stage gives over the file's pieces, the
    graphs of the rows it sent, and the pieces' first seq numbers."""
    spec = job_spec(units_of([("q", parse_query(query))]), None, streams=(S,), buckets=buckets)
    pieces = splits.pieces(path, 2)
    batch = pa.RecordBatch.from_pylist(
        [dict(stream=S, path=str(path), piece=p.index, begin=p.begin, end=p.end,
              header=p.header) for p in pieces], schema=splits.PIECE_SCHEMA)  # fmt: skip
    got, graphs = set(), []
    for out in route_files([batch], spec, IngestOptions()):
        for row in out.to_pylist():
            graphs.append(row["graph"])
            element = tuple(row[f] for f in ("stream", "file", "seq", "graph", "start", "end",
                                             "kind", "triples"))  # fmt: skip
            for found in unpack([element])[0]:
                assert (row["partition"], (*found[:7], str(found[7]))) not in got
                got.add((row["partition"], (*found[:7], str(found[7]))))
    return got, graphs, [p.index * splits.SEQ_STRIDE for p in pieces]


def _seqs(firsts: list[int], path: Path) -> list[int]:
    """Each element's seq: its position in its piece (its time lines counted), from the
    piece's first."""
    data = path.read_bytes()
    counts = [data[p.begin : p.end].count(b"generatedAtTime") for p in splits.pieces(path, 2)]
    return [first + k for first, count in zip(firsts, counts, strict=True) for k in range(count)]


@pytest.mark.parametrize("buckets", [2, 3])
def test_pieces_read_as_columns_give_each_bucket_its_companies_rows(tmp_path, buckets) -> None:
    path = _stocks(tmp_path / "stocks.trig")
    got, graphs, firsts = _routed(path, buckets)
    assert len(firsts) == 2  # two pieces
    assert set(graphs) == {PACKED_TERMS}  # no row per element
    assert got == _wanted(path, buckets, _seqs(firsts, path))


def test_a_one_key_unit_s_pieces_read_as_columns_give_its_key_every_row(tmp_path) -> None:
    path = _stocks(tmp_path / "stocks.trig")
    got, graphs, firsts = _routed(path, 3, ONE_KEY)
    assert set(graphs) == {PACKED_TERMS}
    assert len(graphs) == 2  # a packed row a block: one block a piece here
    assert got == _wanted(path, None, _seqs(firsts, path))


@pytest.mark.parametrize("buckets", [2, 3])
def test_a_split_unit_s_pieces_read_as_columns_give_each_bucket_its_companies_rows(
    tmp_path, buckets
) -> None:
    path = _stocks(tmp_path / "stocks.trig")
    spec = job_spec(units_of([("q", parse_query(SPLIT))]), None, streams=(S,), buckets=buckets)
    assert job.unit_split(spec, 0) is not None
    got, graphs, firsts = _routed(path, buckets, SPLIT)
    assert set(graphs) == {PACKED_TERMS}
    assert got == _wanted(path, buckets, _seqs(firsts, path))


class Emptied(Codec):
    """A task's dictionary that counts the times it was emptied."""

    times = 0

    def forget(self, dropped: set[int]) -> None:
        assert dropped == set(self.ids())
        Emptied.times += 1
        super().forget(dropped)


@pytest.mark.parametrize(("text", "module", "buckets"), [
    (ONE_KEY, job, None), (SPLIT, column_routes, 3)], ids=["one key", "split"])
def test_a_task_empties_its_dictionary_and_keeps_every_row(
    tmp_path, monkeypatch, text, module, buckets
) -> None:
    """A one-key task's dictionary (`job._one_key_rows`) and a split task's
    (`SplitRouter`), emptied after each block of more than 10 terms."""
    monkeypatch.setattr(job, "ONE_KEY_TERMS", 10)
    monkeypatch.setattr(module, "Codec", Emptied)
    monkeypatch.setattr(Emptied, "times", 0)
    monkeypatch.setattr(ingest, "named_chunks", partial(frontend.named_chunks, block=2_000))
    path = _stocks(tmp_path / "stocks.trig")
    got, graphs, firsts = _routed(path, 3, text)
    assert len(graphs) > 4  # several blocks a piece, the dictionary emptied after each
    assert Emptied.times > 4  # each block holds more than 10 terms but a piece's last
    assert got == _wanted(path, buckets, _seqs(firsts, path))


@pytest.mark.parametrize("block", [None, 2_000])
@pytest.mark.parametrize("buckets", [3, None], ids=["buckets", "one key"])
def test_a_piece_out_of_shape_is_read_on_by_the_row_reader(tmp_path, monkeypatch, block, buckets):
    """The last element out of shape: with 4 MB blocks, the whole second piece goes to
    the row reader; with 2 kB blocks, the second piece's first blocks are read as columns
    and the rest by the row reader, from the element where they stopped."""
    if block is not None:
        monkeypatch.setattr(ingest, "named_chunks", partial(frontend.named_chunks, block=block))
    path = _stocks(tmp_path / "stocks.trig", odd=ELEMENTS - 1)
    got, _, firsts = _routed(path, 3, QUERY if buckets else ONE_KEY)
    assert got == _wanted(path, buckets, _seqs(firsts, path))


@pytest.mark.spark
@pytest.mark.parametrize("text", [QUERY, ONE_KEY], ids=["buckets", "one key"])
def test_a_spark_run_reading_columns_gives_the_local_lines(spark, tmp_path, text) -> None:
    got, local = _spark_and_local(spark, tmp_path, _stocks(tmp_path / "stocks.trig"), text)
    assert len(local) > 20
    assert got == local


def _spark_and_local(spark, tmp_path: Path, path: Path, text: str) -> tuple[list[str], list[str]]:
    """The lines of a Spark run of `text` over the file (3 buckets), and of a local run."""
    out = tmp_path / "results.jsonl"
    query = parse_query(text)
    run_on_spark([NamedQuery("q", query, tmp_path)], {S: str(path)}, [],
                 SparkRunOptions(buckets=3), output=str(out), spark=spark)  # fmt: skip
    elements = {S: list(read_stream(path, S))}
    local = [jsonl_line(r, TimeKind.DATETIME) for r in run([("q", query)], elements)]
    return out.read_text().splitlines(), local


def _sparse(path: Path) -> Path:
    """The generators' layout: element n at 100 n ms, company c(n // 40) (each company's
    elements together, so each bucket goes seconds without one), every seventh element
    with the prices of two companies (sent to both their buckets)."""
    lines = ["@prefix prov: <http://www.w3.org/ns/prov#> .\n"]
    for n in range(ELEMENTS):
        graph = f"<{EX}e{n}>"
        companies = {n // 40, (n // 40 + 2) % 5} if n % 7 == 0 else {n // 40}
        triples = " ".join(
            f'<{EX}c{c}> <{EX}price> "{_price(n + c)}"^^<{XSD}decimal> . '
            f'<{EX}c{c}> <{EX}volume> "{n}"^^<{XSD}integer> .'
            for c in sorted(companies)
        )
        stamp = f"2026-01-01T00:00:{n // 10:02d}.{n % 10 * 100:03d}Z"
        lines.append(f'{graph} prov:generatedAtTime "{stamp}"^^<{XSD}dateTime> .\n'
                     f"{graph} {{ {triples} }}\n")  # fmt: skip
    path.write_text("".join(lines))
    return path


@pytest.mark.spark
def test_a_spark_run_of_a_split_unit_read_as_columns_gives_the_local_lines(
    spark, tmp_path
) -> None:
    """Buckets that go seconds without an element of theirs, and elements sent to two
    buckets: the lines are `--engine local`'s (each evaluation's rows in any order, as
    the output allows), with no stand-ins."""
    path = _sparse(tmp_path / "stocks.trig")
    got, graphs, _ = _routed(path, 3, SPLIT)
    assert set(graphs) == {PACKED_TERMS}
    assert {key for key, _ in got} == {bucket_key(b, 3) for b in range(3)}
    lines, local = _spark_and_local(spark, tmp_path, path, SPLIT)
    assert len(local) > 40
    assert evaluations(lines) == evaluations(local)


@pytest.mark.spark
def test_a_route_task_knows_the_cores_spark_gave_it(spark) -> None:
    """Inside a mapInArrow task (as the route stage's) Spark's task context is there and
    `task_cpus` is its `spark.task.cpus` (1 here), so the columnar reader cuts its text on
    the task's own thread; outside a task it is 1."""
    from pyspark import TaskContext

    def cores(batches):
        for batch in batches:
            context = TaskContext.get() is not None
            yield pa.RecordBatch.from_pydict(
                {"cpus": [ingest.task_cpus()] * batch.num_rows,
                 "context": [context] * batch.num_rows})  # fmt: skip

    found = spark.range(4, numPartitions=2).mapInArrow(cores, "cpus long, context boolean")
    assert {(row.cpus, row.context) for row in found.collect()} == {(1, True)}
    assert ingest.task_cpus() == 1
