"""The reasoning benchmark at small sizes: the generated hierarchy has the requested shape,
every method gives the same answers, and the independent OWL 2 RL reasoner agrees with the
schema-closure approach except where OWL RL and the spec's RDFS differ."""

from __future__ import annotations

import pyoxigraph as ox

from sepia.reasoning.bench import (
    V,
    background_timings,
    class_hierarchy,
    stream_reasoning_delays,
)
from sepia.reasoning.schema import Schema


def test_class_hierarchy_has_the_count_and_the_depth():
    root = ox.NamedNode("http://example.org/plants#Root")
    hierarchy = class_hierarchy(3000, 8, root, seed=1)
    assert len(hierarchy) == len({t[0] for t in hierarchy}) == 3000
    schema = Schema.of(hierarchy, V)
    depths = [len(schema.super_classes[t[0]]) for t in hierarchy]
    assert max(depths) == 8
    assert all(root in schema.super_classes[t[0]] for t in hierarchy)


def test_stream_reasoning_methods_agree():
    numbers = stream_reasoning_delays(classes=400, depth=8, triples=300, reclose_sample=2,
                                      window=50)
    assert numbers["agree"] and numbers["reclose_agrees"]
    assert numbers["classes"] == 400 + 10 + 2
    assert 0 < numbers["instances_of_concern"] < 300
    assert numbers["expansion"]["mean_us"] > 0


def test_reasonable_differs_from_the_spec_closure_only_by_owl_and_rdfs5():
    numbers = background_timings(3000)
    assert numbers["reasonable_extra"] == 0
    assert numbers["reasonable_owl_only"] > 0  # owl:Thing for every resource
    # reasonable does not chain rdfs:subPropertyOf (rdfs5): 40 properties in chains of 4
    # (p1 < p0, p2 < p1, p3 < p2, ...) give 3 derived triples per chain of 4: 10 * 3
    assert numbers["reasonable_misses"] == 30
