"""The naive baseline for event workloads: each workload's query hand-written as nested
loops in Python (SPAseq ones through ``naive_spaseq``), over events read with pyoxigraph.

Each matcher reads the same files as the engines, reduces every element to the fields its
GPMs test, and counts matches; it is independent of the engine's code, so its count checks
the engine's. Matching is offline (all events read, then the loops run), so it reports no
per-result latency, except W9, whose CQELS-CEP query is evaluated at every arrival.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

from sepia.bench.streamfile import parse_quads
from sepia.bench.systems.base import RunOutcome
from sepia.bench.systems.naive_spaseq import Bindings, Event, SeqExpression, Step
from sepia.io.streams import read_stream
from sepia.rdf.stream import StreamElement, StreamSet
from sepia.workloads.manifest import Manifest, Variant

Fields = dict[str, list[tuple[str, Any]]]


def _local(iri: str) -> str:
    return iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _fields(element: StreamElement) -> Fields:
    """Predicate local name -> [(subject, object value)] of one element."""
    fields: Fields = defaultdict(list)
    for triple in element.triples:
        fields[_local(triple.predicate.value)].append((triple.subject.value, triple.object.value))
    return fields


def _elements(data: Path, manifest: Manifest) -> Iterator[StreamElement]:
    sources = {s.name: read_stream(data / s.path, s.name) for s in manifest.streams}
    return StreamSet(sources).merged()


def _background(data: Path, variant: Variant) -> Fields:
    """Predicate local name -> [(subject, object value)] of the variant's background."""
    fields: Fields = defaultdict(list)
    for path in variant.background:
        for quad in parse_quads(data / path):
            fields[_local(quad.predicate.value)].append((quad.subject.value, quad.object.value))
    return fields


def _index(pairs: list[tuple[str, Any]]) -> dict[str, list[Any]]:
    index: dict[str, list[Any]] = defaultdict(list)
    for subject, value in pairs:
        index[subject].append(value)
    return index


def _count(expression: SeqExpression, partitions: dict[Any, list[Event]], triples: int,
           deadline: float) -> RunOutcome:
    matches = tried = 0
    for events in partitions.values():
        found, done = expression.count_matches(events, deadline)
        matches, tried = matches + found, tried + done
        if done < len(events):
            return RunOutcome(tried, triples * tried // max(1, _size(partitions)), matches,
                              complete=False)
    return RunOutcome(tried, triples, matches)


def _size(partitions: dict[Any, list[Event]]) -> int:
    return sum(len(events) for events in partitions.values())


# --- W4, W11: SPAseq Q3 / Q4 on stock events, partitioned by company -------------------

_V_SHAPE: tuple[Callable[[dict[int, float]], bool], ...] = (
    lambda p: True,
    lambda p: p[2] > p[1],
    lambda p: p[3] < p[2],
)
_HEAD_SHOULDERS: tuple[Callable[[dict[int, float]], bool], ...] = (
    lambda p: True,
    lambda p: p[2] > p[1],
    lambda p: p[1] < p[3] < p[2],
    lambda p: p[4] > p[2],
    lambda p: p[3] < p[5] < p[4],
    lambda p: p[5] < p[6] < p[4],
    lambda p: p[5] < p[7] < p[6],
)


def _price_gpm(position: int, test: Callable[[dict[int, float]], bool]) -> Callable[
        [Event, Bindings], list[Bindings]]:
    def gpm(event: Event, bindings: Bindings) -> list[Bindings]:
        prices = {**bindings, position: event.fields["price"]}
        return [prices] if test(prices) else []
    return gpm


