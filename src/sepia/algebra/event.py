"""Event patterns: every CEP operator the papers define, over event mappings (mu, from, to).

An event mapping is a solution mapping with the interval of the events that justify it
(RSEP-QL seed 001, section 4.2; CQELS-CEP seed 000, section 4.2; EP-SPARQL seed 003,
section 4.2). Leaves read events: ``Event`` one stream element (graph) at a time, as RSEP-QL's
BEP and SPAseq's GPM do; ``OccurrencePattern`` EP-SPARQL's triple occurrences. Inner nodes
combine event mappings; the paper each node comes from is in its docstring.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyoxigraph as ox

from sepia.algebra.expression import Expression

if TYPE_CHECKING:
    from sepia.algebra.pattern import Bgp, GraphPattern


class SelectionPolicy(enum.Enum):
    """How a sequence picks the events it combines.

    UNRESTRICTED, CHRONOLOGICAL, RECENT and NAIVE are RSEP-QL's SEQ, SEQ^c, SEQ^r and SEQ^n
    (seed 001, section 4.3, Table 1). The last three are SPAseq's event selection strategies
    ``,`` ``;`` ``:`` (seed 002, Definitions 10-12).
    """

    UNRESTRICTED = "unrestricted"
    CHRONOLOGICAL = "chronological"
    RECENT = "recent"
    NAIVE = "naive"
    STRICT_CONTIGUITY = "strict-contiguity"
    SKIP_TILL_NEXT = "skip-till-next"
    SKIP_TILL_ANY = "skip-till-any"


@dataclass(frozen=True, slots=True)
class Event:
    """A basic event pattern: P matched against each stream element on its own.

    RSEP-QL BEP (seed 001, Eq. 4): <<EVENT w P>>_W^t = {(mu, t_k, t_k) | mu in [[P]]_{G_k},
    (G_k, t_k) in W . W_w(S, t)}, with ``window`` = w. SPAseq GPM (seed 002, Definition 6):
    ``stream`` is the named stream u and ``label`` the GPM's name (A, B, ...); P may hold
    ``GRAPH <kb> { }`` over background data. CQELS-CEP triple sequence elements (seed 000,
    section 3.2) are BEPs over the window they are written in.
    """

    pattern: GraphPattern
    window: ox.NamedNode | None = None
    stream: ox.NamedNode | None = None
    label: str | None = None


@dataclass(frozen=True, slots=True)
class OccurrencePattern:
    """EP-SPARQL's BGP over triple occurrences (seed 003, section 4.2).

    <mu, t_alpha, t_omega> is a solution when every triple of mu(P) occurs in the stream
    union, t_alpha the least start and t_omega the greatest end of those occurrences: the
    triples may come from different times.
    """

    bgp: Bgp


@dataclass(frozen=True, slots=True)
class Seq:
    """``E1 SEQ E2``: compatible mappings of E1 ending before E2 starts.

    RSEP-QL Eq. 7 (and SEQ^c / SEQ^r / SEQ^n, Eqs. 9-12, by ``policy``); CQELS-CEP
    SEQ(O1, O2) needs t2 < t3 and yields [t1, t4]; SPAseq's ``,`` ``;`` ``:`` (Definitions
    10-12) are the last three policies.
    """

    left: EventPattern
    right: EventPattern
    policy: SelectionPolicy = SelectionPolicy.UNRESTRICTED


@dataclass(frozen=True, slots=True)
class SeqWithout:
    """CQELS-CEP SEQ_WO(O1, O2, O3) (seed 000, section 4.2): O1 then O3, no O2 in between.

    Keeps <mu1 u mu3, [t1, t6]> when t2 < t5 and no compatible mu2 has [t3, t4] within
    [t2, t5]; SPAseq's ``A ; !B ; C`` means the same (semantics.md).
    """

    left: EventPattern
    negated: EventPattern
    right: EventPattern


@dataclass(frozen=True, slots=True)
class NoHead:
    """CQELS-CEP NO_HEAD(O1, O2): mappings of O2 with no compatible O1 before them."""

    negated: EventPattern
    right: EventPattern


@dataclass(frozen=True, slots=True)
class NoTail:
    """CQELS-CEP NO_TAIL(O1, O2, t): mappings of O1 with no compatible O2 in (t2, t]."""

    left: EventPattern
    negated: EventPattern


@dataclass(frozen=True, slots=True)
class First:
    """RSEP-QL ``FIRST E`` (seed 001, Eq. 5): the earliest event mapping of E."""

    inner: EventPattern


@dataclass(frozen=True, slots=True)
class Last:
    """RSEP-QL ``LAST E`` (seed 001, Eq. 6): the latest event mapping of E."""

    inner: EventPattern


@dataclass(frozen=True, slots=True)
class And:
    """SPAseq conjunction ``A & B`` (seed 002, Definition 15): both at the same timestamp."""

    left: EventPattern
    right: EventPattern


@dataclass(frozen=True, slots=True)
class Or:
    """Disjunction: SPAseq ``A | B`` (Definition 15), CQELS-CEP OR, EP-SPARQL Union."""

    left: EventPattern
    right: EventPattern


@dataclass(frozen=True, slots=True)
class Kleene:
    """SPAseq Kleene plus ``A+`` (seed 002, Definitions 13-14): one or more A events."""

    inner: EventPattern


@dataclass(frozen=True, slots=True)
class Optional:
    """SPAseq optional ``A?`` (seed 002, Appendix C.4): zero or one A at that position."""

    inner: EventPattern


@dataclass(frozen=True, slots=True)
class Negation:
    """SPAseq negation ``!A`` (seed 002, Appendix B.0.1); its reach is set by the operator
    before it (semantics.md, SPAseq negation)."""

    inner: EventPattern


@dataclass(frozen=True, slots=True)
class IntervalJoin:
    """CQELS-CEP JOIN(O1, O2) (seed 000, section 4.2): compatible mappings whose intervals
    overlap, stamped with the intersection [max(t1, t3), min(t2, t4)]."""

    left: EventPattern
    right: EventPattern


@dataclass(frozen=True, slots=True)
class EventJoin:
    """EP-SPARQL Join(Psi, Psi') (seed 003, section 4.2): compatible mappings, stamped with
    the covering interval [min(t_alpha), max(t_omega)]."""

    left: EventPattern
    right: EventPattern


@dataclass(frozen=True, slots=True)
class EventFilter:
    """EP-SPARQL Filter(F, Psi): F with getDURATION(), getSTARTTIME(), getENDTIME()
    replaced by t_omega - t_alpha, t_alpha and t_omega of each mapping (seed 003, 4.2)."""

    expression: Expression
    inner: EventPattern


@dataclass(frozen=True, slots=True)
class SeqJoin:
    """EP-SPARQL ``P1 SEQ P2`` = SeqJoin: compatible, and t_omega < t'_alpha (seed 003).

    ``policy`` is the query's EVENT POLICY (RSEP-QL Table 1 maps EP-SPARQL's chronological
    and recent settings onto SEQ^c and SEQ^r).
    """

    left: EventPattern
    right: EventPattern
    policy: SelectionPolicy = SelectionPolicy.UNRESTRICTED


@dataclass(frozen=True, slots=True)
class EqJoin:
    """EP-SPARQL ``P1 EQUALS P2`` = EqJoin: compatible, with equal intervals (seed 003)."""

    left: EventPattern
    right: EventPattern


@dataclass(frozen=True, slots=True)
class SeqRightJoin:
    """EP-SPARQL ``P1 OPTIONALSEQ P2`` = SeqRightJoin(Psi', Psi, F) (seed 003, section 4.2).

    ``optional`` (Psi', written first) joins ``required`` (Psi) when it ends before it
    starts; mappings of ``required`` with no such partner are kept alone.
    """

    optional: EventPattern
    required: EventPattern
    expression: Expression | None = None


@dataclass(frozen=True, slots=True)
class EqLeftJoin:
    """EP-SPARQL ``P1 EQUALSOPTIONAL P2`` = EqLeftJoin(Psi, Psi', F) (seed 003, 4.2):
    ``right`` joins ``left`` when their intervals are equal; otherwise ``left`` stays alone."""

    left: EventPattern
    right: EventPattern
    expression: Expression | None = None


EventPattern = (
    Event | OccurrencePattern | Seq | SeqWithout | NoHead | NoTail | First | Last | And | Or
    | Kleene | Optional | Negation | IntervalJoin | EventJoin | EventFilter | SeqJoin | EqJoin
    | SeqRightJoin | EqLeftJoin
)
