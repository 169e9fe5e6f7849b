"""Shoppers and coupons (RSP-QL paper, Examples 1-10), scaled: W1 and W2.

Shoppers' phones report which shop they are near (stream ``nearby``), shop owners stream
instantaneous coupons (stream ``coupons``), and the background says who owns which shop.
W1 is the paper's Example 10 query (RSP-QL REGISTER syntax: window close + non-empty,
RStream); W2 is the same join in CQELS syntax (content change, IStream), as benchmarks.md asks.
Rates: ~40 nearby elements/s, one coupon every ~20 s, so the 5-minute window w1 holds ~12k
triples (the "10k-triple window" of the targets).
"""

from __future__ import annotations

import random

from sepia.workloads.rdfout import (
    EPOCH_MS,
    MINUTE_MS,
    RDF_TYPE,
    DatasetWriter,
    Triple,
    iri,
    string,
)

NS = "http://example.org/shops#"
SHOPS = 50
W1_WIDTH, W1_SLIDE = 5 * MINUTE_MS, MINUTE_MS
W2_WIDTH = MINUTE_MS

_BODY = """
WHERE {
  WINDOW :w1 { ?shopper :isNearby ?shop }
  WINDOW :w2 { ?shop_owner :offers ?coupon }
  ?shop_owner :owns ?shop
}
"""

RSPQL_QUERY = f"""
PREFIX : <{NS}>
REGISTER RSTREAM :offersNearby AS
SELECT ?shopper ?shop ?shop_owner ?coupon
FROM NAMED WINDOW :w1 ON :nearby [RANGE PT5M STEP PT1M]
FROM NAMED WINDOW :w2 ON :coupons [RANGE PT1M STEP PT1M]
REPORT ON WINDOW CLOSE OF :w2 AND NON EMPTY OF :w2
{_BODY}"""

CQELS_QUERY = f"""
PREFIX : <{NS}>
SELECT ?shopper ?shop ?shop_owner ?coupon
FROM NAMED WINDOW :w1 ON :nearby [RANGE PT5M]
FROM NAMED WINDOW :w2 ON :coupons [RANGE PT1M]
{_BODY}"""

# What a user without an RSP engine runs on each window snapshot (naive baseline): the
# window contents are loaded into the named graphs urn:sepia:window:<name>.
PLAIN_SPARQL = f"""
PREFIX : <{NS}>
SELECT ?shopper ?shop ?shop_owner ?coupon WHERE {{
  GRAPH <urn:sepia:window:w1> {{ ?shopper :isNearby ?shop }}
  GRAPH <urn:sepia:window:w2> {{ ?shop_owner :offers ?coupon }}
  ?shop_owner :owns ?shop
}}"""


def _shop(index: int) -> str:
    return iri(f"{NS}shop{index}")


def _owner(index: int) -> str:
    return iri(f"{NS}owner{index}")


def _background() -> list[Triple]:
    triples: list[Triple] = []
    for index in range(SHOPS):
        triples.append((_shop(index), RDF_TYPE, iri(NS + "Shop")))
        triples.append((_owner(index), iri(NS + "owns"), _shop(index)))
    return triples


def _write_streams(data: DatasetWriter, scale: int, rng: random.Random) -> None:
    """Nearby reports every 1-49 ms; a coupon every 5-35 s over the same span."""
    nearby = data.stream("nearby", NS + "nearby", "nearby.trig")
    coupons = data.stream("coupons", NS + "coupons", "coupons.trig")
    shoppers = max(100, scale // 20)
    near_pred, offers = iri(NS + "isNearby"), iri(NS + "offers")
    time = EPOCH_MS
    next_coupon = EPOCH_MS + rng.randint(5_000, 35_000)
    for index in range(scale):
        time += rng.randint(1, 49)
        while next_coupon <= time:
            owner = rng.randrange(SHOPS)
            text = string(f"{rng.choice((5, 10, 20, 50))}% discount on item {rng.randrange(999)}")
            coupons.element(iri(f"{NS}coupon{coupons.elements}"), [(_owner(owner), offers, text)],
                            next_coupon)
            next_coupon += rng.randint(5_000, 35_000)
        shopper = iri(f"{NS}shopper{rng.randrange(shoppers)}")
        nearby.element(iri(f"{NS}near{index}"), [(shopper, near_pred, _shop(rng.randrange(SHOPS)))],
                       time)


def _windows(slide1: int, slide2: int) -> dict[str, dict[str, object]]:
    return {
        "w1": {"stream": "nearby", "width": W1_WIDTH, "slide": slide1, "t0": 0},
        "w2": {"stream": "coupons", "width": W2_WIDTH, "slide": slide2, "t0": 0},
    }


def generate_w1(data: DatasetWriter, scale: int, rng: random.Random) -> None:
    background = data.background("shops.ttl", _background())
    _write_streams(data, scale, rng)
    params = {"windows": _windows(W1_SLIDE, W2_WIDTH), "report": "window-close",
              "report_window": "w2", "operator": "rstream", "sparql": PLAIN_SPARQL}
    data.query("offers-nearby", RSPQL_QUERY, background=(background,), params=params)


def generate_w2(data: DatasetWriter, scale: int, rng: random.Random) -> None:
    background = data.background("shops.ttl", _background())
    _write_streams(data, scale, rng)
    params = {"windows": _windows(1, 1), "report": "content-change", "operator": "istream",
              "sparql": PLAIN_SPARQL}
    data.query("offers-nearby-cqels", CQELS_QUERY, background=(background,), params=params)
