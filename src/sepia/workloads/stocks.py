"""Stock market (SPAseq section 8's SMD, C-SPARQL and EP-SPARQL's price examples):
W3, W4, W8, W11, W12 and W13.

SMD: trades of 110 companies in 11 sectors (the paper's 10 companies replicated 10 times plus
the originals), ~52 trades/s, each event graph holding the company's price, volume, sector,
type and transaction id with the company as subject, as the paper's queries read them.
Prices follow a per-company random walk. W12 spaces the same trades as a market feed of one
price per company per minute, so that `WITHIN 60 MINUTES` ends runs (state bounded) where
W4's dense stream (10,000 trades in about 3 minutes) ends none. W3 reads a trade-centred
variant (one node per trade) so that an average over a window merged into one graph counts
every trade; W13 gives the same trades on their companies, so that the plan can split the
average by company (every pattern binds it). W8 is EP-SPARQL's triple stream of daily
closing prices with crashes and recoveries; each close comes with the company's type, a
leaf of a class hierarchy (EP-SPARQL's stream-reasoning test) whose ``rdfs:subClassOf``
schema is the background of the RDFS variant of the query.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from sepia.workloads.rdfout import (
    EPOCH_MS,
    MINUTE_MS,
    RDF_TYPE,
    RDFS_SUBCLASS,
    DatasetWriter,
    StreamWriter,
    Triple,
    decimal,
    integer,
    iri,
    string,
)

NS = "http://stockmarket.org/"
PRED = "http://example/"  # the prefix `pred:` of the paper's queries
EP = "http://stockmarket.org/ep#"
COMPANIES, SECTORS = 110, 11
DAY_MS = 86_400_000

_GPM = """  DEFINE GPM {name} ON S1 {{
    ?company pred:price ?p{i} .
    ?company pred:volume ?vol{i} .{filter}
  }}"""

# SPAseq Appendix A: Query 4 (V-shape, 3 GPMs) and Query 3 (head and shoulders, 7 GPMs).
PATTERNS: dict[str, tuple[str, ...]] = {
    "v-shape": ("", "?p2 > ?p1", "?p3 < ?p2"),
    "head-shoulders": (
        "", "?p2 > ?p1", "?p3 < ?p2 && ?p3 > ?p1", "?p4 > ?p2", "?p5 < ?p4 && ?p5 > ?p3",
        "?p6 > ?p5 && ?p6 < ?p4", "?p7 < ?p6 && ?p7 > ?p5",
    ),
}
STRATEGIES = {",": "sc", ";": "stn"}  # strict contiguity, skip-till-next

EPSPARQL_QUERY = f"""
PREFIX : <{EP}>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
SELECT ?company ?price1 ?price2 ?price3
WHERE {{
  {{ ?company :hasStockPrice ?price1 }}{{typed}}
  SEQ {{ ?company :hasStockPrice ?price2 }}
  SEQ {{ ?company :hasStockPrice ?price3 }}
  FILTER(?price2 < ?price1 * 0.7 && ?price3 > ?price1 * 1.05
         && getDURATION() < "P30D"^^xsd:duration)
}}"""

TRADE_PATTERN = "?trade st:company ?company ; st:price ?price ."
COMPANY_PATTERN = "?company st:price ?price ."

CSPARQL_QUERY = f"""
PREFIX st: <{NS}trade#>
REGISTER QUERY averagePrice AS
SELECT ?company (AVG(?price) AS ?average)
FROM STREAM <{NS}trades> [RANGE 40s STEP 10s]
WHERE {{ ?trade st:company ?company ; st:price ?price . }}
GROUP BY ?company
"""

PLAIN_AVERAGE = f"""
PREFIX st: <{NS}trade#>
SELECT ?company (AVG(?price) AS ?average)
WHERE {{ ?trade st:company ?company ; st:price ?price . }}
GROUP BY ?company"""


def spaseq_query(pattern: str, operator: str, within_minutes: int) -> str:
    """The paper's query text with the chosen selection strategy and window."""
    filters = PATTERNS[pattern]
    names = "ABCDEFG"[: len(filters)]
    gpms = "\n".join(
        _GPM.format(name=name, i=i + 1, filter=f"\n    FILTER({f})" if f else "")
        for i, (name, f) in enumerate(zip(names, filters, strict=True))
    )
    projection = " ".join(f"?p{i + 1}" for i in range(len(names)))
    return f"""
PREFIX pred: <{PRED}>
SELECT ?company {projection}
WITHIN {within_minutes} MINUTES
FROM STREAM S1 <{NS}stocks>
PARTITION BY ?company
WHERE {{
  SEQ({f" {operator} ".join(names)})
{gpms}
}}"""


def company(index: int) -> str:
    return iri(f"{NS}company/c{index}")


def _walk(rng: random.Random, prices: list[float], index: int, sigma: float) -> float:
    prices[index] = max(1.0, round(prices[index] * (1 + rng.gauss(0, sigma)), 2))
    return prices[index]


