"""EP-SPARQL's range index on a SEQ's pairs (``cep.ranges``): a FILTER conjunct comparing a
value of the left mapping with one of the right mapping finds the partners by bisection
over exact numbers, and leaves every other value to the FILTER. Hand-worked cases where it
applies and where it must not (doubles, non-numbers, errors, ``||``, unbound variables,
OPTIONALSEQ, consuming policies), each also checked against the reference evaluator, and a
differential test over mixed literals."""

from __future__ import annotations

from collections import Counter

import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.algebra.scope import nodes
from sepia.engine.cep.event_trees import EventFilter
from sepia.engine.cep.ranges import PairTest, RangeIndex
from sepia.engine.plan.planner import plan
from sepia.engine.r2r.numeric import UNSURE
from sepia.lang import parse_query
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.stream import StreamElement
from sepia.rdf.vocabulary import XSD
from sepia.runtime.local import run
from sepia.semantics import evaluate

from ..support import assert_agrees

EX = "http://example.org/"
S1 = EX + "s1"
Object = ox.NamedNode | ox.Literal


def lit(text: str, kind: str = "integer") -> ox.Literal:
    return ox.Literal(text, datatype=ox.NamedNode(XSD + kind))


def stream(*events: tuple[int, str, str, Object]) -> dict[str, list[StreamElement]]:
    """One point element per (time, subject, predicate, object) of the example namespace."""
    return {
        S1: [
            StreamElement(
                S1, f"{EX}g{i}", t, t,
                (ox.Triple(ox.NamedNode(EX + s), ox.NamedNode(EX + p), o),),
            )
            for i, (t, s, p, o) in enumerate(events)
        ]
    }


def query(where: str, policy: str = "") -> str:
    return f"PREFIX : <{EX}>\nSELECT *\n{policy}\nWHERE {{ {where} }}"


def answers(text: str, data: dict[str, list[StreamElement]]) -> list[tuple]:
    """(t, interval, the bindings by name, lexical forms) of each result; the reference
    must agree."""
    parsed = parse_query(text)
    got = list(run([("q", parsed)], data))
    assert Counter(got) == Counter(evaluate(parsed, data, name="q"))
    plain = lambda r: tuple(sorted((k, v.value.removeprefix(EX)) for k, v in r.binding.items()))  # noqa: E731
    return sorted((r.t, r.interval, plain(r)) for r in got)


def pair_tests(text: str) -> list[PairTest]:
    """The range indexes the plan of a query's event pattern uses."""
    tree = plan(parse_query(text), Dictionary()).kind.tree  # type: ignore[union-attr]
    return [f.pair for f in nodes(tree, EventFilter) if f.pair is not None]


PRICES = stream(
    (0, "a", "p", lit("10")),
    (1, "a", "p", lit("7.5", "decimal")),
    (2, "b", "p", lit("100")),
    (3, "a", "q", lit("6")),
    (4, "a", "q", lit("5.25", "decimal")),
    (5, "b", "q", lit("7.0", "decimal")),
)
"""a's prices 10 and 7.5 (keys ?y * 0.7: 7.0 and 5.25), then 6 and 5.25; b's 100, then 7."""


def test_a_drop_finds_its_partners_by_bisection():
    """?z < ?y * 0.7: 6 < 7.0 (not < 5.25); 5.25 < 7.0 (not < 5.25, equal); b: 7.0 < 70."""
    text = query("{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(?z < ?y * 0.7)")
    assert [t.operator for t in pair_tests(text)] == [">"]  # key ?y * 0.7 > probe ?z
    assert answers(text, PRICES) == [
        (3, (0, 3), (("x", "a"), ("y", "10"), ("z", "6"))),
        (4, (0, 4), (("x", "a"), ("y", "10"), ("z", "5.25"))),
        (5, (2, 5), (("x", "b"), ("y", "100"), ("z", "7"))),
    ]


def test_equal_values_of_different_types_meet_at_the_boundary():
    """7.5 * 0.7 = 5.25 (decimal) <= 6 and <= 5.25 (equal); 10 * 0.7 = 7.0 is above both;
    only = 5.25 under =. An integer and a decimal of one value are equal."""
    le = query("{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(?y * 0.7 <= ?z)")
    assert answers(le, PRICES) == [
        (3, (1, 3), (("x", "a"), ("y", "7.5"), ("z", "6"))),
        (4, (1, 4), (("x", "a"), ("y", "7.5"), ("z", "5.25"))),
    ]
    eq = query("{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(?z = ?y * 0.7 && ?z != ?y)")
    assert [t.whole for t in pair_tests(eq)] == [False]  # the other conjunct is tested
    assert answers(eq, PRICES) == [(4, (1, 4), (("x", "a"), ("y", "7.5"), ("z", "5.25")))]
    integers = stream((0, "a", "p", lit("7")), (1, "a", "q", lit("7.0", "decimal")))
    assert answers(query("{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(?z >= ?y)"), integers) == [
        (1, (0, 1), (("x", "a"), ("y", "7"), ("z", "7")))
    ]


