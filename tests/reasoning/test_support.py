"""Support counts: a derived triple stays while any supporter is in the window, leaves with
the last one; a window's own schema triples change its rules."""

from __future__ import annotations

from collections import Counter

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.rdf.dictionary import Dictionary
from sepia.reasoning.rdfs import graph_closure
from sepia.reasoning.schema import Schema, Vocabulary
from sepia.reasoning.support import SupportCounter

from .vocabulary import schema, triple, triples

SENSORS = schema(
    "TemperatureSensor subClassOf Sensor",
    "Sensor subClassOf Device",
    "observes domain Sensor",
)


def test_a_derived_triple_leaves_with_its_last_supporter():
    window = SupportCounter(SENSORS)
    assert set(window.add(triple("s1 type TemperatureSensor"))) == triples(
        "s1 type TemperatureSensor", "s1 type Sensor", "s1 type Device")
    assert set(window.add(triple("s1 observes air"))) == triples("s1 observes air")
    assert window.remove(triple("s1 type TemperatureSensor")) == [
        triple("s1 type TemperatureSensor")]  # Sensor, Device: still supported by observes
    assert set(window.remove(triple("s1 observes air"))) == triples(
        "s1 observes air", "s1 type Sensor", "s1 type Device")
    assert len(window) == 0


def test_occurrences_are_counted():
    window = SupportCounter(SENSORS)
    window.add(triple("s1 observes air"))
    assert window.add(triple("s1 observes air")) == []
    assert window.remove(triple("s1 observes air")) == []
    assert triple("s1 type Device") in window
    with pytest.raises(KeyError):
        window.remove(triple("s2 observes air"))


def test_a_window_schema_triple_applies_to_the_whole_window_while_it_is_there():
    window = SupportCounter(SENSORS)
    window.add(triple("h1 type Hygrometer"))
    assert set(window.add(triple("Hygrometer subClassOf Sensor"))) == triples(
        "Hygrometer subClassOf Sensor", "Hygrometer subClassOf Device",
        "h1 type Sensor", "h1 type Device")
    assert set(window.remove(triple("Hygrometer subClassOf Sensor"))) == triples(
        "Hygrometer subClassOf Sensor", "Hygrometer subClassOf Device",
        "h1 type Sensor", "h1 type Device")
    assert set(window) == triples("h1 type Hygrometer")
    # a schema triple the background already has changes nothing
    assert window.add(triple("Sensor subClassOf Device")) == [triple("Sensor subClassOf Device")]


def test_update_reports_the_net_change():
    window = SupportCounter(SENSORS)
    window.add(triple("s1 type Sensor"))
    entered, left = window.update(
        added=[triple("s1 observes air")], removed=[triple("s1 type Sensor")])
    assert entered == triples("s1 observes air")
    assert left == set()  # s1 type Sensor / Device: supported by observes before and after


NAMES = st.sampled_from(["a", "b", "A", "B", "C", "p", "q"])
PREDICATES = st.sampled_from(["type", "p", "q", "subClassOf", "subPropertyOf", "domain"])
TRIPLES = st.tuples(NAMES, PREDICATES, NAMES)
BACKGROUND = schema("A subClassOf B", "p subPropertyOf q", "q domain C", "q range A")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), TRIPLES), max_size=25))
def test_counts_always_give_the_closure_of_the_current_window(steps):
    window = SupportCounter(BACKGROUND)
    content: Counter = Counter()
    closed: set = set()
    for adding, t in steps:
        if adding:
            content[t] += 1
            entered = set(window.add(t))
            assert not entered & closed
            closed |= entered
        elif content[t]:
            content[t] -= 1
            left = set(window.remove(t))
            assert left <= closed
            closed -= left
        expected = graph_closure(+content, BACKGROUND)
        assert set(window) == expected == closed


def test_dictionary_ids_give_the_same_closure_as_pyoxigraph_terms():
    ex = "http://example.org/"
    terms = Vocabulary.terms()
    schema_triples = [
        (ox.NamedNode(ex + "count"), terms.domain, ox.NamedNode(ex + "Traffic")),
        (ox.NamedNode(ex + "count"), terms.range, ox.NamedNode(ex + "Number")),
        (ox.NamedNode(ex + "Traffic"), terms.sub_class, ox.NamedNode(ex + "Observation")),
    ]
    reading = (ox.NamedNode(ex + "o1"), ox.NamedNode(ex + "count"), ox.Literal("130"))
    dictionary = Dictionary()
    encode = lambda t: tuple(map(dictionary.encode, t))  # noqa: E731
    ids = SupportCounter(Schema.of(map(encode, schema_triples), Vocabulary.encoded(dictionary)))
    decoded = {tuple(map(dictionary.decode, t)) for t in ids.add(encode(reading))}
    assert decoded == {
        reading,  # the literal object gets no type (rdfs3)
        (reading[0], terms.type, ox.NamedNode(ex + "Traffic")),
        (reading[0], terms.type, ox.NamedNode(ex + "Observation")),
    }