def _company_kb() -> Iterator[Triple]:
    kb = NS + "kb#"
    for index in range(COMPANIES):
        subject = company(index)
        yield subject, iri(kb + "name"), string(f"Company {index}")
        yield subject, iri(kb + "sector"), iri(f"{NS}sector/s{index % SECTORS}")
        yield subject, iri(kb + "address"), string(f"{index} Wall Street, New York")
        yield subject, iri(kb + "url"), iri(f"http://c{index}.example.com/")
        yield subject, iri(kb + "phone"), string(f"+1-212-555-{index:04d}")
        yield subject, iri(kb + "ceo"), string(f"CEO of company {index}")


Schedule = Callable[[random.Random], Iterator[tuple[int, int]]]
"""When and by which company each trade is made: (time, company index), in time order."""


def dense_trades(rng: random.Random) -> Iterator[tuple[int, int]]:
    """SMD's rate: ~52 trades/s, each by a company drawn at random."""
    time = EPOCH_MS
    while True:
        time += rng.randint(1, 37)
        yield time, rng.randrange(COMPANIES)


def trades_per_minute(rng: random.Random) -> Iterator[tuple[int, int]]:
    """A market feed's rate: every company's price once a minute, at distinct random
    instants of the minute."""
    minute = EPOCH_MS
    while True:
        offsets = sorted(rng.sample(range(MINUTE_MS), COMPANIES))
        order = rng.sample(range(COMPANIES), COMPANIES)
        yield from ((minute + offset, index) for offset, index in zip(offsets, order, strict=True))
        minute += MINUTE_MS


def write_trades(stream: StreamWriter, scale: int, rng: random.Random,
                 schedule: Schedule = dense_trades) -> None:
    """SMD-like trades, company as subject (the graph shape SPAseq Q3/Q4 match)."""
    prices = [rng.uniform(10, 200) for _ in range(COMPANIES)]
    price_p, volume_p, sector_p = iri(PRED + "price"), iri(PRED + "volume"), iri(PRED + "sector")
    type_p, id_p = iri(PRED + "type"), iri(PRED + "transaction")
    trades = schedule(rng)
    for n in range(scale):
        time, index = next(trades)
        subject = company(index)
        stream.element(iri(f"{NS}event/e{n}"), [
            (subject, price_p, decimal(_walk(rng, prices, index, 0.002))),
            (subject, volume_p, integer(100 * rng.randint(1, 100))),
            (subject, sector_p, iri(f"{NS}sector/s{index % SECTORS}")),
            (subject, type_p, string(rng.choice(("buy", "sell")))),
            (subject, id_p, string(f"t{n}")),
        ], time)


def _trade_patterns(data: DatasetWriter, scale: int, rng: random.Random, schedule: Schedule,
                    windows: tuple[int, ...]) -> None:
    """W4, W11 and W12: one trade stream, the companies' background, and SPAseq's V-shape and
    head-and-shoulders under each selection strategy and WITHIN bound."""
    kb = data.background("companies.ttl", _company_kb(), graph=f"{NS}db")
    write_trades(data.stream("S1", NS + "stocks", "stocks.trig"), scale, rng, schedule)
    for pattern in ("v-shape", "head-shoulders"):
        for minutes in windows:
            for operator, short in STRATEGIES.items():
                name = f"{pattern}-{short}" + (f"-{minutes}m" if len(windows) > 1 else "")
                params = {"pattern": pattern, "strategy": operator,
                          "within_ms": minutes * MINUTE_MS, "series": f"{pattern}-{short}"}
                data.query(name, spaseq_query(pattern, operator, minutes), background=(kb,),
                           x=float(minutes) if len(windows) > 1 else None, params=params)


def generate_w4(data: DatasetWriter, scale: int, rng: random.Random) -> None:
    _trade_patterns(data, scale, rng, dense_trades, (60,))


def generate_w12(data: DatasetWriter, scale: int, rng: random.Random) -> None:
    """W4's queries on a price per company per minute: WITHIN 60 MINUTES holds about 6,600
    trades, so runs end and the state stays bounded as the input grows."""
    _trade_patterns(data, scale, rng, trades_per_minute, (60,))


def generate_w11(data: DatasetWriter, scale: int, rng: random.Random) -> None:
    _trade_patterns(data, scale, rng, dense_trades, (6, 60, 600))


def generate_w3(data: DatasetWriter, scale: int, rng: random.Random) -> None:
    """Trade-centred events at ~100/s: a 40 s window holds ~12k triples."""
    _average_price(data, scale, rng, by_company=False)


def generate_w13(data: DatasetWriter, scale: int, rng: random.Random) -> None:
    """W3's trades (the same times, companies, prices and volumes) with each price and
    volume given on its company, and W3's query reading them so: its one pattern binds
    ?company, so the plan splits it by ?company without PARTITION BY (Spark's buckets). A
    company's two trades at one price in a window are one triple of the merged window
    graph, so the averages are over distinct prices, as C-SPARQL's own examples read."""
    _average_price(data, scale, rng, by_company=True)


