"""The peers themselves on tiny generated workloads, against the naive baseline's count on
the same data (skipped when scripts/install-bench-peers has not installed the peer). Flink
starts a JVM per run (~10 s): one Flink run is in the default suite, the others are slow."""

from __future__ import annotations

import time
from decimal import Decimal
from pathlib import Path

import pytest

from sepia.bench.systems import flink, naive_events, rspjs
from sepia.bench.systems.naive_windows import run_windows
from sepia.workloads import generate
from sepia.workloads.manifest import Manifest

LATER = 300.0
RSPJS, FLINK = rspjs.RspJs(), flink.Flink()
needs_rspjs = pytest.mark.skipif(RSPJS.unavailable() is not None,
                                 reason=f"rsp-js peer: {RSPJS.unavailable()}")
needs_flink = pytest.mark.skipif(FLINK.unavailable() is not None,
                                 reason=f"Flink peer: {FLINK.unavailable()}")


def _deadline() -> float:
    return time.perf_counter() + LATER


@needs_rspjs
def test_rspjs_single_window_aggregate_equals_naive(tmp_path: Path) -> None:
    """W3 has one window and gaps far below its slide, so rsp-js's [o, c) windows reported
    at the next arrival (plus end-of-input punctuation) give the naive baseline's rows."""
    manifest = generate("W3", 1500, 11, tmp_path)
    variant = manifest.variants[0]
    peer = RSPJS.run(tmp_path, manifest, variant, _deadline())
    naive = run_windows(tmp_path, manifest, variant, _deadline())
    assert (peer.elements, peer.triples) == (manifest.elements, manifest.triples)
    assert peer.results == naive.results > 0
    assert len(peer.latencies_ms) == peer.results and peer.complete
    assert peer.peer_rss_mib is not None and peer.peer_rss_mib > 30  # Node alone is ~40 MiB


@needs_rspjs
def test_rspjs_reads_both_streams_of_w1(tmp_path: Path) -> None:
    """W1's rows differ from RSP-QL's by design (see systems/rspjs.py); the input is exact."""
    manifest = generate("W1", 1500, 11, tmp_path)
    peer = RSPJS.run(tmp_path, manifest, manifest.variants[0], _deadline())
    assert (peer.elements, peer.triples) == (manifest.elements, manifest.triples)
    assert peer.elements > 1500  # the coupons too
    assert peer.results > 0


@needs_flink
def test_flink_big_after_small_iterations_equal_naive(tmp_path: Path) -> None:
    manifest = generate("W6", 1500, 3, tmp_path)
    variant = manifest.variants[0]
    peer = FLINK.run(tmp_path, manifest, variant, _deadline())
    naive = naive_events.credit_card(tmp_path, manifest, variant, _deadline())
    assert peer.results == naive.results > 0
    assert peer.peer_rss_mib is not None and peer.peer_rss_mib > 200  # PyFlink and a JVM


@needs_flink
@pytest.mark.slow
@pytest.mark.parametrize("name", ["v-shape-sc", "v-shape-stn", "head-shoulders-stn"])
def test_flink_spaseq_stock_patterns_equal_naive(tmp_path: Path, name: str) -> None:
    manifest = generate("W4", 2000, 5, tmp_path)
    variant = manifest.variant(name)
    peer = FLINK.run(tmp_path, manifest, variant, _deadline())
    naive = naive_events.stocks(tmp_path, manifest, variant, _deadline())
    assert peer.results == naive.results > 0


def _drop_then_rise_starts(data: Path, manifest: Manifest) -> int:
    """Price events that start at least one EP-SPARQL (1) match: p2 < 0.7 p1 later, then
    p3 > 1.05 p1 later still, the last less than 30 days after the first (nested loops)."""
    params = manifest.variants[0].params
    rows: dict[str, list[tuple[int, Decimal]]] = {}
    for ts, company, price in flink.price_rows(data, manifest, params["predicate"]):
        rows.setdefault(company, []).append((ts, Decimal(price)))
    drop, rise, duration = Decimal("0.7"), Decimal("1.05"), params["duration_ms"]
    starts = 0
    for prices in rows.values():
        for i, (t1, p1) in enumerate(prices):
            starts += any(
                p2 < p1 * drop and p3 > p1 * rise and t3 - t1 < duration
                for j, (_, p2) in enumerate(prices[i + 1:], i + 1)
                for t3, p3 in prices[j + 1:])
    return starts


@needs_flink
@pytest.mark.slow
def test_flink_drop_then_rise_counts_start_events(tmp_path: Path) -> None:
    manifest = generate("W8", 110 * 60, 2, tmp_path)
    peer = FLINK.run(tmp_path, manifest, manifest.variants[0], _deadline())
    assert peer.results == _drop_then_rise_starts(tmp_path, manifest) > 0
