"""CEP operators the generated families do not reach: CQELS-CEP's interval JOIN (no
dialect's syntax writes it: built as algebra), and consumption over CQELS-CEP negation and
interval-stamped elements on hand-derived cases."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pyoxigraph as ox
import pytest

from sepia.algebra import event as ev
from sepia.algebra import pattern as gp
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.runtime.local import Session, run
from sepia.semantics import evaluate

EX = "http://example.org/"
S1 = EX + "s1"
TWO_EVENTS = f"""PREFIX : <{EX}>
SELECT * FROM NAMED WINDOW :w1 ON :s1 [RANGE 10]
WHERE {{ MATCH {{ EVENT :w1 {{ ?x :p ?y }} SEQ EVENT :w1 {{ ?x :q ?z }} }} }}"""


def element(name: str, start: int, end: int, *triples: tuple[str, str, str]) -> StreamElement:
    terms = [ox.Triple(*(ox.NamedNode(EX + x) for x in t)) for t in triples]
    return StreamElement(S1, EX + name, start, end, tuple(terms))


def with_event(query, event: ev.EventPattern):
    """The query with its MATCH's event pattern replaced."""
    def swap(p):
        if isinstance(p, gp.Match):
            return gp.Match(event)
        fields = {f.name: getattr(p, f.name) for f in dataclasses.fields(p)}
        return dataclasses.replace(p, **{
            k: swap(v) for k, v in fields.items() if dataclasses.is_dataclass(v)
        })
    return dataclasses.replace(query, expression=swap(query.expression))


def test_interval_join_meets_at_one_time():
    """JOIN of two BEPs over point events: compatible mappings of the same time, stamped
    with it (the intersection of [t, t] and [t, t])."""
    query = parse_query(TWO_EVENTS)
    seq = next(n for n in _nodes(query.pattern) if isinstance(n, ev.Seq))
    query = with_event(query, ev.IntervalJoin(seq.left, seq.right))
    data = {S1: [
        element("g1", 1, 1, ("a", "p", "b")),
        element("g2", 2, 2, ("a", "p", "c"), ("a", "q", "d")),
        element("g3", 3, 3, ("a", "q", "e")),
    ]}
    got = list(run([("q", query)], data))
    assert got == evaluate(query, data, name="q")
    assert [(r.t, r.interval, dict(r.binding)["y"].value) for r in got] == [(2, (2, 2), EX + "c")]


@pytest.mark.parametrize("policy", ["CHRONOLOGICAL", "RECENT"])
def test_consumption_over_a_cqels_cep_tail_negation(policy):
    """SEQ({?x :p ?y}, {?x :p ?z}, !{?x :q ?y}) = NO_TAIL(A SEQ B, N) over a@1 p b, a@2 p c,
    a@3 p d: at 2, B (z = c) takes A (y = b), both consumed; at 3, B (z = d) finds every
    earlier A consumed (UNRESTRICTED would give y = b and y = c with z = d)."""
    text = f"""PREFIX : <{EX}>
SELECT * FROM NAMED WINDOW :w1 ON :s1 [RANGE 10] EVENT POLICY {policy}
WHERE {{ WINDOW :w1 {{ SEQ({{ ?x :p ?y }}, {{ ?x :p ?z }}, !{{ ?x :q ?y }}) }} }}"""
    data = {S1: [element("g1", 1, 1, ("a", "p", "b")), element("g2", 2, 2, ("a", "p", "c")),
                 element("g3", 3, 3, ("a", "p", "d"))]}
    query = parse_query(text)
    got = list(run([("q", query)], data))
    assert Counter(got) == Counter(evaluate(query, data, name="q"))
    assert [(r.t, r.interval, _values(r, "y", "z")) for r in got] == [(2, (1, 2), ["b", "c"])]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("CHRONOLOGICAL", [(5, (2, 5), ["c", "d"]), (6, (1, 6), ["b", "e"])]),
        ("RECENT", [(5, (1, 5), ["b", "d"]), (6, (2, 6), ["c", "e"])]),
    ],
)
def test_consumption_over_interval_stamped_elements(policy, expected):
    """Left events [2, 3] (y = c) and [1, 4] (y = b): [2, 3] ends first, so it is the earlier
    one; the right event at 5 takes it under CHRONOLOGICAL ([1, 4] under RECENT), the one
    at 6 the other."""
    chronological = TWO_EVENTS.replace("WHERE", f"EVENT POLICY {policy} WHERE")
    data = {S1: [element("g2", 2, 3, ("a", "p", "c")), element("g1", 1, 4, ("a", "p", "b")),
                 element("g3", 5, 5, ("a", "q", "d")), element("g4", 6, 6, ("a", "q", "e"))]}
    query = parse_query(chronological)
    got = list(run([("q", query)], data))
    assert Counter(got) == Counter(evaluate(query, data, name="q"))
    assert [(r.t, r.interval, _values(r, "y", "z")) for r in got] == expected


def _values(result, *names: str) -> list[str]:
    binding = dict(result.binding)
    return [binding[n].value.removeprefix(EX) for n in names]


def test_interval_join_of_overlapping_interval_events():
    """[1, 5] and [3, 6] overlap on [3, 5]: the JOIN ends at 5, before the later one
    arrives (6), so it is never pushed at its end; [4, 6] with [3, 6] ends at 6."""
    query = parse_query(TWO_EVENTS)
    seq = next(n for n in _nodes(query.pattern) if isinstance(n, ev.Seq))
    query = with_event(query, ev.IntervalJoin(seq.left, seq.right))
    data = {S1: [
        element("g1", 1, 5, ("a", "p", "b")),
        element("g2", 3, 6, ("a", "q", "d")),
        element("g3", 4, 6, ("a", "p", "c")),
    ]}
    got = list(run([("q", query)], data))
    assert got == evaluate(query, data, name="q")
    assert [(r.t, r.interval, dict(r.binding)["y"].value) for r in got] == [(6, (4, 6), EX + "c")]


def _nodes(node: object) -> list:
    found = [node]
    if dataclasses.is_dataclass(node):
        for f in dataclasses.fields(node):
            found += _nodes(getattr(node, f.name))
    return found


def test_a_duration_bound_forgets_old_occurrences():
    """FILTER(getDURATION() < 5) over SEQ: no mapping reported from t on holds an occurrence
    starting 5 or more before t, so the kept elements stay within about 1.5 horizons while
    the answer stays the reference's."""
    text = f"""PREFIX : <{EX}>
SELECT * WHERE {{ {{ ?x :p ?y }} SEQ {{ ?x :q ?z }} SEQ {{ ?x :p ?w }}
FILTER(getDURATION() < 5) }}"""
    data = {S1: [element(f"g{t}", t, t, ("a", "pq"[t % 2], f"n{t % 3}")) for t in range(60)]}
    session = Session()
    session.register(text, "q")
    got, kept = [], []
    for e in data[S1]:
        got += session.push(e)
        kept.append(len({row[0] for row in session.snapshot()["query q"]["occurrences"]}))
    got += session.flush()
    assert Counter(got) == Counter(evaluate(parse_query(text), data, name="q"))
    assert len(got) > 50 and max(kept) <= 8
