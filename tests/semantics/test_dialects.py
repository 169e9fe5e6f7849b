"""Each dialect from its query text through ``parse_query`` and the reference evaluator, on
small timelines whose answers are derived by hand in the comments."""

from __future__ import annotations

import pytest

from sepia.lang import parse_query
from sepia.semantics import evaluate

from .support import EX, element

PREFIX = "PREFIX : <http://example.org/>\n"


def stream(*items, name="s"):
    """Elements (time, triple, ...) of stream :name."""
    return {EX + name: [element(t, *triples, stream=EX + name) for t, *triples in items]}


def run(text, streams):
    """(t, op, interval, match, {var: local name}) per result."""
    return [
        (r.t, r.op, r.interval, r.match, {k: v.value.removeprefix(EX) for k, v in r.values.items()})
        for r in evaluate(parse_query(PREFIX + text), streams)
    ]


# 1 a-p-b | 2 a-p-c | 4 c-p-d
WINDOWED = stream((1, ("a", "p", "b")), (2, ("a", "p", "c")), (4, ("c", "p", "d")))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # C-SPARQL: FROM STREAM merges the window into the default graph; the default
        # policy is window close and non-empty (closes at 2 and 4), RStream
        (
            "REGISTER QUERY q AS SELECT ?x ?y FROM STREAM :s [RANGE 2 STEP 2] WHERE { ?x :p ?y }",
            [
                (2, "+", None, None, {"x": "a", "y": "b"}),
                (2, "+", None, None, {"x": "a", "y": "c"}),
                (4, "+", None, None, {"x": "c", "y": "d"}),
            ],
        ),
        # CQELS: content change with IStream; at 2 the window (0, 2] adds a-c only
        (
            "SELECT ?x ?y FROM NAMED WINDOW :w ON :s [RANGE 2] WHERE { WINDOW :w { ?x :p ?y } }",
            [
                (1, "+", None, None, {"x": "a", "y": "b"}),
                (2, "+", None, None, {"x": "a", "y": "c"}),
                (4, "+", None, None, {"x": "c", "y": "d"}),
            ],
        ),
        # RSP-QL DSTREAM: at 4 the window (2, 4] has lost both a rows (bag difference)
        (
            "REGISTER DSTREAM :o AS SELECT ?x FROM NAMED WINDOW :w ON :s [RANGE 2] "
            "REPORT ON CONTENT CHANGE WHERE { WINDOW :w { ?x :p ?y } }",
            [(4, "-", None, None, {"x": "a"}), (4, "-", None, None, {"x": "a"})],
        ),
        # a count window of 2 elements: COUNT 1 at 1, 2 at 2, still 2 at 4 (IStream: silent)
        (
            "SELECT (COUNT(*) AS ?n) FROM NAMED WINDOW :w ON :s [TRIPLES 2] "
            "WHERE { WINDOW :w { ?x :p ?y } }",
            [(1, "+", None, None, {"n": "1"}), (2, "+", None, None, {"n": "2"})],
        ),
    ],
)
def test_windowed_dialects(text, expected):
    assert run(text, WINDOWED) == expected


# 1 a1-p-b1 | 2 b1-q-c1 | 3 a2-p-b1 | 5 b1-q-c2
EVENTS = stream(
    (1, ("a1", "p", "b1")), (2, ("b1", "q", "c1")), (3, ("a2", "p", "b1")), (5, ("b1", "q", "c2"))
)
RSEPQL = (
    "SELECT ?x ?z FROM NAMED WINDOW :w ON :s [RANGE 10] {policy} "
    "WHERE {{ MATCH {{ EVENT :w {{ ?x :p ?y }} SEQ EVENT :w {{ ?y :q ?z }} }} }}"
)


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # unrestricted: c2 @5 follows both a1 @1 and a2 @3
        ("", [(2, (1, 2), "a1", "c1"), (5, (1, 5), "a1", "c2"), (5, (3, 5), "a2", "c2")]),
        # chronological: a1 is consumed at 2, so c2 takes a2
        ("EVENT POLICY CHRONOLOGICAL", [(2, (1, 2), "a1", "c1"), (5, (3, 5), "a2", "c2")]),
        ("EVENT POLICY RECENT", [(2, (1, 2), "a1", "c1"), (5, (3, 5), "a2", "c2")]),
    ],
)
def test_rsepql_policies(policy, expected):
    found = run(RSEPQL.format(policy=policy), EVENTS)
    assert [(t, i, b["x"], b["z"]) for t, _, i, _, b in found] == expected


