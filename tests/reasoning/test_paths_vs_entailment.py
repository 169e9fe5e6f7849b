"""Property paths and entailment agree where they overlap (issue 8): a type reached through
``rdf:type/rdfs:subClassOf*`` without entailment is a type ``rdf:type`` matches with it; only
entailment adds what domains, ranges and sub-properties derive."""

from __future__ import annotations

import pyoxigraph as ox

from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.semantics import evaluate

EX = "http://example.org/"
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
PREFIXES = f"""PREFIX : <{EX}>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
"""
ONTOLOGY = """
:TemperatureSensor rdfs:subClassOf :Sensor . :HumiditySensor rdfs:subClassOf :Sensor .
:AirQualitySensor rdfs:subClassOf :Sensor . :NO2Sensor rdfs:subClassOf :AirQualitySensor .
:Sensor rdfs:subClassOf :Device .
:t1 a :TemperatureSensor . :n1 a :NO2Sensor . :h1 a :HumiditySensor . :cam a :Camera .
"""


def store(turtle: str) -> ox.Store:
    s = ox.Store()
    s.load((PREFIXES.replace("PREFIX", "@prefix").replace(">\n", "> .\n") + turtle).encode(),
           format=ox.RdfFormat.TURTLE)
    return s


def answers(query: str, background: ox.Store, rdfs: bool, streams=None) -> set[tuple]:
    results = evaluate(parse_query(PREFIXES + query), streams or {}, background, rdfs=rdfs)
    return {tuple(r.values[k].value.removeprefix(EX) for k in sorted(r.values)) for r in results}


def test_every_type_by_path_equals_every_type_by_entailment():
    background = store(ONTOLOGY)
    by_path = answers("SELECT ?s ?c WHERE { ?s rdf:type/rdfs:subClassOf* ?c }", background, False)
    entailed = answers("SELECT ?s ?c WHERE { ?s rdf:type ?c }", background, True)
    assert by_path == entailed == {
        ("Camera", "cam"),
        ("TemperatureSensor", "t1"), ("Sensor", "t1"), ("Device", "t1"),
        ("NO2Sensor", "n1"), ("AirQualitySensor", "n1"), ("Sensor", "n1"), ("Device", "n1"),
        ("HumiditySensor", "h1"), ("Sensor", "h1"), ("Device", "h1"),
    }


def test_entailment_adds_what_a_domain_derives_and_the_path_cannot():
    background = store(ONTOLOGY + ":observes rdfs:domain :Sensor . :x :observes :air .")
    by_path = answers("SELECT ?s WHERE { ?s rdf:type/rdfs:subClassOf* :Sensor }", background,
                      False)
    entailed = answers("SELECT ?s WHERE { ?s rdf:type :Sensor }", background, True)
    assert by_path == {("t1",), ("n1",), ("h1",)}
    assert entailed == by_path | {("x",)}


def typed(t: int, subject: str, cls: str) -> StreamElement:
    """A stream element at t holding ``:subject rdf:type :cls``."""
    triple = ox.Triple(ox.NamedNode(EX + subject), RDF_TYPE, ox.NamedNode(EX + cls))
    return StreamElement(EX + "s", f"g{t}", t, t, (triple,))


def test_in_a_window_the_path_through_the_background_equals_entailment():
    streams = {EX + "s": [typed(1, "t2", "TemperatureSensor"), typed(2, "cam2", "Camera"),
                          typed(3, "n2", "NO2Sensor")]}
    head = "SELECT ?s FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 1] WHERE "
    by_path = answers(head + "{ WINDOW :w { ?s rdf:type ?t } ?t rdfs:subClassOf* :Sensor }",
                      store(ONTOLOGY), False, streams)
    entailed = answers(head + "{ WINDOW :w { ?s rdf:type :Sensor } }", store(ONTOLOGY), True,
                       streams)
    assert by_path == entailed == {("t2",), ("n2",)}
