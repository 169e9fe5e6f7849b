"""Chains of EP-SPARQL SEQs under range comparisons (``cep.seq_chains``, W8's
drop-then-rise): which patterns take the chain, hand-worked answers where a guard matters,
and a differential test over drawn chains and mixed literals that counts how many examples
the chain answered."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from unittest import mock

import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.engine import explain
from sepia.engine.cep import seq_chains
from sepia.engine.cep.seq_chains import ChainState, seq_chain
from sepia.engine.forgetting import Forgetting
from sepia.engine.plan.planner import plan
from sepia.lang import parse_query
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.stream import StreamElement

from ..support import assert_agrees, assert_resumes
from .test_epsparql_ranges import EX, OBJECTS, S1, answers, lit, query, stream

W8 = (
    "{ ?c :p ?p1 } SEQ { ?c :p ?p2 } SEQ { ?c :p ?p3 }"
    " FILTER(?p2 < ?p1 * 0.7 && ?p3 > ?p1 * 1.05 && getDURATION() < 5)"
)


def chain_of(where: str, policy: str = "") -> seq_chains.SeqChain | None:
    tree = plan(parse_query(query(where, policy)), Dictionary()).kind.tree  # type: ignore[union-attr]
    return seq_chain(tree)


def test_w8_takes_the_chain_and_one_level_does_not():
    """Two levels (the drop, then the rise) make a chain; one SEQ alone is left to the
    row engine's range index, as are a consuming policy and a chain under another SEQ."""
    found = chain_of(W8)
    assert found is not None and len(found.levels) == 2
    assert chain_of("{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(?z < ?y)") is None
    assert chain_of(W8, "EVENT POLICY CHRONOLOGICAL") is None
    assert chain_of("{ ?c :p ?p1 } SEQ { ?c :p ?p2 } SEQ { ?c :p ?p3 } FILTER(?p2 < ?p1)") is None
    under_or = W8.replace("&& getDURATION() < 5", "|| ?c = :a")
    assert chain_of(under_or) is None


def test_only_what_the_chain_alone_reads_at_each_arrival_is_transient():
    """W8's three price patterns, and an EQUALS base's two, are read at each arrival only;
    the two patterns of a covering join (read over every earlier arrival by each new
    mapping) and a BGP of two patterns (joined with its earlier occurrences) are not."""
    assert len(chain_of(W8).transient()) == 3  # type: ignore[union-attr]
    rise = " SEQ { ?c :p ?p2 } SEQ { ?c :p ?p3 } FILTER(?p2 < ?p1 && ?p3 > ?p1)"
    assert len(chain_of("{ ?c :p ?p1 } EQUALS { ?c :q ?k }" + rise).transient()) == 4  # type: ignore[union-attr]
    assert len(chain_of("{ { ?c :p ?p1 } { ?c :q ?k } }" + rise).transient()) == 2  # type: ignore[union-attr]
    assert len(chain_of("{ ?c :p ?p1 . ?c :q ?k }" + rise).transient()) == 2  # type: ignore[union-attr]


def test_explain_says_which_patterns_take_the_chain():
    def explained(text: str) -> str:
        dictionary = Dictionary()
        return explain(plan(parse_query(text), dictionary), dictionary)

    assert "sequence chain: the 2 range-indexed SEQ levels" in explained(query(W8)).splitlines()[-1]
    one = query("{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(?z < ?y)")
    assert "sequence chain" not in explained(one)
    assert "sequence chain" not in explained(query(W8, "EVENT POLICY CHRONOLOGICAL"))


def test_a_rise_after_a_drop_within_the_horizon():
    """10 -> 6 -> 11 (11 > 10.5) within 5; 10 -> 6 -> 10.5 is no rise; 20 at 9 is past the
    horizon of 10 (and 7.5 does not drop to 6)."""
    data = stream(
        (0, "a", "p", lit("10")),
        (1, "a", "p", lit("7.5", "decimal")),
        (2, "a", "p", lit("6")),
        (3, "a", "p", lit("10.5", "decimal")),
        (4, "a", "p", lit("11")),
        (9, "a", "p", lit("20")),
    )
    assert answers(query(W8), data) == [
        (4, (0, 4), (("c", "a"), ("p1", "10"), ("p2", "6"), ("p3", "11"))),
    ]


def test_values_the_index_cannot_order_are_tested_by_the_filter():
    """A string at either end is an error against a number (no pair); a double is
    compared as SPARQL promotes it: 1e1 drops to 6 (6 < 7.0) and rises to 11."""
    data = stream(
        (0, "a", "p", lit("1e1", "double")),
        (1, "a", "p", lit("x", "string")),
        (2, "a", "p", lit("6")),
        (3, "a", "p", lit("y", "string")),
        (4, "a", "p", lit("11")),
    )
    assert answers(query(W8), data) == [
        (4, (0, 4), (("c", "a"), ("p1", "10"), ("p2", "6"), ("p3", "11"))),
    ]


