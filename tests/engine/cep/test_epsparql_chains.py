"""Chains of EP-SPARQL SEQs under range comparisons (``cep.seq_chains``, W8's
drop-then-rise): which patterns take the chain, hand-worked answers where a guard matters,
and a differential test over drawn chains and mixed literals that counts how many examples
the chain answered."""

from __future__ import annotations

from collections import Counter
from unittest import mock

import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.engine import explain
from sepia.engine.cep import seq_chains
from sepia.engine.cep.seq_chains import ChainState, seq_chain
from sepia.engine.plan.planner import plan
from sepia.lang import parse_query
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.stream import StreamElement

from ..support import assert_agrees
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


def test_explain_says_which_patterns_take_the_chain():
    def explained(text: str) -> str:
        dictionary = Dictionary()
        return explain(plan(parse_query(text), dictionary), dictionary)

    assert "sequence chain: the 2 range-indexed SEQ levels" in explained(query(W8))
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
    """One UNION branch of the first operand binds ?w, the rise's right always does: ?w
    is outside the index's bucket (?c), so the drop pair holding w 1 is no partner of the
    rise holding w 2, while the one without ?w is."""
    def graph(t: int, *triples: tuple[str, str, ox.NamedNode | ox.Literal]) -> StreamElement:
        return StreamElement(S1, f"{EX}g{t}", t, t, tuple(
            ox.Triple(ox.NamedNode(EX + s), ox.NamedNode(EX + p), o) for s, p, o in triples
        ))

    data = {S1: [
        graph(0, ("a", "p", lit("10")), ("a", "r", lit("1"))),
        graph(1, ("a", "p", lit("5"))),
        graph(2, ("a", "q", lit("20")), ("a", "r", lit("2"))),
    ]}
    where = (
        "{ { ?c :p ?p1 } UNION { ?c :p ?p1 . ?c :r ?w } } SEQ { ?c :p ?p2 }"
        " SEQ { ?c :q ?p3 . ?c :r ?w } FILTER(?p2 < ?p1 && ?p3 > ?p1)"
    )
    assert chain_of(where) is not None
    assert answers(query(where), data) == [
        (2, (0, 2), (("c", "a"), ("p1", "10"), ("p2", "5"), ("p3", "20"), ("w", "2"))),
    ]


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


@st.composite
def chain_queries(draw) -> str:
    """Two or three SEQ levels, each with a comparison of a left value with its right one;
    the first operand sometimes an EQUALS (W8 under RDFS), sometimes another conjunct or
    a duration bound."""
    names = ["?y", "?z", "?w", "?v"]
    levels = draw(st.sampled_from([2, 2, 3]))
    first = draw(st.sampled_from(["{ ?x :p ?y }", "{ ?x :p ?y } EQUALS { ?x :q ?u }"]))
    pattern, conjuncts = first, []
    for level in range(1, levels + 1):
        pattern += f" SEQ {{ ?x {draw(st.sampled_from([':p', ':p', ':q']))} {names[level]} }}"
        left = draw(st.sampled_from(names[:level]))
        key = draw(st.sampled_from([left, f"{left} * 0.5", f"{left} + 1"]))
        op = draw(st.sampled_from(["<", "<=", ">", ">=", "<", ">", "<=", ">=", "="]))
        conjuncts.append(f"{names[level]} {op} {key}")
    conjuncts += [draw(st.sampled_from(["", "", "getDURATION() < 8", "?x != :b"]))]
    return query(f"{pattern} FILTER({' && '.join(c for c in conjuncts if c)})")


@st.composite
def chain_streams(draw) -> dict[str, list[StreamElement]]:
    """Two companies' :p and :q values (mostly exact numbers), some elements intervals."""
    t, elements = 0, []
    for number in range(draw(st.integers(8, 16))):
        t += draw(st.sampled_from([0, 1, 1, 2]))
        start = max(0, t - draw(st.sampled_from([0, 0, 0, 1, 2])))
        triples = []
        for _ in range(draw(st.integers(1, 2))):
            s, p = draw(st.sampled_from("aaaab")), draw(st.sampled_from("ppq"))
            drawn = OBJECTS[:7] if draw(st.integers(0, 4)) else OBJECTS
            triples.append(ox.Triple(ox.NamedNode(EX + s), ox.NamedNode(EX + p),
                                     draw(st.sampled_from(drawn))))  # fmt: skip
        elements.append(StreamElement(S1, f"{EX}g{number}", start, t, tuple(triples)))
    return {S1: elements}


CHAINED = Counter()
"""Examples compared, and how many of them the chain answered at some arrival."""


@settings(max_examples=200, deadline=None, suppress_health_check=CHECKS)
@given(chain_queries(), chain_streams())
def _chains_agree(text, data):
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
