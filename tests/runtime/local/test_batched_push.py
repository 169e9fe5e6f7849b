"""Elements given at once (``Session.push_many``: a chunk of a replayed file, a live backlog)
go into the columnar core as one batch, and give what the row engine gives element by
element: the same results in the same order, however the stream is cut into chunks.

Before, a replay of rows (files under 4 MiB, standard input, live sources) stepped the
columnar core once per instant, at a fixed cost per step: W4's v-shape on 3,000 elements
ran ~8x slower than the row engine (48 s against 10 s at load ~24; now 6 s)."""

from __future__ import annotations

import queue
from itertools import cycle
from pathlib import Path

import pytest

from sepia.io.background import load_background
from sepia.io.streams import read_stream
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement
from sepia.runtime.local import Session
from sepia.runtime.local.feed import Driver, Feed, _arrived
from sepia.workloads import generate
from sepia.workloads.manifest import Manifest

CUTS = (1, 7, 300, 2, 45, 1, 1, 128)
"""Chunk sizes, cycled: single elements, cuts inside runs, a chunk of many instants."""


@pytest.fixture(scope="module")
def w4(tmp_path_factory) -> Path:
    """W4 (stock prices, PARTITION BY ?company, v-shape and head-and-shoulders) at 900
    elements: enough for matches under both contiguities."""
    out = tmp_path_factory.mktemp("w4")
    generate("W4", 900, 7, out)
    return out


def _session(w4: Path, variant: str) -> Session:
    manifest = Manifest.load(w4)
    chosen = next(v for v in manifest.variants if v.name == variant)
    graphs = manifest.background_of(chosen)
    session = Session(load_background([(g, w4 / p) for g, p in graphs]))
    assert chosen.query is not None
    session.register((w4 / chosen.query).read_text(encoding="utf-8"), variant)
    return session


def _elements(w4: Path) -> list[StreamElement]:
    stream = Manifest.load(w4).streams[0]
    return list(read_stream(w4 / stream.path, stream.iri))


def _text(results: list[Result]) -> list[str]:
    return [f"{r.t} {sorted((k, str(v)) for k, v in (r.binding or {}).items())}" for r in results]


def _by_rows(w4: Path, variant: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The row engine's results, pushed element by element."""
    with monkeypatch.context() as patched:
        patched.setenv("SEPIA_ENGINE_PATH", "rows")
        session = _session(w4, variant)
    assert not session.columnar
    results = [r for e in _elements(w4) for r in session.push(e)] + session.flush()
    return _text(results)


@pytest.mark.parametrize("variant", ["v-shape-sc", "v-shape-stn", "head-shoulders-stn"])
def test_chunks_on_the_columnar_core_give_the_row_engines_results(w4, variant, monkeypatch):
    expected = _by_rows(w4, variant, monkeypatch)
    session = _session(w4, variant)
    assert session.columnar
    elements, results, at = _elements(w4), [], 0
    for size in cycle(CUTS):
        if at >= len(elements):
            break
        results += session.push_many(elements[at:at + size])
        at += size
    results += session.flush()
    assert _text(results) == expected
    assert expected  # matches to compare (head-and-shoulders: one at this scale)


def test_elements_out_of_time_order_are_refused(w4):
    session = _session(w4, "v-shape-sc")
    first, second, third = _elements(w4)[:3]
    with pytest.raises(ValueError, match=f"element at {first.time} arrived after one at "
                                         f"{second.time}"):
        session.push_many([second, first])
    session.push_many([first, second])  # the second waits: more may come at its time
    with pytest.raises(ValueError, match=f"arrived after one at {second.time}"):
        session.push_many([first, third])


def test_a_live_backlog_is_taken_at_once_and_gives_the_same_results(w4, monkeypatch):
    """The live loop takes whatever has arrived (up to a chunk) in one step; an empty queue
    is a tick after the poll interval."""
    arrivals: queue.Queue = queue.Queue()
    assert _arrived(arrivals, 0.01) == [("tick", "", None)]
    for n in range(3):
        arrivals.put(("element", "s", n))
    assert [value for _, _, value in _arrived(arrivals, 0.01)] == [0, 1, 2]

    expected = _by_rows(w4, "v-shape-sc", monkeypatch)
    session, written = _session(w4, "v-shape-sc"), []
    stream = Manifest.load(w4).streams[0].iri
    driver = Driver(session, written.extend, Feed())
    driver.live({stream: [(e, "-") for e in _elements(w4)]})
    assert _text(written) == expected


def test_an_element_joins_the_instant_a_batch_left_waiting(tmp_path, monkeypatch):
    """A single element stamped with the last time of the batch before it (three sensors
    reporting at the same instants, a backlog taken at once then one element alone) joins
    that instant, as element by element: it was refused as out of order."""
    generate("W7", 300, 7, tmp_path)
    manifest = Manifest.load(tmp_path)
    variant = manifest.variants[0]
    assert variant.query is not None
    query = (tmp_path / variant.query).read_text(encoding="utf-8")
    streams = [read_stream(tmp_path / s.path, s.iri) for s in manifest.streams]
    elements = sorted((e for s in streams for e in s), key=lambda e: e.time)

    def session() -> Session:
        made = Session()
        made.register(query, variant.name)
        return made

    with monkeypatch.context() as patched:
        patched.setenv("SEPIA_ENGINE_PATH", "rows")
        rows = session()
    expected = _text([r for e in elements for r in rows.push(e)] + rows.flush())
    columns = session()
    assert columns.columnar
    first, second, third = elements[:3]
    assert first.time == second.time == third.time  # the sensors report together
    results = columns.push_many([first, second]) + columns.push(third)
    results += [r for e in elements[3:] for r in columns.push(e)] + columns.flush()
    assert _text(results) == expected
    assert expected
