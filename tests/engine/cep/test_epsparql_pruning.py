"""EP-SPARQL pruning on hand-worked cases: a top-level ``getDURATION() < d`` drops partial
mappings at every operand of a growing pattern (SEQ, EQUALS, the covering join, UNION), and
a FILTER conjunct is applied below the top only where that is exact. Each case states the
answer worked out by hand and checks it against the reference evaluator too; the cases
where pruning must not apply (``getDURATION() > d``, ``||``, OPTIONALSEQ's optional part,
errors) would give a different answer if it did."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pyoxigraph as ox

from sepia.engine.cep.epsparql import Horizon, Solutions
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind
from sepia.rdf.vocabulary import XSD
from sepia.runtime.local import run
from sepia.semantics import evaluate

EX = "http://example.org/"
S1 = EX + "s1"


def term(value: str | int) -> ox.NamedNode | ox.Literal:
    """An integer literal for a number, else an IRI of the example namespace."""
    return (
        ox.Literal(str(value), datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer"))
        if isinstance(value, int)
        else ox.NamedNode(EX + value)
    )


def element(number: int, t: int, *triples: tuple[str, str, str | int]) -> StreamElement:
    """A point element at ``t`` holding ``triples`` (subject, predicate, object)."""
    graph = tuple(ox.Triple(term(s), term(p), term(o)) for s, p, o in triples)
    return StreamElement(S1, f"{EX}g{number}", t, t, graph)


def stream(*events: tuple[int, tuple[str, str, str | int]]) -> dict[str, list[StreamElement]]:
    return {S1: [element(i, t, triple) for i, (t, triple) in enumerate(events)]}


def answers(where: str, data: dict[str, list[StreamElement]]) -> list[tuple]:
    """(t, interval, the bindings by name) of each result; the reference must agree."""
    text = f"PREFIX : <{EX}>\nSELECT * WHERE {{ {where} }}"
    query = parse_query(text)
    got = list(run([("q", query)], data))
    assert Counter(got) == Counter(evaluate(query, data, name="q"))
    return sorted(
        (r.t, r.interval, tuple(sorted((k, _plain(v)) for k, v in dict(r.binding).items())))
        for r in got
    )


def _plain(value: ox.NamedNode | ox.Literal) -> str | int:
    return int(value.value) if isinstance(value, ox.Literal) else value.value.removeprefix(EX)


def test_the_duration_bound_prunes_a_sequence_of_three_exactly():
    """p@0 q@2 r@4: [0, 4] lasts 4 < 5; p@0 q@2 r@7 and p@0 q@6 r@7 last 7; p@3 q@6 r@7
    lasts 4 (p@3 does not end before q@2 starts)."""
    data = stream(
        (0, ("a", "p", 1)),
        (2, ("a", "q", 2)),
        (3, ("a", "p", 3)),
        (4, ("a", "r", 4)),
        (6, ("a", "q", 6)),
        (7, ("a", "r", 7)),
    )
    where = "{ ?x :p ?y } SEQ { ?x :q ?z } SEQ { ?x :r ?w } FILTER(getDURATION() < 5)"
    assert answers(where, data) == [
        (4, (0, 4), (("w", 4), ("x", "a"), ("y", 1), ("z", 2))),
        (7, (3, 7), (("w", 7), ("x", "a"), ("y", 3), ("z", 6))),
    ]


def test_a_lower_bound_on_the_duration_is_not_a_horizon():
    """getDURATION() > 3 grows with time: p@0 pairs with q@10 ([0, 10]), not q@1."""
    data = stream((0, ("a", "p", 0)), (1, ("a", "q", 1)), (10, ("a", "q", 10)))
    where = "{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(getDURATION() > 3)"
    assert answers(where, data) == [(10, (0, 10), (("x", "a"), ("y", 0), ("z", 10)))]


def test_a_duration_bound_under_or_is_not_a_horizon():
    """?y = 0 || getDURATION() < 3: p@0 still pairs with q@20, 20 after it; p@5 with q@6
    only."""
    data = stream((0, ("a", "p", 0)), (5, ("a", "p", 5)), (6, ("a", "q", 6)), (20, ("a", "q", 20)))
    where = "{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(?y = 0 || getDURATION() < 3)"
    assert answers(where, data) == [
        (6, (0, 6), (("x", "a"), ("y", 0), ("z", 6))),
        (6, (5, 6), (("x", "a"), ("y", 5), ("z", 6))),
        (20, (0, 20), (("x", "a"), ("y", 0), ("z", 20))),
    ]


def test_an_error_in_a_sunk_conjunct_rejects_as_it_does_on_top():
    """?z < ?y * 2 binds in the first SEQ and is applied there: ?y an IRI is an error (the
    pair is dropped, as the whole && would reject it), ?y = 5 passes (7 < 10)."""
    data = stream((0, ("a", "p", "b")), (1, ("a", "p", 5)), (2, ("a", "q", 7)), (3, ("a", "r", 0)))
    where = (
        "{ ?x :p ?y } SEQ { ?x :q ?z } SEQ { ?x :r ?w } FILTER(?z < ?y * 2 && getDURATION() < 10)"
    )
    assert answers(where, data) == [
        (3, (1, 3), (("w", 0), ("x", "a"), ("y", 5), ("z", 7))),
    ]


def test_a_conjunct_on_an_optional_variable_stays_on_top():
    """p@0 OPTIONALSEQ q@2 joins into ?y = 1, which ?y != 1 rejects: with a join, q@2 is
    not reported alone (applied to the optional part, the filter would report it)."""
    data = stream((0, ("a", "p", 1)), (2, ("a", "q", 2)))
    assert answers("{ ?x :p ?y } OPTIONALSEQ { ?x :q ?z } FILTER(?y != 1)", data) == []


def test_no_horizon_under_optionalseq():
    """p@0 OPTIONALSEQ q@5 is [0, 5], too long for getDURATION() < 3; q@5 alone is not
    reported, as the join exists (pruning p@0 away at 5 would report it)."""
    data = stream((0, ("a", "p", 1)), (5, ("a", "q", 5)))
    where = "{ ?x :p ?y } OPTIONALSEQ { ?x :q ?z } FILTER(getDURATION() < 3)"
    assert answers(where, data) == []


def test_the_duration_bound_prunes_under_equals():
    """p and q of one element, or of two elements at the same time, are EQUALS; then r:
    [0, 5] lasts 5, [2, 5] lasts 3 < 4, [2, 9] lasts 7."""
    data = {
        S1: [
            element(0, 0, ("a", "p", 1), ("a", "q", 2)),
            element(1, 2, ("a", "p", 3)),
            element(2, 2, ("a", "q", 4)),
            element(3, 5, ("a", "r", 5)),
            element(4, 9, ("a", "r", 9)),
        ]
    }
    where = "{ ?x :p ?y } EQUALS { ?x :q ?z } SEQ { ?x :r ?w } FILTER(getDURATION() < 4)"
    assert answers(where, data) == [
        (5, (2, 5), (("w", 5), ("x", "a"), ("y", 3), ("z", 4))),
    ]


def test_the_duration_bound_prunes_under_the_covering_join_and_union():
    """AND (two groups joined, stamped with the covering interval): p@0 q@3 is [0, 3],
    p@2 q@3 is [2, 3]; with r@5 only [2, 5] lasts less than 4. UNION: p@0, p@2 or q@3,
    then r@5: [2, 5] and [3, 5], not [0, 5]."""
    data = stream((0, ("a", "p", 0)), (2, ("a", "p", 2)), (3, ("a", "q", 3)), (5, ("a", "r", 5)))
    joined = "{ { ?x :p ?y } { ?x :q ?z } } SEQ { ?x :r ?w } FILTER(getDURATION() < 4)"
    assert answers(joined, data) == [
        (5, (2, 5), (("w", 5), ("x", "a"), ("y", 2), ("z", 3))),
    ]
    union = "{ { ?x :p ?y } UNION { ?x :q ?y } } SEQ { ?x :r ?w } FILTER(getDURATION() < 4)"
    assert answers(union, data) == [
        (5, (2, 5), (("w", 5), ("x", "a"), ("y", 2))),
        (5, (3, 5), (("w", 5), ("x", "a"), ("y", 3))),
    ]


def test_solutions_select_only_what_starts_after_the_bound():
    """Mappings (row, from, to) in end order; since = 3 keeps those starting at 4 or later,
    also those that end after 3 but started by it ([2, 6] is left out)."""
    found = Solutions()
    mappings = [((1, 10), 1, 1), ((1, 11), 2, 6), ((1, 12), 4, 7), ((2, 13), 5, 8), ((1, 14), 8, 9)]
    for m in mappings:
        found.add(m)
    assert found.select(8, (1, None), None, since=3) == [((1, 12), 4, 7)]
    assert found.select(9, None, None, since=3) == [
        ((1, 12), 4, 7),
        ((2, 13), 5, 8),
        ((1, 14), 8, 9),
    ]
    assert found.select(9, (1, None), None) == [m for m in mappings if m[0][0] == 1]
    assert found.select(9, (1, 14), None, since=0) == [((1, 14), 8, 9)]


def test_a_filter_made_of_the_horizon_is_implied_by_it():
    """Alone on top, getDURATION() <= 4 is the horizon: the mappings within it are those
    it keeps. p@0 q@4 lasts 4 (kept, at the bound), p@0 q@5 lasts 5 (not), p@3 q@5 2."""
    data = stream((0, ("a", "p", 0)), (3, ("a", "p", 3)), (4, ("a", "q", 4)), (5, ("a", "q", 5)))
    assert answers("{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(getDURATION() <= 4)", data) == [
        (4, (0, 4), (("x", "a"), ("y", 0), ("z", 4))),
        (4, (3, 4), (("x", "a"), ("y", 3), ("z", 4))),
        (5, (3, 5), (("x", "a"), ("y", 3), ("z", 5))),
    ]


def test_a_horizon_rounded_to_milliseconds_does_not_replace_its_filter():
    """<= 1.5 ms: the horizon rounds to 2 ms, keeping p@0 q@2 (2 ms), which the FILTER
    rejects; p@1 q@2 (1 ms) passes."""
    data = {S1: [
        dataclasses.replace(element(t, t, ("a", p, t)), kind=TimeKind.DATETIME)
        for t, p in ((0, "p"), (1, "p"), (2, "q"))
    ]}
    duration = ox.Literal("PT0.0015S", datatype=ox.NamedNode(f"{XSD}dayTimeDuration"))
    assert Horizon.of(duration, False) == Horizon(2, True, False, exact=False)
    bound = f'"PT0.0015S"^^<{XSD}dayTimeDuration>'
    found = answers(f"{{ ?x :p ?y }} SEQ {{ ?x :q ?z }} FILTER(getDURATION() <= {bound})", data)
    assert [(t, interval) for t, interval, _ in found] == [(2, (1, 2))]


def test_an_inner_duration_filter_is_not_the_horizon():
    """Inside, getDURATION() < 2 keeps p@0 q@1 but not p@0 q@3; on top, < 5 (the horizon)
    keeps p@0 q@1 r@4 and drops nothing else: the inner test still runs."""
    data = stream((0, ("a", "p", 0)), (1, ("a", "q", 1)), (3, ("a", "q", 3)), (4, ("a", "r", 4)))
    where = (
        "{ { ?x :p ?y } SEQ { ?x :q ?z } FILTER(getDURATION() < 2) } SEQ { ?x :r ?w }"
        " FILTER(getDURATION() < 5)"
    )
    assert answers(where, data) == [(4, (0, 4), (("w", 4), ("x", "a"), ("y", 0), ("z", 1)))]
