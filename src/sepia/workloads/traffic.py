"""Road traffic (SPAseq UC 5, Query 5, on a synthetic stand-in for CityBench's Aarhus
traffic data): W7.

Three road-segment sensors, one stream each (the paper's S1-S3), report every minute an
observation graph in the SSN / SAO vocabulary with the congestion level, average speed and
vehicle count of their segment; S2 and S3 report at the same instants (so the conjunction
`B & C` can hold) but each drops ~10% of its reports. The paper's Q5 reuses `?traffic` in
all three GPMs, which would force one observation node into three streams; we name them
?t1-?t3, and complete GPM C (cut off in the paper) like GPM B.
"""

from __future__ import annotations

import random

from sepia.workloads.rdfout import (
    EPOCH_MS,
    MINUTE_MS,
    RDF_TYPE,
    DatasetWriter,
    Triple,
    integer,
    iri,
    string,
)

SSN = "http://purl.oclc.org/NET/ssnx/ssn#"
SAO = "http://purl.oclc.org/NET/sao/ssn#"  # as printed in the paper's Query 5
CT = "http://www.insight-centre.org/citytraffic#"
DATASET = "http://www.insight-centre.org/dataset/SampleEventService#AarhusTrafficData"
SENSORS = ("182955", "195578", "195446")
PROPERTIES = {"CongestionLevel": (0, 10), "AverageSpeed": (10, 90), "VehicleCount": (0, 40)}

_GPM = """  DEFINE GPM {name} ON {stream} {{
    ?{node} ssn:observedProperty ?p1 .
    ?{node} sao:hasValue ?{value} .
    FILTER({condition})
  }}"""

QUERY = f"""
PREFIX ssn: <{SSN}>
PREFIX sao: <{SAO}>
SELECT ?p1 ?v1 ?v2 ?v3
WITHIN 30 MINUTES
FROM STREAM S1 <{DATASET}{SENSORS[0]}>
FROM STREAM S2 <{DATASET}{SENSORS[1]}>
FROM STREAM S3 <{DATASET}{SENSORS[2]}>
WHERE {{
  SEQ(A; (B & C))
{_GPM.format(name="A", stream="S1", node="t1", value="v1", condition="?v1 > 3")}
{_GPM.format(name="B", stream="S2", node="t2", value="v2", condition="?v2 >= ?v1")}
{_GPM.format(name="C", stream="S3", node="t3", value="v3", condition="?v3 >= ?v1")}
}}"""


def _background() -> list[Triple]:
    triples: list[Triple] = []
    for i, sensor in enumerate(SENSORS):
        segment = iri(f"{CT}segment{sensor}")
        triples.append((iri(DATASET + sensor), iri(SSN + "observes"), segment))
        triples.append((segment, iri(CT + "roadType"), string(("ring", "arterial", "local")[i])))
        if i:
            triples.append((iri(f"{CT}segment{SENSORS[0]}"), iri(CT + "connectedTo"), segment))
    return triples


def _observation(node: str, prop: str, value: int, sensor: str) -> list[Triple]:
    return [
        (node, RDF_TYPE, iri(SSN + "Observation")),
        (node, iri(SSN + "observedProperty"), iri(CT + prop)),
        (node, iri(SAO + "hasValue"), integer(value)),
        (node, iri(SSN + "observedBy"), iri(DATASET + sensor)),
    ]


def generate_w7(data: DatasetWriter, scale: int, rng: random.Random) -> None:
    data.background("segments.ttl", _background())
    streams = [data.stream(f"S{i + 1}", DATASET + s, f"sensor{s}.trig")
               for i, s in enumerate(SENSORS)]
    minute = 0
    while sum(stream.elements for stream in streams) < scale:
        minute += 1
        for sensor, stream in zip(SENSORS, streams, strict=True):
            if stream is not streams[0] and rng.random() < 0.1:
                continue
            triples: list[Triple] = []
            for prop, (low, high) in PROPERTIES.items():
                node = iri(f"{CT}obs/{sensor}/{minute}/{prop}")
                triples += _observation(node, prop, rng.randint(low, high), sensor)
            stream.element(iri(f"{CT}event/{sensor}/{minute}"), triples,
                           EPOCH_MS + minute * MINUTE_MS)
    data.query("congestion", QUERY, params={"within_ms": 30 * MINUTE_MS, "threshold": 3})