def test_a_double_is_compared_as_sparql_promotes_it():
    """A decimal meeting a double is compared as a double: 0.3 (decimal) > 0.3 (double) is
    false in SPARQL, though the decimal 0.3 is above the double nearest 0.3; the double
    1e1 > 9.5 holds."""
    data = stream(
        (0, "a", "p", lit("0.3", "double")),
        (1, "a", "p", lit("9.5", "decimal")),
        (2, "a", "q", lit("0.3", "decimal")),
        (3, "a", "q", lit("1e1", "double")),
    )
    assert answers(query("{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(?z > ?y)"), data) == [
        (3, (0, 3), (("x", "a"), ("y", "0.3"), ("z", "10"))),
        (3, (1, 3), (("x", "a"), ("y", "9.5"), ("z", "10"))),
    ]


def test_non_numbers_are_left_to_the_filter():
    """Strings compare by their text ("b" < "c"); a string or an IRI meeting a number is an
    error, which rejects the pair; a number meeting a number still pairs (3 < 4)."""
    data = stream(
        (0, "a", "p", lit("c", "string")),
        (1, "a", "p", ox.NamedNode(EX + "n")),
        (2, "a", "p", lit("4")),
        (3, "a", "q", lit("b", "string")),
        (4, "a", "q", lit("3")),
    )
    assert answers(query("{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(?z < ?y)"), data) == [
        (3, (0, 3), (("x", "a"), ("y", "c"), ("z", "b"))),
        (4, (2, 4), (("x", "a"), ("y", "4"), ("z", "3"))),
    ]


def test_an_error_on_one_side_rejects_the_pair_under_and():
    """?y * 2 on an IRI is an error: the pair is dropped even though ?x = :a holds."""
    data = stream((0, "a", "p", ox.NamedNode(EX + "n")), (1, "a", "p", lit("1")),
                  (2, "a", "q", lit("5")))  # fmt: skip
    text = query("{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(?z > ?y * 2 && ?x = :a)")
    assert answers(text, data) == [(2, (1, 2), (("x", "a"), ("y", "1"), ("z", "5")))]


def test_no_index_under_or():
    """?z < ?y || ?x = :a keeps every pair of a, whatever its prices."""
    text = query("{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(?z < ?y * 0.7 || ?x = :a)")
    assert pair_tests(text) == []
    assert answers(text, PRICES) == [
        (3, (0, 3), (("x", "a"), ("y", "10"), ("z", "6"))),
        (3, (1, 3), (("x", "a"), ("y", "7.5"), ("z", "6"))),
        (4, (0, 4), (("x", "a"), ("y", "10"), ("z", "5.25"))),
        (4, (1, 4), (("x", "a"), ("y", "7.5"), ("z", "5.25"))),
        (5, (2, 5), (("x", "b"), ("y", "100"), ("z", "7"))),
    ]


def test_no_index_on_a_variable_the_left_may_leave_unbound():
    """Under UNION ?y is bound by one branch only: the :r branch pairs with an unbound
    ?y, an error, so only 10 meets 6."""
    data = stream((0, "a", "p", lit("10")), (1, "a", "r", lit("1")), (2, "a", "q", lit("6")))
    text = query("{ { ?x :p ?y } UNION { ?x :r ?w } } SEQ { ?x :q ?z } FILTER(?z < ?y)")
    assert pair_tests(text) == []
    assert answers(text, data) == [(2, (0, 2), (("x", "a"), ("y", "10"), ("z", "6")))]


def test_no_index_for_optionalseq():
    """p@0 OPTIONALSEQ q@2: the optional part's FILTER rejects 6 < 5, so q@2 is reported
    alone; 6 < 10 joins."""
    data = stream((0, "a", "p", lit("5")), (1, "b", "p", lit("10")), (2, "a", "q", lit("6")),
                  (3, "b", "q", lit("6")))  # fmt: skip
    text = query("{ ?x :p ?y } OPTIONALSEQ { ?x :q ?z } FILTER(?z < ?y)")
    assert pair_tests(text) == []
    assert answers(text, data) == [
        (3, (1, 3), (("x", "b"), ("y", "10"), ("z", "6"))),
    ]


def test_no_index_under_a_consuming_policy():
    """CHRONOLOGICAL: q@3 takes the earliest p it passes with (10), q@4 the next one
    left (7.5); nothing is left for q@5 of b but b's own 100."""
    text = query("{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(?z < ?y)", "EVENT POLICY CHRONOLOGICAL")
    assert pair_tests(text) == []
    assert_agrees(text, PRICES)