def test_a_partner_binding_another_slot_is_tested_for_compatibility():
    """The second UNION branch of the first operand binds ?w, the rise's right always does:
    ?w is outside the index's bucket (?c), so the drop pair holding w 1 is no partner of
    the rises holding r@2 (w 2), only of those holding r@3 (w 1: q@2 and q@3 each with it,
    both over [2, 3]; a BGP joins occurrences of different elements)."""

    def graph(t: int, *triples: tuple[str, str, ox.NamedNode | ox.Literal]) -> StreamElement:
        return StreamElement(S1, f"{EX}g{t}", t, t, tuple(
            ox.Triple(ox.NamedNode(EX + s), ox.NamedNode(EX + p), o) for s, p, o in triples
        ))  # fmt: skip

    data = {S1: [
        graph(0, ("a", "s", lit("10")), ("a", "r", lit("1"))),
        graph(1, ("a", "p", lit("5"))),
        graph(2, ("a", "q", lit("20")), ("a", "r", lit("2"))),
        graph(3, ("a", "q", lit("30")), ("a", "r", lit("1"))),
    ]}  # fmt: skip
    where = (
        "{ { ?c :p ?p1 } UNION { ?c :s ?p1 . ?c :r ?w } } SEQ { ?c :p ?p2 }"
        " SEQ { ?c :q ?p3 . ?c :r ?w } FILTER(?p2 < ?p1 && ?p3 > ?p1)"
    )
    assert chain_of(where) is not None
    assert answers(query(where), data) == [
        (3, (0, 3), (("c", "a"), ("p1", "10"), ("p2", "5"), ("p3", "20"), ("w", "1"))),
        (3, (0, 3), (("c", "a"), ("p1", "10"), ("p2", "5"), ("p3", "30"), ("w", "1"))),
    ]


def test_what_starts_by_the_horizon_is_skipped_before_it_is_forgotten():
    """Forgetting runs every half horizon (every 2 here): at 5 the last ran at 4 (bound
    -1), so the drop 10@0 -> 6@1 is still held, but it starts at the bound (5 - 5): a rise
    to 11 at 5 would last 5, not under 5."""
    data = stream(
        (0, "a", "p", lit("10")), (1, "a", "p", lit("6")),
        (4, "b", "p", lit("1")), (5, "a", "p", lit("11")),
    )  # fmt: skip
    assert answers(query(W8), data) == []


def test_a_conjunct_beside_the_comparison_is_still_tested():
    """?p3 > ?p1 && ?p3 != ?p2 + 7 at the top level (the second reads both sides): the
    index finds 12 and 13, the FILTER keeps 13 only."""
    data = stream(
        (0, "a", "p", lit("10")), (1, "a", "p", lit("5")),
        (2, "a", "p", lit("12")), (3, "a", "p", lit("13")),
    )
    where = (
        "{ ?c :p ?p1 } SEQ { ?c :p ?p2 } SEQ { ?c :p ?p3 }"
        " FILTER(?p2 < ?p1 && ?p3 > ?p1 && ?p3 != ?p2 + 7)"
    )
    assert chain_of(where) is not None
    assert answers(query(where), data) == [
        (3, (0, 3), (("c", "a"), ("p1", "10"), ("p2", "5"), ("p3", "13"))),
    ]


CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


KEYS = {"": lambda v: v, " * 0.5": lambda v: v * Decimal("0.5"), " + 1": lambda v: v + 1}
PLANTED = {"<": -1, "<=": 0, ">": 1, ">=": 0, "=": 0}
"""How far from the key a planted right value lies for each comparison to hold."""


@st.composite
def chains(draw) -> tuple[str, dict[str, list[StreamElement]]]:
    """A query of two or three SEQ levels, each with a comparison of a left value with its
    right one (the first operand sometimes an EQUALS, as W8 under RDFS; sometimes another
    conjunct or a duration bound), and a stream of two companies' :p and :q values (mostly
    exact numbers, some elements intervals) with one answer planted among them."""
    names = ["?y", "?z", "?w", "?v"]
    equals = draw(st.booleans())
    pattern = "{ ?x :p ?y }" + (" EQUALS { ?x :q ?u }" if equals else "")
    conjuncts, values = [], [Decimal(draw(st.sampled_from([2, 3, 4, 10])))]
    planted = [[(":p", values[0])] + ([(":q", Decimal(1))] if equals else [])]
    for level in range(1, draw(st.sampled_from([2, 2, 3])) + 1):
        predicate = draw(st.sampled_from([":p", ":p", ":q"]))
        pattern += f" SEQ {{ ?x {predicate} {names[level]} }}"
        left = draw(st.integers(0, level - 1))
        key, op = draw(st.sampled_from(sorted(KEYS))), draw(st.sampled_from(sorted(PLANTED)))
        conjuncts.append(f"{names[level]} {op} {names[left]}{key}")
        values.append(KEYS[key](values[left]) + PLANTED[op])
        planted.append([(predicate, values[-1])])
    extra = ["", "", "getDURATION() < 8", "?x != :b", "getSTARTTIME() >= 1"]
    conjuncts.append(draw(st.sampled_from(extra)))
    text = query(f"{pattern} FILTER({' && '.join(c for c in conjuncts if c)})")
    first = draw(st.integers(0, 3))
    plants = [
        StreamElement(S1, f"{EX}planted{i}", first + 2 * i, first + 2 * i, tuple(
            ox.Triple(ox.NamedNode(EX + "a"), ox.NamedNode(EX + p[1:]), lit(str(v), "decimal"))
            for p, v in triples
        ))
        for i, triples in enumerate(planted)
    ]
    merged = sorted(draw(noise()) + plants, key=lambda e: e.end)
    return text, {S1: merged}


