"""A gap in time costs what the windows holding data and the results due cost, not its
length, in the engine and in the reference alike (they still agree).

Two elements far apart (a thousand years of milliseconds, 10^12 abstract units) under
window-close policies: a close every step across the gap. The instants in the gap are all
due, but they see empty windows (NON EMPTY fails, or the answer is empty, or IStream has
already streamed it out): nothing is evaluated there. Each run counts its evaluations and
gives up past a bound, so a regression fails at once instead of hanging.
"""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from sepia.engine.hosts.session import run
from sepia.engine.query import continuous
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind, parse_time_literal
from sepia.semantics import evaluate, evaluator

E = "http://example.org/"
S = E + "s"
BOUND = 200  # evaluations a run may make; the gaps below hold 10^9 closes or more


def element(graph: str, time: int, subject: str, kind: TimeKind) -> StreamElement:
    triple = ox.Triple(ox.NamedNode(E + subject), ox.NamedNode(E + "p"), ox.NamedNode(E + "o"))
    return StreamElement(S, E + graph, time, time, (triple,), kind)


def ms(text: str) -> int:
    return parse_time_literal(ox.Literal(text, datatype=ox.NamedNode(
        "http://www.w3.org/2001/XMLSchema#dateTime"))).value


A, B = ms("2024-01-01T00:00:00Z"), ms("2999-01-01T00:00:00Z")
DATETIME = [element("a", A, "x", TimeKind.DATETIME), element("b", B, "y", TimeKind.DATETIME)]
ABSTRACT = [element("a", 3, "x", TimeKind.ABSTRACT), element("b", 10**12 + 3, "y",
                                                             TimeKind.ABSTRACT)]
PREFIX = "PREFIX : <http://example.org/>\n"


def rows(results) -> list[tuple[int, str, str]]:  # type: ignore[no-untyped-def]
    return sorted((r.t, r.op, " ".join(f"{k}={v}" for k, v in sorted(dict(r.binding).items())))
                  for r in results)


@pytest.fixture
def bounded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts evaluations of both evaluators, and stops a run that makes too many."""
    made = [0]

    def counting(real):  # type: ignore[no-untyped-def]
        def wrapper(self, t):  # type: ignore[no-untyped-def]
            made[0] += 1
            if made[0] > BOUND:
                raise AssertionError(f"more than {BOUND} evaluations: the gap is walked")
            return real(self, t)
        return wrapper

    monkeypatch.setattr(continuous.ContinuousQuery, "evaluate",
                        counting(continuous.ContinuousQuery.evaluate))
    monkeypatch.setattr(evaluator.Evaluation, "rows", counting(evaluator.Evaluation.rows))
    return made


CASES = [
    # the C-SPARQL form of the issue: ON WINDOW CLOSE AND NON EMPTY by default
    (PREFIX + "REGISTER QUERY q AS SELECT ?s FROM STREAM <http://example.org/s> "
     "[RANGE 1s STEP 1s] WHERE { ?s :p ?o }", DATETIME,
     [(A, "+", "s=<http://example.org/x>"), (B, "+", "s=<http://example.org/y>")]),
    # no NON EMPTY: the gap's closes are evaluated over empty windows, answer nothing
    (PREFIX + "REGISTER RSTREAM :q AS SELECT ?s FROM NAMED WINDOW :w ON :s [RANGE 2 STEP 1] "
     "REPORT ON WINDOW CLOSE WHERE { WINDOW :w { ?s :p ?o } }", ABSTRACT,
     [(3, "+", "s=<http://example.org/x>"), (4, "+", "s=<http://example.org/x>"),
      (10**12 + 3, "+", "s=<http://example.org/y>"), (10**12 + 4, "+", "s=<http://example.org/y>")]),
    # an answer over empty windows that is not empty (a count of 0): IStream streams it once
    # (instants start at the first element, the flush stops at the last close holding one)
    (PREFIX + "REGISTER ISTREAM :q AS SELECT (COUNT(?s) AS ?n) FROM NAMED WINDOW :w ON :s "
     "[RANGE 1 STEP 1] REPORT ON WINDOW CLOSE WHERE { WINDOW :w { ?s :p ?o } }", ABSTRACT,
     [(3, "+", 'n="1"^^<http://www.w3.org/2001/XMLSchema#integer>'),
      (4, "+", 'n="0"^^<http://www.w3.org/2001/XMLSchema#integer>'),  # then 0 all along
      (10**12 + 3, "+", 'n="1"^^<http://www.w3.org/2001/XMLSchema#integer>')]),  # flush ends
    # periodic reports and a NOW window
    (PREFIX + "REGISTER RSTREAM :q AS SELECT ?s FROM NAMED WINDOW :w ON :s [NOW] "
     "REPORT EVERY 1 WHERE { WINDOW :w { ?s :p ?o } }", ABSTRACT,
     [(3, "+", "s=<http://example.org/x>"), (10**12 + 3, "+", "s=<http://example.org/y>")]),
]


@pytest.mark.parametrize(("text", "elements", "expected"), CASES)
def test_a_gap_in_time_costs_nothing(text, elements, expected, bounded) -> None:  # type: ignore[no-untyped-def]
    query = parse_query(text)
    reference = evaluate(query, {S: elements}, name="q")
    assert rows(reference) == expected
    engine = list(run([("q", query)], {S: elements}))
    assert rows(engine) == expected
