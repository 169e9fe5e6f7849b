"""Which basic event patterns can end a pattern's mappings (``end_leaves``): an arrival
that gives none of them a mapping completes nothing, and the tree is not evaluated."""

from __future__ import annotations

import pyoxigraph as ox

from sepia.engine.cep.epsparql import OccurrenceLeaf
from sepia.engine.cep.event_trees import (
    Combined,
    EventLeaf,
    EventSeq,
    Extreme,
    Negated,
    OptionalJoin,
    end_leaves,
)
from sepia.engine.r2r import operators as po

W = ox.NamedNode("http://e/w")
A, B, C = (EventLeaf(W, po.Table(((n,),))) for n in range(3))
OCCURRENCE = OccurrenceLeaf((), 0)


def test_a_sequence_ends_with_its_right_operand():
    """CQELS-CEP Example 6, SEQ(A, B, !C): NO_TAIL(SEQ(A, B), C) ends with B only."""
    assert end_leaves(Negated(EventSeq(A, B), C, None)) == [B]
    assert end_leaves(EventSeq(EventSeq(A, B), C)) == [C]
    assert end_leaves(Negated(A, B, C)) == [C]  # SEQ_WO
    assert end_leaves(Negated(None, A, B)) == [B]  # NO_HEAD


def test_joins_and_choices_end_with_either_operand():
    assert end_leaves(Combined("join", A, EventSeq(B, C))) == [A, C]
    assert end_leaves(Combined("or", A, B)) == [A, B]
    assert end_leaves(Extreme(EventSeq(A, B), last=True)) == [B]
    assert end_leaves(OptionalJoin(A, B, None, equal=False)) == [A, B]


def test_occurrences_end_anywhere():
    """EP-SPARQL's occurrence BGPs: not answered by kept leaves, no shortcut."""
    assert end_leaves(EventSeq(A, OCCURRENCE)) is None
    assert end_leaves(Combined("covering-join", OCCURRENCE, A)) is None
