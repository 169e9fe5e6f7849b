"""Smart grid monitoring (SPAseq UC 1, Query 1, on a synthetic stand-in for the UMass Smart
Home data): W5.

Three streams: power (S1: a house, its location and the price of its current power source),
weather (S2: light and wind speed at a location) and power storage (S3: the price of stored
solar power at a location), plus the background KB <http://smartgrid.org/db> of houses'
cities, owners and neighbours. The timeline mixes random events with "episodes" (a fuel price
spike, a run of favourable weather, then cheaper stored solar power, at one location, back to
back) so that `SEQ(A; B+, C)` with its strict contiguity over the whole streamset matches.
"""

from __future__ import annotations

import random

from sepia.workloads.rdfout import (
    EPOCH_MS,
    MINUTE_MS,
    DatasetWriter,
    StreamWriter,
    Triple,
    decimal,
    integer,
    iri,
    string,
)

NS = "http://smartgrid.org/"
HOUSES, LOCATIONS, CITIES = 40, 10, 4

QUERY = f"""
PREFIX : <{NS}>
SELECT ?house ?city ?oname ?fr1 ?fr2
WITHIN 60 MINUTES
FROM STREAM S1 <{NS}streams/power>
FROM STREAM S2 <{NS}streams/weather>
FROM STREAM S3 <{NS}streams/storage>
WHERE {{
  SEQ(A; B+, C)
  DEFINE GPM A ON S1 {{
    ?house :loc ?l .
    ?house :pow ?pw1 .
    ?pw1 :source "fuel" .
    ?pw1 :fare ?fr1 .
    FILTER(?fr1 > 20)
    GRAPH <{NS}db> {{
      ?house :locatedIn ?city .
      ?house :nearBy ?house2 .
      ?house :ownerName ?oname .
    }}
  }}
  DEFINE GPM B ON S2 {{
    ?wther :loc ?l .
    ?wther :value ?val .
    ?val :light ?lt .
    ?val :windsp ?sp .
    FILTER(?sp > 3 && ?lt > 40)
  }}
  DEFINE GPM C ON S3 {{
    ?storage :loc ?l .
    ?storage :pow ?pw2 .
    ?pw2 :source "solar" .
    ?pw2 :fare ?fr2 .
    FILTER(?fr2 < ?fr1)
  }}
}}"""


def _node(kind: str, index: int) -> str:
    return iri(f"{NS}{kind}{index}")


def _background(rng: random.Random) -> list[Triple]:
    triples: list[Triple] = []
    for house in range(HOUSES):
        subject = _node("H", house)
        triples.append((subject, iri(NS + "locatedIn"), _node("City", house % CITIES)))
        triples.append((subject, iri(NS + "ownerName"), string(f"Owner {house}")))
        for other in rng.sample(range(HOUSES), rng.randint(1, 3)):
            triples.append((subject, iri(NS + "nearBy"), _node("H", other)))
    return triples


class _Grid:
    """The three stream writers and the one clock they share (times are unique)."""

    def __init__(self, data: DatasetWriter, rng: random.Random) -> None:
        self.rng = rng
        self.power = data.stream("S1", NS + "streams/power", "power.trig")
        self.weather = data.stream("S2", NS + "streams/weather", "weather.trig")
        self.storage = data.stream("S3", NS + "streams/storage", "storage.trig")
        self.time = EPOCH_MS
        self.count = 0

    def _emit(self, stream: StreamWriter, triples: list[Triple]) -> None:
        self.time += self.rng.randint(500, 3_500)
        stream.element(_node("event/e", self.count), triples, self.time)
        self.count += 1

    def power_event(self, house: int, source: str, fare: int) -> None:
        subject, power = _node("H", house), _node("Pw", self.count)
        self._emit(self.power, [
            (subject, iri(NS + "loc"), _node("L", house % LOCATIONS)),
            (subject, iri(NS + "pow"), power), (power, iri(NS + "source"), string(source)),
            (power, iri(NS + "fare"), integer(fare)), (power, iri(NS + "watt"), integer(20)),
        ])

    def weather_event(self, location: int, light: int, wind: float) -> None:
        subject, value = _node("Wth", self.count), _node("V", self.count)
        self._emit(self.weather, [
            (subject, iri(NS + "loc"), _node("L", location)), (subject, iri(NS + "value"), value),
            (value, iri(NS + "light"), integer(light)), (value, iri(NS + "windsp"), decimal(wind)),
            (value, iri(NS + "temp"), decimal(self.rng.uniform(-5, 30))),
        ])

    def storage_event(self, location: int, fare: int) -> None:
        subject, power = _node("St", self.count), _node("Pw", self.count)
        self._emit(self.storage, [
            (subject, iri(NS + "loc"), _node("L", location)), (subject, iri(NS + "pow"), power),
            (power, iri(NS + "source"), string("solar")), (power, iri(NS + "fare"), integer(fare)),
        ])

    def episode(self) -> None:
        """Fuel above 20, 1-4 good-weather reports, then cheaper solar storage, same place."""
        house = self.rng.randrange(HOUSES)
        fare = self.rng.randint(21, 30)
        self.power_event(house, "fuel", fare)
        for _ in range(self.rng.randint(1, 4)):
            self.weather_event(house % LOCATIONS, self.rng.randint(41, 90),
                               self.rng.uniform(3.1, 12))
        self.storage_event(house % LOCATIONS, self.rng.randint(10, fare - 1))

    def noise(self) -> None:
        rng = self.rng
        kind = rng.randrange(3)
        if kind == 0:
            self.power_event(rng.randrange(HOUSES), rng.choice(("fuel", "solar", "wind")),
                             rng.randint(5, 30))
        elif kind == 1:
            self.weather_event(rng.randrange(LOCATIONS), rng.randint(0, 90), rng.uniform(0, 12))
        else:
            self.storage_event(rng.randrange(LOCATIONS), rng.randint(5, 30))


def generate_w5(data: DatasetWriter, scale: int, rng: random.Random) -> None:
    kb = data.background("houses.ttl", _background(rng), graph=f"{NS}db")
    grid = _Grid(data, rng)
    while grid.count < scale:
        if rng.random() < 0.05:
            grid.episode()
        else:
            grid.noise()
    params = {"within_ms": 60 * MINUTE_MS, "fare": 20, "wind": 3, "light": 40}
    data.query("smart-grid", QUERY, background=(kb,), params=params)