def test_a_rise_after_a_drop_reads_the_kept_pairs():
    """W8's pattern: the drop pairs (?p1, ?p2) are kept and indexed by ?p1 * 1.05 for the
    rise: 10 -> 6 -> 11 (11 > 10.5) within 5; 10 -> 6 -> 10.5 is no rise; 7.5 does not
    drop to 6."""
    data = stream(
        (0, "a", "p", lit("10")),
        (1, "a", "p", lit("7.5", "decimal")),
        (2, "a", "p", lit("6")),
        (3, "a", "p", lit("10.5", "decimal")),
        (4, "a", "p", lit("11")),
        (9, "a", "p", lit("20")),
    )
    text = query(
        "{ ?c :p ?p1 } SEQ { ?c :p ?p2 } SEQ { ?c :p ?p3 }"
        " FILTER(?p2 < ?p1 * 0.7 && ?p3 > ?p1 * 1.05 && getDURATION() < 5)"
    )
    assert sorted(t.operator for t in pair_tests(text)) == ["<", ">"]
    assert answers(text, data) == [
        (4, (0, 4), (("c", "a"), ("p1", "10"), ("p2", "6"), ("p3", "11"))),
    ]


def test_the_index_orders_exact_keys_and_leaves_the_rest():
    """Rows (company, price): keys are the prices; an unsure key (a double's UNSURE here)
    is always left to the filter, as is every key when the probe is unsure."""
    values = {1: 5, 2: 3, 3: UNSURE, 4: 9, 5: 4}
    read = lambda row: values[row[1]]  # noqa: E731
    test = PairTest(read, read, ">", (0,), True, "", None)  # type: ignore[arg-type]
    index = RangeIndex(test)
    for position, row in enumerate([(7, 1), (7, 2), (7, 3), (7, 4), (8, 5)]):
        index.add(position, row)
    assert index.partners((7, 5)) == ([0, 3], [2])  # keys 5 and 9 above 4
    assert index.partners((7, 3)) == ([], [1, 0, 3, 2])  # unsure probe: all, sorted first
    assert index.partners((8, 2)) == ([4], [])
    assert index.partners((None, 2)) is None


CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large]
OBJECTS = [
    lit("1"), lit("2"), lit("3"), lit("-2"), lit("2.0", "decimal"), lit("1.5", "decimal"),
    lit("0.3", "decimal"), lit("0.3", "double"), lit("2e0", "double"), lit("a", "string"),
    lit("2", "string"), ox.NamedNode(EX + "n"), lit("NaN", "double"),
]


@st.composite
def ranged_queries(draw) -> str:
    """A SEQ of two or three groups and a FILTER comparing a left value with a right one,
    sometimes with another conjunct or a duration bound."""
    left = draw(st.sampled_from(["?y", "?y * 0.5", "?y + 1", "?y * ?y", "0.3 * ?y"]))
    right = draw(st.sampled_from(["?z", "?z * 2", "?z - 1"]))
    op = draw(st.sampled_from(["<", "<=", ">", ">=", "=", "!="]))
    comparison = f"{right} {op} {left}" if draw(st.booleans()) else f"{left} {op} {right}"
    extra = draw(st.sampled_from(["", " && getDURATION() < 6", " && ?x != :b", " || ?x = :a"]))
    pattern = "{ ?x :p ?y } SEQ { ?x :q ?z }"
    if draw(st.booleans()):
        pattern += " SEQ { ?x ?k ?w }"
    return query(f"{pattern} FILTER({comparison}{extra})")


@st.composite
def mixed_streams(draw) -> dict[str, list[StreamElement]]:
    """Elements of two companies' :p and :q values, drawn from mixed literals (half of
    them exact numbers, so that most streams have answers)."""
    t, events = 0, []
    for _ in range(draw(st.integers(3, 10))):
        t += draw(st.integers(0, 3))
        s, p = draw(st.sampled_from("aab")), draw(st.sampled_from("pq"))
        drawn = OBJECTS[:7] if draw(st.booleans()) else OBJECTS
        events.append((t, s, p, draw(st.sampled_from(drawn))))
    return stream(*events)


@settings(max_examples=150, deadline=None, suppress_health_check=CHECKS)
@given(ranged_queries(), mixed_streams())
def test_range_indexed_pairs_agree_with_the_reference(text, data):
    assert_agrees(text, data)


def test_a_bucket_partner_is_still_tested_on_slots_outside_the_bucket():
    """The left may bind ?w (one UNION branch), the right always does: the index's bucket
    is ?x only, so a partner binding another ?w is not compatible. a's 10 pairs with 5
    (w 2) alone; 10 with w 1 does not."""
    def graph(t: int, *triples: tuple[str, str, Object]) -> StreamElement:
        return StreamElement(S1, f"{EX}g{t}", t, t, tuple(
            ox.Triple(ox.NamedNode(EX + s), ox.NamedNode(EX + p), o) for s, p, o in triples
        ))

    data = {S1: [
        graph(0, ("a", "p", lit("10")), ("a", "r", lit("1"))),
        graph(1, ("a", "q", lit("5")), ("a", "r", lit("2"))),
    ]}
    text = query(
        "{ { ?x :p ?y } UNION { ?x :p ?y . ?x :r ?w } } SEQ { ?x :q ?z . ?x :r ?w }"
        " FILTER(?z < ?y)"
    )
    assert len(pair_tests(text)) == 1  # the index serves this SEQ
    assert answers(text, data) == [
        (1, (0, 1), (("w", "2"), ("x", "a"), ("y", "10"), ("z", "5"))),
    ]