def _average_price(data: DatasetWriter, scale: int, rng: random.Random, by_company: bool) -> None:
    """W3 (one node per trade) or W13 (price and volume on the company)."""
    stream = data.stream("trades", NS + "trades", "trades.trig")
    prices = [rng.uniform(10, 200) for _ in range(COMPANIES)]
    company_p, price_p, volume_p = (iri(f"{NS}trade#{p}") for p in ("company", "price", "volume"))
    time = EPOCH_MS
    for n in range(scale):
        time += rng.randint(1, 19)
        index = rng.randrange(COMPANIES)
        price = decimal(_walk(rng, prices, index, 0.002))
        volume = integer(100 * rng.randint(1, 100))
        subject = company(index) if by_company else iri(f"{NS}trade/t{n}")
        triples = [(subject, price_p, price), (subject, volume_p, volume)]
        if not by_company:
            triples.insert(0, (subject, company_p, company(index)))
        stream.element(iri(f"{NS}event/e{n}"), triples, time)
    window = {"stream": "trades", "width": 40_000, "slide": 10_000, "t0": 0}
    text, sparql = CSPARQL_QUERY, PLAIN_AVERAGE
    if by_company:
        text, sparql = (q.replace(TRADE_PATTERN, COMPANY_PATTERN) for q in (text, sparql))
    params = {"windows": {"w": window}, "report": "window-close", "report_window": "w",
              "operator": "rstream", "merge_windows": True, "sparql": sparql}
    data.query("average-price-by-company" if by_company else "average-price", text,
               params=params)


def _class_hierarchy(rng: random.Random) -> tuple[list[Triple], list[str]]:
    """Two class trees of depth <= 8 (listed companies, funds); returns triples and leaves."""
    triples: list[Triple] = []
    leaves: list[str] = []
    for root in ("ListedCompany", "Fund"):
        level = [iri(EP + root)]
        for depth in range(1, 8):
            children = [iri(f"{EP}{root}_{depth}_{i}") for i in range(len(level) * 2)]
            triples.extend((child, RDFS_SUBCLASS, rng.choice(level)) for child in children)
            level = children
        leaves.extend(level)
    return triples, leaves


def _daily_prices(rng: random.Random, days: int) -> Iterator[tuple[int, int, float]]:
    """(day, company, close): a daily walk with rare crashes (-35..-45%) and recoveries."""
    prices = [rng.uniform(20, 200) for _ in range(COMPANIES)]
    plans: list[list[float]] = [[] for _ in range(COMPANIES)]
    for day in range(days):
        for index in range(COMPANIES):
            if not plans[index] and rng.random() < 0.004:
                base = prices[index]
                low, high = base * rng.uniform(0.55, 0.65), base * rng.uniform(1.1, 1.3)
                down, up = rng.randint(1, 3), rng.randint(3, 10)
                plans[index] = [base + (low - base) * (k + 1) / down for k in range(down)]
                plans[index] += [low + (high - low) * (k + 1) / up for k in range(up)]
            if plans[index]:
                prices[index] = round(plans[index].pop(0), 2)
                yield day, index, prices[index]
            else:
                yield day, index, _walk(rng, prices, index, 0.015)


def generate_w8(data: DatasetWriter, scale: int, rng: random.Random) -> None:
    """Each element is one close and the company's type, a leaf class: whether it is a
    :ListedCompany is only known through the background schema (RDFS), and the RDFS variant
    reads the type with EQUALS, from the close's own element (an EP-SPARQL BGP matches
    stream occurrences, not background data)."""
    hierarchy, leaves = _class_hierarchy(rng)
    types = [rng.choice(leaves) for _ in range(COMPANIES)]
    schema = data.background("classes.ttl", hierarchy)
    stream = data.stream("prices", EP + "prices", "prices.trig")
    has_price = iri(EP + "hasStockPrice")
    for day, index, price in _daily_prices(rng, max(1, scale // COMPANIES)):
        time = EPOCH_MS + day * DAY_MS + index * MINUTE_MS
        stream.element(iri(f"{EP}p{stream.elements}"), [
            (company(index), has_price, decimal(price)),
            (company(index), RDF_TYPE, types[index]),
        ], time, time)
    params = {"predicate": EP + "hasStockPrice", "drop": 0.7, "rise": 1.05,
              "duration_ms": 30 * DAY_MS}
    data.query("drop-then-rise", EPSPARQL_QUERY.replace("{typed}", ""), params=params)
    typed = " EQUALS { ?company a :ListedCompany }"
    data.query("drop-then-rise-listed", EPSPARQL_QUERY.replace("{typed}", typed),
               background=(schema,), params={**params, "entailment": "rdfs",
                                             "class": EP + "ListedCompany"})
