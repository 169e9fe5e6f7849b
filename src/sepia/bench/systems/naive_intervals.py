"""Naive baselines of the interval-stamped event workloads, evaluated as elements arrive
(so they report per-result latency): W8, EP-SPARQL's drop-then-rise, and W9, CQELS-CEP's
repeated delays with a negated tail. Both are the queries' definitions as nested loops."""

from __future__ import annotations

import time
from collections import defaultdict, deque
from decimal import Decimal
from pathlib import Path

from sepia.bench.streamfile import parse_quads
from sepia.bench.systems.base import RunOutcome
from sepia.io.streams import read_stream
from sepia.rdf.stream import StreamElement, StreamSet
from sepia.rdf.vocabulary import RDF, RDFS
from sepia.workloads.manifest import Manifest, Variant

RDF_TYPE = f"{RDF}type"
SUBCLASS = f"{RDFS}subClassOf"


def _elements(data: Path, manifest: Manifest) -> StreamSet:
    return StreamSet({s.name: read_stream(data / s.path, s.name) for s in manifest.streams})


def _subclasses(data: Path, variant: Variant, cls: str) -> set[str]:
    """``cls`` and every class below it in the background schema (the RDFS closure of
    rdfs:subClassOf, by walking down from ``cls``)."""
    children: dict[str, set[str]] = defaultdict(set)
    for path in variant.background:
        for quad in parse_quads(data / path):
            if quad.predicate.value == SUBCLASS:
                children[quad.object.value].add(quad.subject.value)
    found, todo = {cls}, [cls]
    while todo:
        for child in children[todo.pop()] - found:
            found.add(child)
            todo.append(child)
    return found


def _typed(element: StreamElement, classes: set[str] | None) -> set[str]:
    """The subjects the element itself types with one of ``classes`` (None: no restriction,
    every subject)."""
    if classes is None:
        return {t.subject.value for t in element.triples}
    return {t.subject.value for t in element.triples
            if t.predicate.value == RDF_TYPE and t.object.value in classes}


def drop_then_rise(data: Path, manifest: Manifest, variant: Variant,
                   deadline: float) -> RunOutcome:
    """EP-SPARQL (1) with unrestricted SEQ: every (p1, p2, p3) of one company with
    end(1) < start(2), end(2) < start(3), end(3) - start(1) < duration and the price filter;
    in the RDFS variant p1's own element (EQUALS: the same interval) types the company with
    the class or a subclass of it."""
    params = variant.params
    drop, rise = Decimal(str(params["drop"])), Decimal(str(params["rise"]))
    duration = params["duration_ms"]
    classes = _subclasses(data, variant, params["class"]) if "class" in params else None
    history: dict[str, list[tuple[int, int, Decimal, bool]]] = defaultdict(list)
    latencies: list[float] = []
    elements = triples = 0
    for element in _elements(data, manifest).merged():
        arrived = time.perf_counter()
        if arrived > deadline:
            return RunOutcome(elements, triples, len(latencies), tuple(latencies), False)
        elements, triples = elements + 1, triples + len(element.triples)
        typed = _typed(element, classes)
        for triple in element.triples:
            company = triple.subject.value
            if triple.predicate.value != params["predicate"]:
                continue
            price = Decimal(triple.object.value)
            past = [x for x in history[company] if element.end - x[0] < duration]
            for j, (start2, end2, price2, _) in enumerate(past):
                if end2 >= element.start:
                    continue
                for _, end1, price1, first in past[:j]:
                    if (first and end1 < start2 and price2 < price1 * drop
                            and price > price1 * rise):
                        latencies.append((time.perf_counter() - arrived) * 1000)
            past.append((element.start, element.end, price, company in typed))
            history[company] = past
    return RunOutcome(elements, triples, len(latencies), tuple(latencies))


def _subway_reach(data: Path, variant: Variant, ns: str, centre: str) -> tuple[set[str], set[str]]:
    """Stops with a path (^:beg/[:means :subway]/:end)+ to the centre, and subway vehicles."""
    beg, end, means = {}, {}, {}
    vehicles = set()
    for path in variant.background:
        for quad in parse_quads(data / path):
            s, p, o = quad.subject.value, quad.predicate.value, quad.object.value
            if p == ns + "beg":
                beg[s] = o
            elif p == ns + "end":
                end[s] = o
            elif p == ns + "means":
                means[s] = o
            elif p == RDF_TYPE and o == ns + "subway":
                vehicles.add(s)
    into: dict[str, set[str]] = defaultdict(set)
    for conn, stop in beg.items():
        if means.get(conn) == ns + "subway" and conn in end:
            into[end[conn]].add(stop)
    reach, todo = set(), [centre]
    while todo:
        for stop in into[todo.pop()] - reach:
            reach.add(stop)
            todo.append(stop)
    return reach, vehicles


def _delay_rows(window: deque[StreamElement], ns: str, t: int) -> set[tuple[str, str, int, int]]:
    """SEQ({?v :delayAt ?s}, {?v :delayAt ?s}, !{?v :arriveAt ?s}) over the window at t."""
    delays: dict[tuple[str, str], list[StreamElement]] = defaultdict(list)
    arrivals: dict[tuple[str, str], list[int]] = defaultdict(list)
    for element in window:
        for triple in element.triples:
            key = (triple.subject.value, triple.object.value)
            if triple.predicate.value == ns + "delayAt":
                delays[key].append(element)
            elif triple.predicate.value == ns + "arriveAt":
                arrivals[key].append(element.start)
    rows = set()
    for (vehicle, stop), found in delays.items():
        for first in found:
            for second in found:
                if first.end < second.start and not any(
                        second.end < a <= t for a in arrivals[(vehicle, stop)]):
                    rows.add((vehicle, stop, first.start, second.end))
    return rows


def repeated_delays(data: Path, manifest: Manifest, variant: Variant,
                    deadline: float) -> RunOutcome:
    """CQELS-CEP Example 6 under CQELS's content change + IStream: at every arrival time the
    window (t - width, t] is searched; rows (stop, from, to) not in the previous answer count."""
    params = variant.params
    ns, width = params["namespace"], params["width_ms"]
    reach, subways = _subway_reach(data, variant, ns, params["centre"])
    window: deque[StreamElement] = deque()
    previous: set[tuple[str, int, int]] = set()
    latencies: list[float] = []
    elements = triples = 0
    pending: tuple[int, float] | None = None

    def evaluate(t: int, arrived: float) -> None:
        nonlocal previous
        while window and window[0].time <= t - width:
            window.popleft()
        rows = {(stop, start, end) for vehicle, stop, start, end in _delay_rows(window, ns, t)
                if vehicle in subways and stop in reach}
        fresh = rows - previous
        previous = rows
        latencies.extend([(time.perf_counter() - arrived) * 1000] * len(fresh))

    for element in _elements(data, manifest).merged():
        arrived = time.perf_counter()
        if arrived > deadline:
            return RunOutcome(elements, triples, len(latencies), tuple(latencies), False)
        if pending is not None and pending[0] < element.time:
            evaluate(pending[0], pending[1])
        window.append(element)
        pending = (element.time, arrived)
        elements, triples = elements + 1, triples + len(element.triples)
    if pending is not None:
        evaluate(*pending)
    return RunOutcome(elements, triples, len(latencies), tuple(latencies))
