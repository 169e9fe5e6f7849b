"""Credit-card fraud, "big after small" (SPAseq UC 3, Query 2, on a synthetic stand-in for
the CCD transactions): W6, and W10 with its background KB grown from 1x to 100x the stream.

Each event is one transaction with the card as subject (the paper's `?card pred:id ?id1 ;
pred:amount ?a`); the KB <http://creditcard.org/db> holds card holders, addresses, issuing
banks and card types (SPAseq section 8, Question 2). Amounts are log-normal, and now and
then a card withdraws a large sum followed by a run of small ones (the fraud the query seeks).
The paper's Q2 writes `FILTER(?amount2 * 10 >= ?amount1)`, which contradicts its own
description ("considerably less than the earlier withdrawn"); we follow the description.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from sepia.workloads.rdfout import (
    EPOCH_MS,
    MINUTE_MS,
    DatasetWriter,
    StreamWriter,
    Triple,
    decimal,
    iri,
    string,
)

NS = "http://creditcard.org/"
PRED = "http://example/"
DB = NS + "db#"
BANKS = 20

QUERY = f"""
PREFIX pred: <{PRED}>
PREFIX : <{DB}>
SELECT ?id1 ?amount1 ?amount2 ?name ?address
WITHIN 30 MINUTES
FROM STREAM S1 <{NS}transactions>
PARTITION BY ?id1
WHERE {{
  SEQ(A, B+)
  DEFINE GPM A ON S1 {{
    ?card pred:id ?id1 .
    ?card pred:amount ?amount1 .
    ?card pred:loc ?loc .
    FILTER(?amount1 > 0)
  }}
  DEFINE GPM B ON S1 {{
    ?card pred:id ?id1 .
    ?card pred:amount ?amount2 .
    FILTER(?amount2 * 10 <= ?amount1)
    GRAPH <{NS}db> {{
      ?id1 :cardHolder ?name .
      ?id1 :holderAddress ?address .
    }}
  }}
}}"""


def _card_kb(cards: int) -> Iterator[Triple]:
    """4 triples per card, 2 per bank: holder, address, issuing bank, type."""
    for bank in range(BANKS):
        yield iri(f"{DB}bank{bank}"), iri(DB + "bankName"), string(f"Bank {bank}")
        yield iri(f"{DB}bank{bank}"), iri(DB + "bankAddress"), string(f"{bank} Bank Street")
    for card in range(cards):
        subject = iri(f"{DB}id{card}")
        yield subject, iri(DB + "cardHolder"), string(f"Holder {card}")
        yield subject, iri(DB + "holderAddress"), string(f"{card} Main Road")
        yield subject, iri(DB + "issuingBank"), iri(f"{DB}bank{card % BANKS}")
        yield subject, iri(DB + "cardType"), string(("visa", "mastercard", "amex")[card % 3])


def cards_for_triples(triples: int) -> int:
    """How many cards a KB of about ``triples`` triples describes."""
    return max(1, (triples - 2 * BANKS) // 4)


def _write_transactions(stream: StreamWriter, scale: int, cards: int,
                        rng: random.Random) -> None:
    id_p, amount_p, loc_p = iri(PRED + "id"), iri(PRED + "amount"), iri(PRED + "loc")
    time = EPOCH_MS

    def transaction(card: int, amount: float) -> None:
        nonlocal time
        time += rng.randint(10, 400)
        subject = iri(f"{NS}card/{card}")
        stream.element(iri(f"{NS}tx/{stream.elements}"), [
            (subject, id_p, iri(f"{DB}id{card}")), (subject, amount_p, decimal(amount)),
            (subject, loc_p, iri(f"{NS}loc/{rng.randrange(200)}")),
        ], time)

    while stream.elements < scale:
        card = rng.randrange(cards)
        if rng.random() < 0.02:
            big = rng.uniform(500, 2000)
            transaction(card, big)
            for _ in range(rng.randint(1, 4)):
                transaction(card, rng.uniform(1, big / 10))
        else:
            transaction(card, rng.lognormvariate(3.5, 1.0))


def _stream_cards(scale: int) -> int:
    return max(50, scale // 30)


def _params() -> dict[str, object]:
    return {"within_ms": 30 * MINUTE_MS, "series": "big-after-small"}


def generate_w6(data: DatasetWriter, scale: int, rng: random.Random) -> None:
    cards = _stream_cards(scale)
    kb = data.background("cards.ttl", _card_kb(cards), graph=f"{NS}db")
    _write_transactions(data.stream("S1", NS + "transactions", "transactions.trig"), scale,
                        cards, rng)
    data.query("big-after-small", QUERY, background=(kb,), params=_params())


def generate_w10(data: DatasetWriter, scale: int, rng: random.Random) -> None:
    """The W6 stream, and KBs of 1x, 10x and 100x ``scale`` triples (10k..1M at 10k)."""
    cards = _stream_cards(scale)
    _write_transactions(data.stream("S1", NS + "transactions", "transactions.trig"), scale,
                        cards, rng)
    for factor in (1, 10, 100):
        size = factor * scale
        kb = data.background(f"cards-{size}.ttl",
                             _card_kb(max(cards, cards_for_triples(size))), graph=f"{NS}db")
        data.query(f"big-after-small-kb{size}", QUERY, background=(kb,), x=float(size),
                   params=_params())
