"""The columnar core (``sepia.engine.columnar``) against the reference evaluator and the
row engine: the batch path with batches cut anywhere, the vector join against a nested
loop, windows' state rows against the row engine's, and the columnar reader against the
row reader on the same files."""

from __future__ import annotations

import gzip
import tempfile
from collections import Counter
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sepia.engine.codec import Codec
from sepia.engine.columnar import ColumnarQuery, ColumnBatch
from sepia.engine.columnar.frontend import read_columns
from sepia.engine.columnar.tables import Table, join, join_pairs
from sepia.engine.columnar.windows import ColumnWindow
from sepia.engine.s2r.windows import WindowOperator, WindowState
from sepia.io.streams import read_stream
from sepia.lang import parse_query
from sepia.rdf.stream import StreamSet
from sepia.rdf.time import TimeKind
from sepia.runtime.local import Session
from sepia.semantics import evaluate
from sepia.workloads import generate

from ..generators import queries, streams
from ..support import background, engine_path

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

W1_LIKE = """
PREFIX : <http://example.org/>
REGISTER RSTREAM :out AS
SELECT ?x ?y ?z
FROM NAMED WINDOW :w1 ON :s1 [RANGE 10 STEP 5]
FROM NAMED WINDOW :w2 ON :s2 [RANGE 5 STEP 5]
REPORT ON WINDOW CLOSE OF :w2 AND NON EMPTY OF :w2
WHERE { WINDOW :w1 { ?x :p ?y } WINDOW :w2 { ?y :q ?z } ?y :r ?w }
"""


def _session(text: str) -> Session:
    session = Session(background())
    session.register(parse_query(text), "q")
    return session


@settings(max_examples=300, deadline=None, suppress_health_check=CHECKS)
@given(queries(), streams(), st.lists(st.integers(0, 40), max_size=4))
def test_batches_cut_anywhere_agree_with_reference(text, data, cuts):
    """``push_columns`` over the merged input cut at arbitrary elements (a cut inside a
    run of equal times included) gives the reference's answer, in time order; reports at
    arrivals included (by default those stay on the row engine, for speed only)."""
    with engine_path("columnar-always"):
        session = _session(text)
    assume(session.columnar)
    merged = list(StreamSet(data).merged())
    batch = ColumnBatch.from_elements(merged, session.dictionary)
    bounds = sorted({0, len(merged), *(c for c in cuts if c < len(merged))})
    got = [r for a, b in pairwise(bounds) for r in session.push_columns(batch.slice(a, b))]
    got += session.flush()
    expected = evaluate(parse_query(text), data, background(), name="q")
    assert Counter(got) == Counter(expected), text
    assert [r.t for r in got] == sorted(r.t for r in got)


def test_window_queries_take_the_columnar_path_and_others_do_not():
    assert isinstance(_session(W1_LIKE).queries[0], ColumnarQuery)
    optional = W1_LIKE.replace("?y :r ?w", "OPTIONAL { ?y :r ?w }")
    assert not isinstance(_session(optional).queries[0], ColumnarQuery)


def test_the_row_engine_can_be_forced(monkeypatch):
    monkeypatch.setenv("SEPIA_ENGINE_PATH", "rows")
    assert not isinstance(_session(W1_LIKE).queries[0], ColumnarQuery)


def test_predicates_read_are_the_scans_constants():
    assert _session(W1_LIKE).predicates() == frozenset(
        "http://example.org/" + p for p in "pqr"
    )
    assert _session(W1_LIKE.replace("?x :p ?y", "?x ?v ?y")).predicates() is None


ids = st.lists(st.integers(1, 4), max_size=12)


@settings(max_examples=200, deadline=None)
@given(ids, ids, ids, ids)
def test_vector_join_is_the_nested_loop_join(a1, a2, b1, b2):
    """Columns {0, 1} join columns {1, 2} on slot 1: the bag a nested loop makes."""
    n, m = min(len(a1), len(a2)), min(len(b1), len(b2))
    left = Table({0: np.array(a1[:n]), 1: np.array(a2[:n])}, n)
    right = Table({1: np.array(b1[:m]), 2: np.array(b2[:m])}, m)
    joined = join(left, right)
    expected = Counter(
        (x, y, z)
        for x, y in zip(a1[:n], a2[:n], strict=True)
        for y2, z in zip(b1[:m], b2[:m], strict=True)
        if y == y2
    )
    assert Counter(joined.rows(3)) == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=5), st.lists(st.integers(0, 4), max_size=60))
