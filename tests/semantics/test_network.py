"""Query networks and EP-SPARQL's Q-closure: a registered CONSTRUCT rule fed back.

Rule: CONSTRUCT { ?a :reach ?c } WHERE { { ?a :reach ?b } SEQ { ?b :reach ?c } }, registered
as stream :s and reading it. Input: a-b @1, b-c @2, c-d @3.
Round 1 derives a-c [1,2] and b-d [2,3]; round 2 adds a-d [1,3] (from a-c then c-d, and
from a-b then b-d); round 3 derives nothing new.
"""

from __future__ import annotations

from sepia.algebra import dataset as ds
from sepia.algebra import event as ev
from sepia.algebra import pattern as gp
from sepia.algebra import query as qa
from sepia.algebra import report as rp
from sepia.semantics.network import evaluate_network

from .support import bgp, element, iri, var

EX = "http://example.org/"


def rule() -> qa.Query:
    reach = lambda a, b: ev.OccurrencePattern(bgp((f"?{a}", "reach", f"?{b}")))  # noqa: E731
    template = (gp.TriplePattern(var("a"), iri("reach"), var("c")),)
    return qa.Query(
        qa.Construct(template),
        gp.Match(ev.SeqJoin(reach("a", "b"), reach("b", "c"))),
        ds.Dataset(),
        rp.PushMatches(),
        qa.Dialect.EPSPARQL,
        registration=qa.Registration(qa.RegistrationKind.RSTREAM, EX + "s"),
    )


def test_q_closure_reaches_a_fixpoint():
    stream = [
        element(1, ("a", "reach", "b"), stream=EX + "in"),
        element(2, ("b", "reach", "c"), stream=EX + "in"),
        element(3, ("c", "reach", "d"), stream=EX + "in"),
    ]
    results = evaluate_network([("rule", rule())], {EX + "in": stream})
    got = [(r.t, *r.interval, tuple(f"{x} ." for x in r.triples)) for r in results]
    triple = lambda a, c: f"<{EX}{a}> <{EX}reach> <{EX}{c}> ."  # noqa: E731
    assert got == [
        (2, 1, 2, (triple("a", "c"),)),
        (3, 1, 3, (triple("a", "d"),)),
        (3, 2, 3, (triple("b", "d"),)),
    ]