def test_cqels_cep_event_clause_with_negation_in_the_middle():
    # delays of v at m at 1, 3, 6 on :s; an arrival at 2 on :t: only 3 -> 6 has no arrival
    # strictly between its two delays
    streams = stream((1, ("v", "delay", "m")), (3, ("v", "delay", "m")), (6, ("v", "delay", "m")))
    streams |= stream((2, ("v", "arrive", "m")), name="t")
    text = (
        "SELECT ?v ?s FROM NAMED WINDOW :w1 ON :s [RANGE 10] FROM NAMED WINDOW :w2 ON :t "
        "[RANGE 10] FROM NAMED WINDOW :w3 ON :s [RANGE 10] WHERE { SEQ(:w1, !:w2, :w3) "
        "WINDOW :w1 { ?v :delay ?s } WINDOW :w2 { ?v :arrive ?s } WINDOW :w3 { ?v :delay ?s } }"
    )
    assert run(text, streams) == [(6, "+", (3, 6), None, {"v": "v", "s": "m"})]


# 1 h at l1 | 2 w1 at l1 | 3 w2 at l1 | 4 another event | 5 w3 at l1
SPASEQ = stream(
    (1, ("h", "loc", "l1")),
    (2, ("w1", "at", "l1")),
    (3, ("w2", "at", "l1")),
    (4, ("x", "other", "y")),
    (5, ("w3", "at", "l1")),
)
GPMS = (
    "DEFINE GPM A ON S1 { ?h :loc ?l } DEFINE GPM B ON S1 { ?w :at ?l } "
    "DEFINE GPM C ON S1 { ?w :at ?l }"
)


def test_spaseq_kleene_one_row_per_iteration():
    # first B skip-till-next (w1), then strictly contiguous (w2); the event at 4 ends it
    text = f"SELECT ?h ?w WITHIN 10 FROM STREAM S1 :s WHERE {{ SEQ(A; B+) {GPMS} }}"
    assert run(text, SPASEQ) == [
        (2, "+", (1, 2), "m1", {"h": "h", "w": "w1"}),
        (3, "+", (1, 3), "m2", {"h": "h", "w": "w1"}),
        (3, "+", (1, 3), "m2", {"h": "h", "w": "w2"}),
    ]


def test_spaseq_negation_after_strict_contiguity():
    # the event right after A (w1 @2) is a C: no match
    text = f"SELECT ?h ?w WITHIN 10 FROM STREAM S1 :s WHERE {{ SEQ(A, !C; B) {GPMS} }}"
    assert run(text, SPASEQ) == []


def test_epsparql_optionalseq_and_equals():
    occurrences = stream((1, ("a", "p", "x")), (2, ("a", "q", "y")), (2, ("a", "r", "z")))
    # OPTIONALSEQ: the optional part (written first) precedes the required one
    optional = "SELECT ?o ?y WHERE { { ?s :p ?o } OPTIONALSEQ { ?s :q ?y } }"
    assert run(optional, occurrences) == [(2, "+", (1, 2), None, {"o": "x", "y": "y"})]
    equals = "SELECT ?y ?z WHERE { { ?s :q ?y } EQUALS { ?s :r ?z } }"
    assert run(equals, occurrences) == [(2, "+", (2, 2), None, {"y": "y", "z": "z"})]


