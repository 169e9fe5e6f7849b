"""Public transport delays (CQELS-CEP Examples 1-9, the Vienna subway scenario), scaled: W9.

The background transportation map links stops by connections (`:beg`, `:end`, `:means`
subway or tram, `:dur`) on subway lines that all lead to the city centre `:c` and tram
lines that feed into them, and types each vehicle `:subway` or `:tram`. Vehicles run along
their lines; at a stop a vehicle usually just arrives, but sometimes delays are reported one
to three times first, and sometimes it never arrives: the query of Example 6 looks for two
delays of a subway at a stop with no arrival after them, at stops from which the centre is
reachable by subway alone (the nested path `(^:beg/[:means :subway]/:end)+`).
Events are atomic, stamped with intervals [t, t] as the paper's footnote 3 says.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections.abc import Iterator

from sepia.workloads.rdfout import (
    EPOCH_MS,
    MINUTE_MS,
    RDF_TYPE,
    DatasetWriter,
    Triple,
    iri,
    string,
)

NS = "http://example.org/transport#"
SUBWAY_LINES, TRAM_LINES, LINE_STOPS = 5, 3, 8
VEHICLES_PER_LINE = 6

QUERY = f"""
PREFIX : <{NS}>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
SELECT ?s
FROM :transportationMap
FROM NAMED WINDOW :W ON :publicTransport [RANGE 10m]
WHERE {{
  WINDOW :W {{
    SEQ({{ ?v :delayAt ?s }}, {{ ?v :delayAt ?s }}, !{{ ?v :arriveAt ?s }})
  }}
  ?v rdf:type :subway .
  ?s (^:beg/[:means :subway]/:end)+ :c .
}}"""


def _lines() -> list[tuple[str, list[str]]]:
    """Subway line k: stops k_0 .. k_7 then :c; tram line k: t_k_0 .. t_k_5 then subway stop."""
    lines = [("subway", [f"{NS}l{k}s{i}" for i in range(LINE_STOPS)] + [NS + "c"])
             for k in range(SUBWAY_LINES)]
    lines += [("tram", [f"{NS}t{k}s{i}" for i in range(LINE_STOPS - 2)]
               + [f"{NS}l{k % SUBWAY_LINES}s{LINE_STOPS // 2}"]) for k in range(TRAM_LINES)]
    return lines


def _background(lines: list[tuple[str, list[str]]]) -> list[Triple]:
    triples: list[Triple] = []
    for number, (means, stops) in enumerate(lines):
        for i, (begin, end) in enumerate(itertools.pairwise(stops)):
            conn = iri(f"{NS}conn{number}_{i}")
            triples += [(conn, iri(NS + "beg"), iri(begin)), (conn, iri(NS + "end"), iri(end)),
                        (conn, iri(NS + "means"), iri(NS + means)),
                        (conn, iri(NS + "dur"), string(f"{2 + (number + i) % 4}m"))]
        for v in range(VEHICLES_PER_LINE):
            triples.append((iri(f"{NS}v{number}_{v}"), RDF_TYPE, iri(NS + means)))
    return triples


def _vehicle(rng: random.Random, stops: list[str]) -> Iterator[tuple[int, str, str]]:
    """(time, predicate, stop) forever: arrivals, sometimes preceded by 1-3 delays."""
    time = EPOCH_MS + rng.randint(0, 10 * MINUTE_MS)
    position = rng.randrange(len(stops))
    while True:
        stop = stops[position]
        time += rng.randint(MINUTE_MS, 3 * MINUTE_MS)
        arrives = True
        if rng.random() < 0.2:
            for _ in range(rng.randint(1, 3)):
                yield time, "delayAt", stop
                time += rng.randint(MINUTE_MS // 2, 4 * MINUTE_MS)
            arrives = rng.random() < 0.7
        if arrives:
            yield time, "arriveAt", stop
        position = (position + 1) % len(stops)


def _tagged(
    index: int, events: Iterator[tuple[int, str, str]]
) -> Iterator[tuple[int, int, str, str]]:
    """Events of vehicle ``index``, tagged with it so a merge keeps them apart."""
    for time, predicate, stop in events:
        yield time, index, predicate, stop


def generate_w9(data: DatasetWriter, scale: int, rng: random.Random) -> None:
    lines = _lines()
    kb = data.background("transportation-map.ttl", _background(lines),
                         graph=NS + "transportationMap")
    stream = data.stream("publicTransport", NS + "publicTransport", "public-transport.trig")
    fleet = [(f"{NS}v{n}_{v}", stops)
             for n, (_, stops) in enumerate(lines) for v in range(VEHICLES_PER_LINE)]
    names = [name for name, _ in fleet]
    tagged = [_tagged(index, _vehicle(rng, stops)) for index, (_, stops) in enumerate(fleet)]
    last = 0
    for time, index, predicate, stop in heapq.merge(*tagged):
        if stream.elements >= scale:
            break
        last = max(time, last + 1)  # unique times: no two events at one instant
        stream.element(iri(f"{NS}event{stream.elements}"),
                       [(iri(names[index]), iri(NS + predicate), iri(stop))], last, last)
    params = {"namespace": NS, "width_ms": 10 * MINUTE_MS, "centre": NS + "c"}
    data.query("repeated-delays", QUERY, background=(kb,), params=params)
