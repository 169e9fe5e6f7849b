"""The peers' inputs and queries, without the peers: events as Flink rows (counts and values
against hand-written elements), MATCH_RECOGNIZE and rsp-js query texts derived by hand from
the workloads' queries, and what each peer declines to run."""

from __future__ import annotations

from pathlib import Path

import pytest

from sepia.bench.systems import flink, rspjs
from sepia.workloads import WORKLOADS, generate
from sepia.workloads.manifest import Manifest, StreamFile, Variant
from sepia.workloads.rdfout import EPOCH_MS, DatasetWriter, decimal, integer, iri
from sepia.workloads.stocks import PRED


def _tiny_stocks(out: Path) -> Manifest:
    """Three trades of two companies, written as the W4 generator writes them."""
    data = DatasetWriter(out, "W4", 3, 1, compress=False)
    stream = data.stream("S1", "http://stockmarket.org/stocks", "stocks.trig")
    for time, company, price, volume in ((5, "c1", 10.5, 100), (9, "c2", 7.25, 200),
                                         (12, "c1", 11.0, 300)):
        subject = iri(f"http://stockmarket.org/company/{company}")
        stream.element(iri(f"http://stockmarket.org/event/e{time}"), [
            (subject, iri(PRED + "price"), decimal(price)),
            (subject, iri(PRED + "volume"), integer(volume)),
        ], EPOCH_MS + time)
    return data.finish()


def test_stock_rows_are_the_elements(tmp_path: Path) -> None:
    manifest = _tiny_stocks(tmp_path)
    company = "http://stockmarket.org/company/"
    assert list(flink.stock_rows(tmp_path, manifest)) == [
        (EPOCH_MS + 5, company + "c1", "10.50", 100),
        (EPOCH_MS + 9, company + "c2", "7.25", 200),
        (EPOCH_MS + 12, company + "c1", "11.00", 300),
    ]
    written = flink.write_csv(tmp_path / "rows.csv", flink.stock_rows(tmp_path, manifest))
    assert written == 3
    second = (tmp_path / "rows.csv").read_text().splitlines()[1]
    assert second == f"{EPOCH_MS + 9},{company}c2,7.25,200"


@pytest.fixture(scope="module")
def w6(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Manifest]:
    out = tmp_path_factory.mktemp("w6")
    return out, generate("W6", 300, 3, out)


def test_card_rows_are_every_transaction_then_one_punctuation_per_card(
        w6: tuple[Path, Manifest]) -> None:
    data, manifest = w6
    rows = list(flink.card_rows(data, manifest))
    events = [row for row in rows if not row[3]]
    punctuation = [row for row in rows if row[3]]
    assert len(events) == manifest.elements == 300
    assert {row[1] for row in punctuation} == {row[1] for row in events}
    assert len(punctuation) == len({row[1] for row in events})
    assert all(row[0] == events[-1][0] + 1 for row in punctuation)
    assert [row[0] for row in events] == sorted(row[0] for row in events)


def test_holder_rows_pair_each_card_of_the_kb(w6: tuple[Path, Manifest]) -> None:
    data, manifest = w6
    rows = list(flink.holder_rows(data, manifest.variants[0]))
    assert len(rows) == 50  # max(50, 300 // 30) cards, one holder and one address each
    card, name, address = rows[7]
    assert (name, address) == (f"Holder {card.rsplit('id', 1)[1]}",
                               f"{card.rsplit('id', 1)[1]} Main Road")


def test_price_rows_are_one_per_price_statement(tmp_path: Path) -> None:
    manifest = generate("W8", 330, 5, tmp_path)
    predicate = manifest.variants[0].params["predicate"]
    rows = list(flink.price_rows(tmp_path, manifest, predicate))
    assert len(rows) == manifest.elements == 330  # 3 days x 110 companies
    assert manifest.triples == 660  # each close comes with its company's type, not a row
    assert len({row[1] for row in rows}) == 110


def test_spaseq_v_shape_skip_till_next_as_match_recognize() -> None:
    sql = flink.spaseq_sql("v-shape", ";", 3_600_000)
    assert "PATTERN (A NOT_B* B NOT_C* C) WITHIN INTERVAL '3600.001' SECOND(4, 3)" in sql
    assert ("DEFINE B AS B.price > A.price, NOT_B AS NOT (NOT_B.price > A.price), "
            "C AS C.price < B.price, NOT_C AS NOT (NOT_C.price < B.price)") in sql
    assert "PARTITION BY company ORDER BY rowtime" in sql
    assert "AFTER MATCH SKIP TO NEXT ROW" in sql


def test_spaseq_head_and_shoulders_strict_as_match_recognize() -> None:
    sql = flink.spaseq_sql("head-shoulders", ",", 60_000)
    assert "PATTERN (A B C D E F G) WITHIN INTERVAL '60.001' SECOND(2, 3)" in sql
    assert "E AS E.price < D.price AND E.price > C.price" in sql
    assert "G AS G.price < F.price AND G.price > E.price" in sql
    assert "NOT_" not in sql


def test_rspjs_query_for_w3_wraps_the_merged_window() -> None:
    trades = StreamFile("trades", "http://stockmarket.org/trades", "trades.trig", 0, 0, 0)
    manifest = Manifest("W3", 1, 1, (trades,), (), ())
    params = {"windows": {"w": {"stream": "trades", "width": 40_000, "slide": 10_000, "t0": 0}},
              "merge_windows": True,
              "sparql": "PREFIX st: <http://s/>\nSELECT (COUNT(*) AS ?n)\nWHERE { ?t st:p ?p . }"}
    variant = Variant("w3", None, params=params)
    assert rspjs.rspjs_query(manifest, variant) == (
        "PREFIX st: <http://s/>\n"
        "REGISTER RStream <urn:sepia:bench:rspjs> AS\n"
        "FROM NAMED WINDOW <urn:sepia:window:w> ON STREAM <http://stockmarket.org/trades> "
        "[RANGE 40000 STEP 10000]\n"
        "SELECT (COUNT(*) AS ?n)\n"
        "WHERE { GRAPH <urn:sepia:window:w> { ?t st:p ?p . } }\n")


def test_peers_decline_what_they_cannot_express(tmp_path: Path) -> None:
    w2 = _variant({"report": "content-change", "operator": "istream", "windows": {}})
    assert "content-change" in rspjs.RspJs().cannot_express(WORKLOADS["W2"], w2)
    assert "no event patterns" in rspjs.RspJs().cannot_express(WORKLOADS["W4"], w2)
    rdfs = _variant({"entailment": "rdfs"})
    assert "RDFS" in flink.Flink().cannot_express(WORKLOADS["W8"], rdfs)
    assert flink.Flink().cannot_express(WORKLOADS["W8"], _variant({})) is None
    assert "W4, W6, W8 only" in flink.Flink().cannot_express(WORKLOADS["W5"], _variant({}))


def test_peers_say_how_to_install_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEPIA_BENCH_PEERS", str(tmp_path))
    assert "install-bench-peers" in flink.Flink().unavailable()
    reason = rspjs.RspJs().unavailable()
    assert "install-bench-peers" in reason or "Node.js" in reason



def _variant(params: dict[str, object]) -> Variant:
    return Variant("v", None, params=params)