def test_join_pairs_come_in_the_nested_loops_order(left_keys, right_keys):
    """The pairs of rows with equal keys, i ascending then j ascending, whichever side is
    the smaller (the smaller one is sorted), the lists given either way round."""
    if len(left_keys) % 2:
        left_keys, right_keys = right_keys, left_keys
    left = Table({1: np.array(left_keys, dtype=np.int64)}, len(left_keys))
    right = Table({1: np.array(right_keys, dtype=np.int64)}, len(right_keys))
    li, rj = join_pairs(left, right)
    expected = [(i, j) for i, x in enumerate(left_keys) for j, y in enumerate(right_keys)
                if x == y]
    assert list(zip(li.tolist(), rj.tolist(), strict=True)) == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.lists(st.tuples(*[st.integers(1, 3)] * 3),
                                                       max_size=3)), max_size=12),
       st.integers(0, 20))
def test_column_window_state_is_the_row_window_state(arrivals, at):
    """Same elements in, same evictions: the same state rows and the same graph."""
    from sepia.algebra import dataset as ds

    operator = WindowOperator(ds.Sliding(4, 2, 0))
    rows_window, columns_window = WindowState(operator), ColumnWindow(operator)
    t = 0
    for gap, triples in arrivals:
        t += gap
        for window in (rows_window, columns_window):
            window.advance(t)
            window.insert(t, tuple(triples))
    for window in (rows_window, columns_window):
        window.advance(max(t, at))
    assert columns_window.rows() == rows_window.rows()
    graph = columns_window.graph
    assert set(zip(graph.s.tolist(), graph.p.tolist(), graph.o.tolist(), strict=True)) == set(
        rows_window.graph.triples()
    )
    restored = ColumnWindow.from_rows(operator, rows_window.rows())
    assert restored.rows() == rows_window.rows()


@pytest.fixture(scope="module")
def w4_files(tmp_path_factory) -> Path:
    """W4 (five triples per element, decimal and integer literals) at 300 elements."""
    out = tmp_path_factory.mktemp("w4")
    generate("W4", 300, 7, out)
    return out


def _same_as_row_reader(path: Path, iri: str, predicates=None) -> None:
    mine, theirs = Codec(), Codec()
    batch = read_columns(path, iri, mine, predicates)
    assert batch is not None
    elements = list(read_stream(path, iri))
    expected = ColumnBatch.from_elements(elements, theirs)
    assert batch.times.tolist() == expected.times.tolist()
    assert batch.kind is TimeKind.DATETIME is expected.kind

    def texts(b: ColumnBatch, codec: Codec) -> list[tuple]:
        return [
            (e, *(codec.decode_text(i) for i in spo))
            for e, *spo in zip(
                b.element.tolist(), b.s.tolist(), b.p.tolist(), b.o.tolist(), strict=True
            )
        ]

    wanted = texts(expected, theirs)
    if predicates is not None:
        wanted = [row for row in wanted if row[2][1:-1] in predicates]
    assert texts(batch, mine) == wanted


def test_the_columnar_reader_reads_what_the_row_reader_reads(w4_files):
    (path,) = (w4_files / "streams").glob("*.trig")
    _same_as_row_reader(path, "http://stockmarket.org/stocks")
    _same_as_row_reader(path, "http://stockmarket.org/stocks", {"http://example/price"})


def test_the_columnar_reader_leaves_other_shapes_to_the_row_reader(tmp_path, w4_files):
    (path,) = (w4_files / "streams").glob("*.trig")
    text = path.read_text()
    variants = {
        "prefixed.trig": text.replace("<http://example/price>", "prov:price"),
        "blank.trig": text.replace("<http://stockmarket.org/company/c88>", "_:c88", 1),
        "escaped.trig": text.replace('"buy"', '"b\\u0075y"', 1),
        "late.trig": text.replace("00:00:00.039Z", "00:00:00.001Z", 1),
        "integer-time.trig": text.replace(
            '"2026-01-01T00:00:00.009Z"^^xsd:dateTime', '"9"^^xsd:integer', 1),
        "bad-iri.trig": text.replace("<http://example/price>", "<http://ex ample/price>", 1),
        "offset.trig": text.replace("00:00:00.009Z", "00:00:00.009+01:00", 1),
    }
    for name, changed in variants.items():
        assert changed != text, name
        (tmp_path / name).write_text(changed)
        assert read_columns(tmp_path / name, "s", Codec()) is None, name
    (tmp_path / "s.trig.gz").write_bytes(gzip.compress(text.encode()))
    assert read_columns(tmp_path / "s.trig.gz", "s", Codec()) is None


