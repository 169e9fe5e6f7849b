"""The queries of examples/ (the worked examples E1-E5 of spec/semantics.md) compile to the
algebra their READMEs describe."""

from pathlib import Path

import pytest
from shapes import match_of, nodes, shape

import sepia.algebra as a
from sepia.lang import parse_query

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CITY = "http://example.org/city#"
EXPECTED = {
    "e1-shops-coupons/query.rq": (
        a.Dialect.RSPQL, ("http://example.org/w1", "http://example.org/w2")),
    "e1-shops-coupons/nearby.rq": (a.Dialect.RSPQL, ("http://example.org/w1",)),
    "e2-subway-delays/query.rq": (
        a.Dialect.CQELS_CEP, "(no-tail (seq <http://example.org/W> <http://example.org/W> "
                             "unrestricted) <http://example.org/W>)"),
    "e3-rsepql-landmark/query.rq": (
        a.Dialect.RSEPQL, "(seq <http://example.org/w1> <http://example.org/w2> unrestricted)"),
    "e4-spaseq-selection/seq-colon.rq": (a.Dialect.SPASEQ, "(seq A B skip-till-any)"),
    "e4-spaseq-selection/seq-semicolon.rq": (a.Dialect.SPASEQ, "(seq A B skip-till-next)"),
    "e4-spaseq-selection/seq-comma.rq": (a.Dialect.SPASEQ, "(seq A B strict-contiguity)"),
    "e5-epsparql-drop-rise/query.rq": (
        a.Dialect.EPSPARQL,
        "(event-filter (seq-join (seq-join occ1 occ1 unrestricted) occ1 unrestricted))"),
    "e6-smart-city-rdfs/query.rq": (a.Dialect.RSPQL, (CITY + "w",)),
    "e6-smart-city-rdfs/alarm-then-traffic.rq": (
        a.Dialect.RSEPQL, f"(seq <{CITY}W> <{CITY}W> unrestricted)"),
}
RDFS = {"e6-smart-city-rdfs/query.rq", "e6-smart-city-rdfs/alarm-then-traffic.rq"}


def test_every_example_query_is_covered():
    assert sorted(str(p.relative_to(EXAMPLES)) for p in EXAMPLES.glob("*/*.rq")) == \
        sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_query(name):
    dialect, expected = EXPECTED[name]
    query = parse_query((EXAMPLES / name).read_text(encoding="utf-8"), source=name)
    assert query.dialect is dialect
    entailment = a.Entailment.RDFS if name in RDFS else a.Entailment.NONE
    assert query.entailment is entailment
    if isinstance(expected, tuple):
        assert isinstance(query.expression, a.RStream)
        windows = [n for n in nodes(query.pattern) if isinstance(n, a.Window)]
        assert tuple(w.name.value for w in windows) == expected
    else:
        event_shape = expected
        assert shape(match_of(query).event) == event_shape
        assert query.report == a.PushMatches()

