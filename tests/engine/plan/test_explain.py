"""``explain`` shows the physical plan: operators, join inputs, fallbacks, automaton states
and edges."""

from __future__ import annotations

from pathlib import Path

from sepia.engine import explain, plan
from sepia.lang import parse_query
from sepia.rdf.dictionary import Dictionary

from ..support import engine_path

E1 = Path(__file__).parents[3] / "examples" / "e1-shops-coupons" / "query.rq"


def shown(text: str) -> str:
    dictionary = Dictionary()
    return explain(plan(parse_query(text), dictionary), dictionary)


def test_e1_plan():
    lines = shown(E1.read_text()).splitlines()
    assert lines[0] == "R2S RStream"
    assert "S2R window <http://example.org/w1> on <http://example.org/nearby>: " \
        "Sliding(width=5, slide=2, t0=1)" in lines
    assert lines[4].startswith("evaluation: columnar")  # a window-close query: the columnar core
    join = lines.index(
        "  MultiJoin (columnar vector joins, smallest connected input next, at each evaluation)"
    )
    scans = [line.split(" [")[0].strip() for line in lines[join + 1 : join + 4]]
    assert scans == [
        "Scan window <http://example.org/w1>",
        "Scan window <http://example.org/w2>",
        "Scan background default graph",
    ]


def test_maintained_aggregates_are_shown_with_their_pattern():
    text = """PREFIX : <http://example.org/>
    REGISTER ISTREAM :o AS SELECT ?s (COUNT(?o) AS ?n) FROM NAMED WINDOW :w ON :s [RANGE 4]
    WHERE { WINDOW :w { ?s :p ?o FILTER(?o > 3) } } GROUP BY ?s"""
    with engine_path("rows"):
        lines = [line.strip() for line in shown(text).splitlines()]
    assert lines[0] == "R2S IStream"
    assert lines[3].startswith("evaluation: GROUP BY maintained from the delta (CQELS)")
    group = next(i for i, line in enumerate(lines) if line.startswith("GroupBy"))
    assert lines[group].startswith("GroupBy ['?s'] ['?_1agg := COUNT(?o)']")
    assert lines[group + 1].startswith("Select IF((?o > ")
    assert lines[group + 2].startswith("Scan window <http://example.org/w>")
    lines = [line.strip() for line in shown(text).splitlines()]  # the default: columnar
    assert lines[3].startswith("evaluation: columnar")
    assert "GROUP BY as vector reductions per group" in lines[3]
    group = next(i for i, line in enumerate(lines) if line.startswith("GroupBy"))
    assert lines[group].endswith("(columnar: groups numbered from the key columns, exact "
                                 "vector sums and extremes per group at each evaluation)")


def test_other_aggregates_are_marked_as_fallback():
    text = """PREFIX : <http://example.org/>
    REGISTER ISTREAM :o AS SELECT ?s (GROUP_CONCAT(?o) AS ?n) FROM NAMED WINDOW :w ON :s
    [RANGE 4] WHERE { WINDOW :w { ?s :p ?o } } GROUP BY ?s"""
    plan_text = shown(text)
    assert "evaluation: full at each instant" in plan_text
    assert "FALLBACK pyoxigraph (group" in plan_text


def test_automaton_states_and_edges():
    text = """PREFIX : <http://example.org/>
    SELECT * WITHIN 10 FROM STREAM S1 :s1 FROM STREAM S2 :s2
    WHERE { SEQ(A+ ; !B , C?) DEFINE GPM A ON S1 { ?x :p ?k } DEFINE GPM B ON S2 { ?y :q ?z }
            DEFINE GPM C ON S1 { ?x :q ?w } }"""
    lines = shown(text).splitlines()
    states = [line.strip() for line in lines if line.strip().startswith(("automaton", "state"))]
    assert states == [
        "automaton: 3 states, match at state 3, Within(width=10, tumbling=False)",
        "state 0: take -> 1 (first); take -> 0 (again, ;) own ['k']",
        "state 1: guard on state 2",
        "state 2: take -> 3 (,); skip -> 3",
    ]