@settings(max_examples=100, deadline=None)
@given(st.datetimes(), st.integers(0, 3))
def test_times_are_the_row_readers(moment, digits):
    """Epoch milliseconds of every dateTime the columnar reader takes: the row reader's."""
    from sepia.rdf.time import parse_datetime_ms

    lexical = moment.replace(microsecond=0).isoformat()
    if digits:
        lexical += "." + f"{moment.microsecond:06d}"[:digits]
    lexical += "Z"
    line = f'<http://e/g> <http://www.w3.org/ns/prov#generatedAtTime> "{lexical}"^^' \
           f"<http://www.w3.org/2001/XMLSchema#dateTime> .\n<http://e/g> {{ <http://e/s> " \
           f"<http://e/p> <http://e/o> . }}\n"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.trig"
        path.write_text(line)
        batch = read_columns(path, "s", Codec())
    assert batch is not None
    assert batch.times.tolist() == [parse_datetime_ms(lexical)]


def test_explain_says_which_path_the_operators_take():
    from sepia.engine import explain
    from sepia.engine.plan.planner import plan

    codec = Codec()
    shown = explain(plan(parse_query(W1_LIKE), codec), codec)
    assert "evaluation: columnar" in shown
    assert "(columnar: a mask per pattern, vector joins)" in shown
    optional = parse_query(W1_LIKE.replace("?y :r ?w", "OPTIONAL { ?y :r ?w }"))
    shown = explain(plan(optional, codec), codec)
    assert "path: rows (not the columnar core: LeftOuterJoin has no columnar form yet)" in shown
    assert "index nested loops" in shown


def test_chunks_and_the_row_reader_after_a_part_out_of_shape(tmp_path, w4_files):
    """Read 2,000 bytes at a time, a prefixed name in the 101st element: the first 100
    elements come as columns, the rest from the row reader, all of them as the row reader
    reads the whole file."""
    from sepia.engine.columnar.frontend import stream_columns

    (path,) = (w4_files / "streams").glob("*.trig")
    lines = path.read_text().split("\n")
    at = 2 + 2 * 100 + 1  # two prefix lines, then a time line and a graph line per element
    lines[at] = lines[at].replace("<http://example/price>", "prov:price", 1)
    broken = tmp_path / "broken.trig"
    broken.write_text("\n".join(lines))
    mine, theirs = Codec(), Codec()
    batches = list(stream_columns(broken, "s", mine, block=2000))
    assert len(batches) > 5
    got = ColumnBatch.merged(batches)
    expected = ColumnBatch.from_elements(list(read_stream(broken, "s")), theirs)
    assert got.times.tolist() == expected.times.tolist()
    assert [mine.decode_text(i) for i in got.o.tolist()] == [
        theirs.decode_text(i) for i in expected.o.tolist()
    ]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=5), min_size=1, max_size=3),
       st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=5), min_size=1, max_size=3))
def test_interleaved_streams_are_merged_in_time_order(first, second):
    """Two streams given in batches (gaps between times, 0: equal times) come out as one
    merged batch would: time order, equal times in stream order."""
    from sepia.engine.columnar.batch import interleaved

    def batches(name: str, gaps: list[list[int]]) -> list[ColumnBatch]:
        t, out = 0, []
        for part in gaps:
            times = []
            for gap in part:
                t += gap
                times.append(t)
            n = len(times)
            none = np.zeros(0, dtype=np.int64)
            out.append(ColumnBatch((name,), np.array(times), np.zeros(n, dtype=np.int64),
                                   np.arange(n) + 100 * len(out), none, none, none, none))
        return out

    a, b = batches("a", first), batches("b", second)
    whole = ColumnBatch.merged([ColumnBatch.merged(a), ColumnBatch.merged(b)])
    got = ColumnBatch.merged(list(interleaved([iter(a), iter(b)])))
    assert got.times.tolist() == whole.times.tolist()
    assert [got.streams[i] for i in got.stream] == [whole.streams[i] for i in whole.stream]
    assert got.graph.tolist() == whole.graph.tolist()
