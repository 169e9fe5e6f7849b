"""Generators: same seed, same bytes; the files parse and hold what the manifest says."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyoxigraph as ox
import pytest

from sepia.bench.streamfile import parse_quads
from sepia.io.streams import read_stream
from sepia.workloads import WORKLOADS, generate
from sepia.workloads.manifest import Manifest

TINY = 120
PROV = "http://www.w3.org/ns/prov#"
END_PREDICATES = {PROV + "generatedAtTime", PROV + "endedAtTime"}


def _digests(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("workload_id", ["W1", "W5", "W9", "triples"])
@pytest.mark.parametrize("compress", [False, True])
def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path, workload_id: str,
                                                     compress: bool) -> None:
    for folder, seed in (("a", 3), ("b", 3), ("c", 4)):
        generate(workload_id, 2000, seed, tmp_path / folder, compress)
    first, again, other = (_digests(tmp_path / folder) for folder in "abc")
    assert first == again
    streams = [name for name in first if name.startswith("streams/")]
    assert streams and all(first[name] != other[name] for name in streams)


@pytest.mark.parametrize("workload_id", list(WORKLOADS))
def test_files_parse_with_the_manifest_counts(tmp_path: Path, workload_id: str) -> None:
    manifest = generate(workload_id, TINY, 1, tmp_path)
    assert Manifest.load(tmp_path) == manifest
    for stream in manifest.streams:
        quads = list(parse_quads(tmp_path / stream.path))
        named = [q for q in quads if not isinstance(q.graph_name, ox.DefaultGraph)]
        stamps = [q for q in quads if isinstance(q.graph_name, ox.DefaultGraph)
                  and q.predicate.value in END_PREDICATES]
        assert (len(stamps), len(named)) == (stream.elements, stream.triples)
        assert len(quads) == stream.quads
        times = [e.time for e in read_stream(tmp_path / stream.path, stream.name)]
        assert times == sorted(times)  # io.md: non-decreasing time order
    for background in manifest.background:
        assert len(list(parse_quads(tmp_path / background.path))) == background.triples
    for variant in manifest.variants:
        assert variant.query is None or (tmp_path / variant.query).read_text().strip()
    assert manifest.elements >= TINY or workload_id == "W8"  # W8: whole days of 110 closes


def test_scale_counts_elements(tmp_path: Path) -> None:
    manifest = generate("W4", 500, 1, tmp_path)
    assert (manifest.elements, manifest.triples) == (500, 2500)  # 5 triples per trade
    assert [v.name for v in manifest.variants] == [
        "v-shape-sc", "v-shape-stn", "head-shoulders-sc", "head-shoulders-stn"]


def test_triples_workload_writes_one_triple_per_element_in_both_formats(tmp_path: Path) -> None:
    manifest = generate("triples", 1000, 1, tmp_path, compress=True)
    trig, nquads = manifest.streams
    assert (trig.elements, trig.triples, nquads.triples) == (1000, 1000, 1000)
    assert nquads.path.endswith(".nq.gz")
    trig_triples = {str(t) for e in read_stream(tmp_path / trig.path, "t") for t in e.triples}
    nq_triples = {str(t) for e in read_stream(tmp_path / nquads.path, "n") for t in e.triples}
    assert trig_triples == nq_triples


def test_w10_backgrounds_grow_tenfold(tmp_path: Path) -> None:
    manifest = generate("W10", 200, 1, tmp_path)
    sizes = [b.triples for b in manifest.background]
    assert [v.x for v in manifest.variants] == [200.0, 2000.0, 20000.0]
    assert all(abs(size - x) <= 4 for size, x in zip(sizes[1:], (2000, 20000), strict=True))


@pytest.mark.parametrize("workload_id", [w for w in WORKLOADS if w != "triples"])
def test_queries_parse_with_the_project_grammar(tmp_path: Path, workload_id: str) -> None:
    parser = pytest.importorskip("sepia.lang.parser", reason="the query parser is not built yet")
    manifest = generate(workload_id, TINY, 1, tmp_path)
    for variant in manifest.variants:
        assert variant.query is not None
        parser.parse_tree((tmp_path / variant.query).read_text(), source=variant.query)


def test_w12_prices_every_company_once_a_minute(tmp_path: Path) -> None:
    """W12's feed: minute k holds each of the 110 companies' prices once, at distinct
    instants, so a 60-minute WITHIN spans 6,600 trades whatever the input's length (W4's
    dense stream puts 10,000 trades in about 3 minutes)."""
    manifest = generate("W12", 110 * 3 + 5, 2, tmp_path)
    (stream,) = manifest.streams
    elements = list(read_stream(tmp_path / stream.path, stream.name))
    epoch = elements[0].time - elements[0].time % 60_000
    by_minute: dict[int, list[str]] = {}
    for element in elements:
        (subject,) = {t.subject.value for t in element.triples}
        by_minute.setdefault((element.time - epoch) // 60_000, []).append(subject)
    assert [len(by_minute[k]) for k in sorted(by_minute)] == [110, 110, 110, 5]
    assert all(len(set(subjects)) == len(subjects) for subjects in by_minute.values())
    times = [e.time for e in elements]
    assert len(set(times)) == len(times) and times == sorted(times)


def test_w13_gives_w3_s_trades_on_their_companies(tmp_path: Path) -> None:
    """W13's element n is W3's: the same graph and time, its price and volume given on
    W3's company of trade n; its query is W3's reading them so, which the plan splits by
    ?company."""
    from sepia.engine.plan.split import Split, split_of
    from sepia.lang import parse_query

    pairs = []
    for workload_id in ("W3", "W13"):
        manifest = generate(workload_id, 500, 5, tmp_path / workload_id)
        (stream,) = manifest.streams
        pairs.append(list(read_stream(tmp_path / workload_id / stream.path, stream.name)))
    st = "http://stockmarket.org/trade#"
    for trade, given in zip(*pairs, strict=True):
        assert (trade.graph, trade.time) == (given.graph, given.time)
        values = {t.predicate.value: t.object for t in trade.triples}
        assert {(t.subject, t.predicate.value, t.object) for t in given.triples} == {
            (values[st + "company"], st + p, values[st + p]) for p in ("price", "volume")
        }
    (variant,) = manifest.variants
    query = parse_query((tmp_path / "W13" / variant.query).read_text())
    found = split_of(query)
    assert isinstance(found, Split) and found.variable.value == "company"