def test_partition_key_and_routing_patterns():
    text = """PREFIX : <http://example.org/>
    SELECT * FROM STREAM S1 :s1 PARTITION BY ?x
    WHERE { SEQ(A , B) DEFINE GPM A ON S1 { ?x :p ?k }
            DEFINE GPM B ON S1 { ?x :p ?j FILTER(?j > ?k) } }"""
    lines = shown(text).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("partition by"))
    assert lines[start].startswith("partition by ?x: one run buffer per value")
    assert "these 2 patterns" in lines[start]
    assert [line.strip().split(" ")[0] for line in lines[start + 1 :]] == ["Scan", "Select", "Scan"]


def test_epsparql_filter_conjuncts_sink_to_the_operand_binding_them():
    """E5's FILTER: the drop test (?p1, ?p2) is applied inside the first SEQ, before a third
    price meets the pair; the rise test (?p3) stays on top, below the duration test, which
    reads the interval; the duration bound is also a horizon every operand reads within."""
    e5 = Path(__file__).parents[3] / "examples" / "e5-epsparql-drop-rise" / "query.rq"
    lines = shown(e5.read_text()).splitlines()
    shown_tree = lines[lines.index("event pattern (mappings ending at each arrival)") + 1 :]
    indexes = [line.strip() for line in shown_tree if line.strip().startswith("range index")]
    assert [line.split("bisects for ")[1].split(" (")[0] for line in indexes] == [
        "key < it", "key > it"  # ?p3 > ?p1 * 1.05, then ?p2 < ?p1 * 0.7, keyed by ?p1
    ]
    assert all("sorted by (?p1 * " in line for line in indexes)
    tree = [line for line in shown_tree if not line.strip().startswith("range index")]
    assert tree[0].strip().startswith("horizon getDURATION() < 30: every operand reads only")
    outline = [line.split(" IF(")[0].split(" (")[0].rstrip() for line in tree[1:6]]
    assert [line.strip() for line in outline] == [
        "FILTER", "FILTER", "SEQ unrestricted", "FILTER", "SEQ unrestricted"
    ]
    assert [len(line) - len(line.lstrip()) for line in outline] == [2, 4, 6, 8, 10]
    assert "?__to - ?__from" in tree[1] and "?p" not in tree[1]
    assert "?p3 > (?p1" in tree[2] and "?p2" not in tree[2]
    assert "?p2 < (?p1" in tree[4]


def test_epsparql_horizon_only_where_the_duration_bounds_a_growing_pattern():
    """getDURATION() < 3 over SEQ is a horizon; not over OPTIONALSEQ (a required mapping
    alone depends on the optional part's absence), nor getDURATION() > 3 or under ||."""
    head = "PREFIX : <http://e/>\nSELECT * WHERE { "
    cases = {
        "{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(getDURATION() < 3) }": True,
        "{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(getDURATION() <= 3 && ?y != ?z) }": True,
        "{ ?x :p ?y } OPTIONALSEQ { ?x :q ?z } FILTER(getDURATION() < 3) }": False,
        "{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(getDURATION() > 3) }": False,
        "{ ?x :p ?y } SEQ { ?x :q ?z } FILTER(?y = ?z || getDURATION() < 3) }": False,
    }
    for where, horizon in cases.items():
        assert ("  horizon getDURATION()" in shown(head + where)) is horizon, where


def test_explain_says_whether_a_window_query_splits_without_partition_by() -> None:
    """W3's shape with ?company in every pattern splits; W3 itself (?trade joins its two
    patterns, one without ?company) splits by ?trade only in a run of files, where the
    driver merges its buckets' partial sums; an aggregate over all groups does not."""
    from sepia.engine.plan.split import explain_split
    from sepia.lang import parse_query

    head = "PREFIX : <http://e/>\nREGISTER QUERY a AS\n"
    window = "FROM STREAM <http://e/s> [RANGE 40 STEP 10]\n"
    split = head + "SELECT ?company (AVG(?p) AS ?avg) " + window + (
        "WHERE { ?company :price ?p ; :volume ?v } GROUP BY ?company"
    )
    w3 = head + "SELECT ?company (AVG(?p) AS ?avg) " + window + (
        "WHERE { ?trade :company ?company ; :price ?p } GROUP BY ?company"
    )
    everything = head + "SELECT (AVG(?p) AS ?avg) " + window + "WHERE { ?company :price ?p }"
    assert explain_split(parse_query(split)).startswith("split by ?company: every triple pattern")
    assert explain_split(parse_query(w3)).startswith(
        "split by ?trade in a run of files: it holds one place of every triple pattern"
    )
    assert explain_split(parse_query(everything)) == "split: none (an aggregate over all rows)"