def stocks(data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
    tests = {"v-shape": _V_SHAPE, "head-shoulders": _HEAD_SHOULDERS}[variant.params["pattern"]]
    operator = variant.params["strategy"]
    steps = tuple(Step((_price_gpm(i + 1, test),), operator) for i, test in enumerate(tests))
    partitions: dict[str, list[Event]] = defaultdict(list)
    for element in _elements(data, manifest):
        ((company, price),) = _fields(element)["price"]
        partitions[company].append(Event(element.time, element.stream, {"price": float(price)}))
    return _count(SeqExpression(steps, variant.params["within_ms"]), partitions,
                  manifest.triples, deadline)


# --- W5: SPAseq Q1, smart grid, SEQ(A; B+, C) over three streams -------------------------

def _grid_event(element: StreamElement) -> Event:
    fields = _fields(element)
    ((subject, location),) = fields["loc"]
    values: dict[str, Any] = {"subject": subject, "loc": location}
    for name in ("source", "fare", "light", "windsp"):
        if fields.get(name):
            values[name] = fields[name][0][1]
    return Event(element.time, element.stream, values)


def smart_grid(data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
    kb = _background(data, variant)
    city, near, owner = _index(kb["locatedIn"]), _index(kb["nearBy"]), _index(kb["ownerName"])
    threshold = variant.params["fare"]

    def power(event: Event, b: Bindings) -> list[Bindings]:
        f = event.fields
        if event.stream != "S1" or f.get("source") != "fuel" or int(f["fare"]) <= threshold:
            return []
        house = f["subject"]
        return [{"l": f["loc"], "fr1": int(f["fare"]), "city": c, "house2": h, "oname": o}
                for c in city[house] for h in near[house] for o in owner[house]]

    def weather(event: Event, b: Bindings) -> list[Bindings]:
        f = event.fields
        good = (event.stream == "S2" and f["loc"] == b["l"]
                and float(f["windsp"]) > variant.params["wind"]
                and int(f["light"]) > variant.params["light"])
        return [b] if good else []

    def storage(event: Event, b: Bindings) -> list[Bindings]:
        f = event.fields
        cheaper = (event.stream == "S3" and f["loc"] == b["l"] and f.get("source") == "solar"
                   and int(f["fare"]) < b["fr1"])
        return [b] if cheaper else []

    steps = (Step((power,)), Step((weather,), ";", kleene=True), Step((storage,), ","))
    events = [_grid_event(element) for element in _elements(data, manifest)]
    return _count(SeqExpression(steps, variant.params["within_ms"]), {None: events},
                  manifest.triples, deadline)


# --- W6, W10: SPAseq Q2, big after small, SEQ(A, B+) partitioned by card ------------------

def credit_card(data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
    kb = _background(data, variant)
    holder, address = _index(kb["cardHolder"]), _index(kb["holderAddress"])

    def big(event: Event, b: Bindings) -> list[Bindings]:
        amount = event.fields["amount"]
        return [{"amount1": amount}] if amount > 0 else []

    def small(event: Event, b: Bindings) -> list[Bindings]:
        if event.fields["amount"] * 10 > b["amount1"]:
            return []
        card = event.fields["id"]
        return [{**b, "name": n, "address": a} for n in holder[card] for a in address[card]]

    partitions: dict[str, list[Event]] = defaultdict(list)
    for element in _elements(data, manifest):
        fields = _fields(element)
        ((_, card),), ((_, amount),) = fields["id"], fields["amount"]
        partitions[card].append(Event(element.time, element.stream,
                                      {"id": card, "amount": Decimal(amount)}))
    steps = (Step((big,)), Step((small,), ",", kleene=True))
    return _count(SeqExpression(steps, variant.params["within_ms"]), partitions,
                  manifest.triples, deadline)


# --- W7: SPAseq Q5, traffic, SEQ(A; (B & C)) ---------------------------------------------

def traffic(data: Path, manifest: Manifest, variant: Variant, deadline: float) -> RunOutcome:
    def observations(stream: str, test: Callable[[int, Bindings], bool], variable: str) -> Callable[
            [Event, Bindings], list[Bindings]]:
        def gpm(event: Event, b: Bindings) -> list[Bindings]:
            if event.stream != stream:
                return []
            return [{**b, "p1": p, variable: v} for p, v in event.fields["obs"]
                    if b.get("p1", p) == p and test(v, b)]
        return gpm

    threshold = variant.params["threshold"]
    a = observations("S1", lambda v, b: v > threshold, "v1")
    b_gpm = observations("S2", lambda v, b: v >= b["v1"], "v2")
    c_gpm = observations("S3", lambda v, b: v >= b["v1"], "v3")
    events = []
    for element in _elements(data, manifest):
        fields = _fields(element)
        prop, value = _index(fields["observedProperty"]), _index(fields["hasValue"])
        pairs = [(p, int(v)) for node in prop for p in prop[node] for v in value[node]]
        events.append(Event(element.time, element.stream, {"obs": pairs}))
    steps = (Step((a,)), Step((b_gpm, c_gpm), ";"))
    return _count(SeqExpression(steps, variant.params["within_ms"]), {None: events},
                  manifest.triples, deadline)
