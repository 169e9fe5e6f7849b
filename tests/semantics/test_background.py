"""Time-varying background graphs (RSP-QL Definition 10) written as stamped versions, and
the evaluator reading G(t) at each evaluation (RSP-QL Examples 4 and 10, by hand)."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest

from sepia.io.background import load_background
from sepia.lang import parse_query
from sepia.rdf.background import Background
from sepia.rdf.time import TimeKind
from sepia.semantics import evaluate

from .support import EX, element, iri
from .test_oracle import streams as e1_streams

PREFIXES = "@prefix : <http://example.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
SHOPS = (
    PREFIXES
    + """
:service :name "coupons" .
:v1 { :alice :owns :a . :bob :owns :b . }   :v1 prov:generatedAtTime 2 .
:v2 { :bob :owns :b . }                     :v2 prov:generatedAtTime 14 .
:sensor prov:generatedAtTime 5 .
"""
)
"""RSP-QL Example 4's G_shops: empty before 2, both shops in [2, 13], only B from 14. The
service name is unversioned; the sensor's stamp is data (no graph is called :sensor)."""


def load(tmp_path: Path, text: str, graph: str | None = None) -> ox.Store:
    path = tmp_path / "background.trig"
    path.write_text(text)
    return load_background([(graph, path)])


def names(triples) -> set[str]:
    return {" ".join(x.value.removeprefix(EX) for x in t) for t in triples}


def test_versions_of_the_default_graph(tmp_path):
    background = Background.of(load(tmp_path, SHOPS))
    (shops,) = background.varying.values()
    assert background.kind is TimeKind.ABSTRACT and shops.times == (2, 14)
    always = {"service name coupons", "sensor http://www.w3.org/ns/prov#generatedAtTime 5"}
    assert names(shops.at(1)) == always
    assert names(shops.at(2)) == names(shops.at(13)) == always | {"alice owns a", "bob owns b"}
    assert names(shops.at(14)) == always | {"bob owns b"}
    assert background.static == {}  # every graph of the file is versioned or a version


def test_versions_of_a_graph_given_on_the_command_line(tmp_path):
    # --data http://example.org/kb=PATH: the stamps land in :kb, so the versions are :kb's
    background = Background.of(load(tmp_path, SHOPS, EX + "kb"))
    assert list(background.varying) == [iri("kb")]
    assert names(background.varying[iri("kb")].at(14)) >= {"bob owns b", "service name coupons"}


def test_versions_sharing_a_time_are_merged_and_kinds_do_not_mix(tmp_path):
    text = PREFIXES + ":v1 { :a :p :b } :v1 prov:generatedAtTime 3 .\n"
    merged = text + ":v2 { :c :p :d } :v2 prov:generatedAtTime 3 .\n"
    (graph,) = Background.of(load(tmp_path, merged)).varying.values()
    assert graph.times == (3,) and names(graph.at(3)) == {"a p b", "c p d"}
    mixed = text + ':v2 { :c :p :d } :v2 prov:generatedAtTime "2026-01-01T00:00:00Z"^^'
    mixed += "<http://www.w3.org/2001/XMLSchema#dateTime> .\n"
    with pytest.raises(ValueError, match="mix"):
        Background.of(load(tmp_path, mixed))


E1 = """PREFIX : <http://example.org/>
SELECT ?shopper ?shop ?shop_owner ?coupon
FROM NAMED WINDOW :w1 ON :nearby [RANGE 5 STEP 2 START 1]
FROM NAMED WINDOW :w2 ON :coupons [RANGE 2 STEP 2]
REPORT ON WINDOW CLOSE OF :w2 AND NON EMPTY OF :w2
WHERE { WINDOW :w1 { ?shopper :isNearby ?shop } WINDOW :w2 { ?shop_owner :offers ?coupon }
        ?shop_owner :owns ?shop }"""


@pytest.mark.parametrize(
    ("after_13", "expected"),
    [
        # Example 4 as the paper tells it: only Bob from 14; E1's answer is unchanged
        (":bob :owns :b .", [(8, "carl"), (8, "eve"), (16, "diana")]),
        # Bob leaves instead: at 16 his coupon has no shop, the answer at 8 stays
        (":alice :owns :a .", [(8, "carl"), (8, "eve")]),
    ],
)
def test_e1_over_a_time_varying_default_graph(tmp_path, after_13, expected):
    text = SHOPS.replace(":bob :owns :b . }                     :v2", after_13 + " } :v2")
    results = evaluate(parse_query(E1), e1_streams(), load(tmp_path, text))
    assert [(r.t, r.values["shopper"].value.removeprefix(EX)) for r in results] == expected


def test_a_version_stamped_at_t_is_seen_at_t(tmp_path):
    # Alice's shop enters G_shops only at 8, the time of her coupon's evaluation
    text = PREFIXES + ":v1 { :alice :owns :a . } :v1 prov:generatedAtTime 8 .\n"
    results = evaluate(parse_query(E1), e1_streams(), load(tmp_path, text))
    assert [(r.t, r.values["shopper"].value.removeprefix(EX)) for r in results] == [
        (8, "carl"),
        (8, "eve"),
    ]


def test_a_gpm_reads_the_knowledge_base_as_it_was_at_its_event(tmp_path):
    # :kb says l1 is hot from 0 and cold from 10. A = {?x :at ?l} with l hot, B = {?y :leaves
    # ?l}; x1 at l1 @5, y1 leaves @7, x2 at l1 @15, y2 leaves @17. Read at each event's time
    # only x1 is an A (one match, [5, 7]); read at the end neither is, at 0 both are.
    kb = PREFIXES + ":k0 { :l1 a :Hot } :k0 prov:generatedAtTime 0 .\n"
    kb += ":k1 { :l1 a :Cold } :k1 prov:generatedAtTime 10 .\n"
    s = EX + "s"
    stream = {
        s: [
            element(5, ("x1", "at", "l1"), stream=s),
            element(7, ("y1", "leaves", "l1"), stream=s),
            element(15, ("x2", "at", "l1"), stream=s),
            element(17, ("y2", "leaves", "l1"), stream=s),
        ]
    }
    text = (
        "PREFIX : <http://example.org/> SELECT ?x ?y WITHIN 100 FROM STREAM S1 :s "
        "WHERE { SEQ(A ; B) DEFINE GPM A ON S1 { ?x :at ?l GRAPH :kb { ?l a :Hot } } "
        "DEFINE GPM B ON S1 { ?y :leaves ?l } }"
    )
    results = evaluate(parse_query(text), stream, load(tmp_path, kb, EX + "kb"))
    assert [(r.t, r.interval, r.values["x"], r.values["y"]) for r in results] == [
        (7, (5, 7), iri("x1"), iri("y1"))
    ]


def test_versions_in_another_kind_of_time_than_the_streams_are_an_error(tmp_path):
    text = PREFIXES + ':v1 { :alice :owns :a } :v1 prov:generatedAtTime "2026-01-01T00:00:00Z"^^'
    text += "<http://www.w3.org/2001/XMLSchema#dateTime> .\n"
    with pytest.raises(ValueError, match="dateTime time but the run's time is abstract"):
        evaluate(parse_query(E1), e1_streams(), load(tmp_path, text))
