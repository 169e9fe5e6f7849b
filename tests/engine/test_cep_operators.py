"""CEP operators the generated families do not reach: CQELS-CEP's interval JOIN (no
dialect's syntax writes it: built as algebra), and what the engine refuses with a reason."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pyoxigraph as ox
import pytest

from sepia.algebra import event as ev
from sepia.algebra import pattern as gp
from sepia.engine import Unsupported
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


def test_consumption_over_cqels_cep_operators_is_refused():
    text = f"""PREFIX : <{EX}>
SELECT * FROM NAMED WINDOW :w1 ON :s1 [RANGE 10] EVENT POLICY CHRONOLOGICAL
WHERE {{ WINDOW :w1 {{ SEQ({{ ?x :p ?y }}, {{ ?x :p ?z }}, !{{ ?x :q ?y }}) }} }}"""
    with pytest.raises(Unsupported, match="CHRONOLOGICAL / RECENT"):
        list(run([("q", parse_query(text))], {S1: [element("g1", 1, 1, ("a", "p", "b"))]}))


def test_interval_stamped_elements_under_consumption_are_refused():
    chronological = TWO_EVENTS.replace("WHERE", "EVENT POLICY CHRONOLOGICAL WHERE")
    with pytest.raises(Unsupported, match="interval-stamped"):
        list(run([("q", parse_query(chronological))], {S1: [element("g1", 1, 4, ("a", "p", "b"))]}))


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