def test_csparql_default_policy_over_a_landmark_window_reports_at_every_arrival():
    # window close AND non empty; a landmark from 2 closes at the arrivals 2 and 4 (the
    # element at 1 never enters it): at 2 it holds a-c, at 4 a-c and c-d
    text = "REGISTER QUERY q AS SELECT ?x ?y FROM STREAM :s [LANDMARK FROM 2] WHERE { ?x :p ?y }"
    assert run(text, WINDOWED) == [
        (2, "+", None, None, {"x": "a", "y": "c"}),
        (4, "+", None, None, {"x": "a", "y": "c"}),
        (4, "+", None, None, {"x": "c", "y": "d"}),
    ]


def test_rsepql_seq_sees_only_the_window_at_t():
    # RANGE 5: at 6 the window is (1, 6]; x1 @1 sits on its opening and is out, x2 @2 (its
    # first element) and y-q-z @6 (its last, at t itself) are in
    streams = stream((1, ("x1", "p", "y")), (2, ("x2", "p", "y")), (6, ("y", "q", "z")))
    text = RSEPQL.replace("RANGE 10", "RANGE 5").format(policy="")
    assert [(t, i, b["x"]) for t, _, i, _, b in run(text, streams)] == [(6, (2, 6), "x2")]


CQELS_SEQ = (
    "SELECT ?v ?s FROM NAMED WINDOW :w1 ON :s [RANGE {width}] FROM NAMED WINDOW :w2 ON :t "
    "[RANGE {width}] {policy} WHERE {{ SEQ(:w1, :w2) WINDOW :w1 {{ ?v :delay ?s }} "
    "WINDOW :w2 {{ ?v :arrive ?s }} }}"
)
# delays of v at m on :s at 1 and 3; arrivals on :t at 5 and 7
DELAYS = stream((1, ("v", "delay", "m")), (3, ("v", "delay", "m"))) | stream(
    (5, ("v", "arrive", "m")), (7, ("v", "arrive", "m")), name="t"
)


@pytest.mark.parametrize(
    ("width", "policy", "expected"),
    [
        # unrestricted: every delay before each arrival
        (10, "", [(5, (1, 5)), (5, (3, 5)), (7, (1, 7)), (7, (3, 7))]),
        # RANGE 4: at 5 the window is (1, 5], at 7 it is (3, 7]: the delay on the opening
        # is out each time, so only 3 -> 5 remains
        (4, "", [(5, (3, 5))]),
        # consumption across evaluations: at 5 the earliest (resp. latest) delay is taken
        # and consumed with the arrival; at 7 the other delay is left
        (10, "EVENT POLICY CHRONOLOGICAL", [(5, (1, 5)), (7, (3, 7))]),
        (10, "EVENT POLICY RECENT", [(5, (3, 5)), (7, (1, 7))]),
    ],
)
def test_cqels_cep_seq_windows_and_consumption(width, policy, expected):
    found = run(CQELS_SEQ.format(width=width, policy=policy), DELAYS)
    assert [(t, i) for t, _, i, _, _ in found] == expected


EPSPARQL_SEQ = "SELECT ?a ?b {policy} WHERE {{ {{ ?c :bid ?a }} SEQ {{ ?c :ask ?b }} }}"
# bids b1 @1, b2 @2; asks k3 @3, k4 @4 (triple occurrences of one stream)
QUOTES = stream(
    (1, ("c", "bid", "b1")),
    (2, ("c", "bid", "b2")),
    (3, ("c", "ask", "k3")),
    (4, ("c", "ask", "k4")),
)


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("", [(3, "b1", "k3"), (3, "b2", "k3"), (4, "b1", "k4"), (4, "b2", "k4")]),
        # RSEP-QL Table 1: EP-SPARQL's chronological / recent SEQ with consumption
        ("EVENT POLICY CHRONOLOGICAL", [(3, "b1", "k3"), (4, "b2", "k4")]),
        ("EVENT POLICY RECENT", [(3, "b2", "k3"), (4, "b1", "k4")]),
    ],
)
def test_epsparql_seq_consumes_across_evaluations(policy, expected):
    found = run(EPSPARQL_SEQ.format(policy=policy), QUOTES)
    assert sorted((t, b["a"], b["b"]) for t, _, _, _, b in found) == expected