@st.composite
def noise(draw) -> list[StreamElement]:
    """Two companies' :p and :q values (mostly exact numbers), some elements intervals."""
    t, elements = 0, []
    for number in range(draw(st.integers(2, 10))):
        t += draw(st.sampled_from([0, 1, 1, 2]))
        start = max(0, t - draw(st.sampled_from([0, 0, 0, 1, 2])))
        triples = []
        for _ in range(draw(st.integers(1, 2))):
            s, p = draw(st.sampled_from("aaaab")), draw(st.sampled_from("ppq"))
            drawn = OBJECTS[:7] if draw(st.integers(0, 4)) else OBJECTS
            triples.append(ox.Triple(ox.NamedNode(EX + s), ox.NamedNode(EX + p),
                                     draw(st.sampled_from(drawn))))  # fmt: skip
        elements.append(StreamElement(S1, f"{EX}g{number}", start, t, tuple(triples)))
    return elements


CHAINED = Counter()
"""Examples compared, and how many of them the chain answered at some arrival."""


@settings(max_examples=200, deadline=None, suppress_health_check=CHECKS)
@given(chains())
def _chains_agree(case):
    text, data = case
    answered = []
    real = ChainState.answer

    def counted(self: ChainState, t: int):
        found = real(self, t)
        answered.append(found is not None)
        return found

    with mock.patch.object(ChainState, "answer", counted):
        assert_agrees(text, data)
    CHAINED["compared"] += 1
    CHAINED["chained"] += any(answered)


def test_chains_agree_with_the_reference_on_the_chain():
    """Every drawn chain agrees with the reference, and most are answered by the chain
    (the others: no arrival with a right operand in scope)."""
    CHAINED.clear()
    _chains_agree()
    assert CHAINED["compared"] >= 50
    assert CHAINED["chained"] >= 0.8 * CHAINED["compared"], CHAINED


@settings(max_examples=60, deadline=None, suppress_health_check=CHECKS)
@given(chains())
def test_chains_agree_when_forgetting_at_every_advance(case):
    """The dictionary's collection does not walk the chain (every id it holds, the
    occurrences hold): collecting after every advance changes no answer."""
    with mock.patch.object(Forgetting, "due", lambda self, settled=True: True):
        assert_agrees(*case)


@settings(max_examples=40, deadline=None, suppress_health_check=CHECKS)
@given(chains(), st.data())
def test_chains_resume_from_a_snapshot(case, split):
    """A restored session rebuilds the chain by replaying the occurrences it kept."""
    text, data = case
    assert_resumes(text, data, split.draw(st.integers(0, len(data[S1]))))


def test_a_left_mapping_binding_a_new_slot_widens_what_partners_are_checked_on():
    """A level's index learns which slots its left mappings bind as they come: after
    rows binding slots 0 and 1 (0 the bucket), only slot 1 can make a partner
    incompatible; a later row binding slot 3 too adds it."""
    test = mock.Mock(slots=(0,), key=lambda row: row[1])
    index = seq_chains.LevelIndex(test)
    index.add([((7, 10, None, None), 0, 0)])
    assert index.outside == (1,)
    index.add([((7, 11, None, None), 1, 1), ((7, 12, None, None), 1, 1)])
    assert index.outside == (1,)
    index.add([((7, 13, None, 5), 2, 2)])
    assert index.outside == (1, 3)
    assert index.without(0).outside == (1, 3)
    assert [m[0][1] for m in index.buckets[(7,)].items] == [10, 11, 12, 13]


def test_a_pair_is_merged_by_one_getter_per_set_of_right_slots():
    """Hand-worked: the right's bound slots are written over the left row; a left mapping
    ending at or after the right's start, or starting by the floor, makes no pair; one
    getter serves every right row binding the same slots."""
    merges = seq_chains.Merges()
    lefts = [((1, 10, 20, None), 0, 1), ((1, 11, 21, None), 0, 5), ((1, 12, 22, None), -3, 2)]
    right = ((1, None, None, 30), 4, 4)
    assert merges.joined(lefts, right, -1, False) == [((1, 10, 20, 30), 0, 4)]
    assert merges.joined(lefts, ((1, None, 25, 31), 3, 6), -5, True) == []
    assert merges.joined(lefts, ((1, None, None, 32), 6, 6), -5, False) == [
        ((1, 10, 20, 32), 0, 6), ((1, 11, 21, 32), 0, 6), ((1, 12, 22, 32), -3, 6),
    ]
    assert len(merges.getters) == 2
