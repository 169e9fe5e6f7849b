"""Which window queries split without PARTITION BY, and how (`sepia.engine.plan.split`):
by a projected GROUP BY variable in every triple pattern, each bucket owning its groups;
or, where a run merges (a run of files), by a variable in one place of every triple
pattern, each bucket reporting partial COUNT, SUM and AVG. Near misses name their reason."""

from __future__ import annotations

import pytest

from sepia.engine.plan.split import Split, split_of
from sepia.lang import parse_query

HEAD = "PREFIX : <http://e/>\nREGISTER QUERY a AS\n"
WINDOW = "FROM STREAM <http://e/s> [RANGE 40 STEP 10]\n"
CLOSE = WINDOW + "REPORT ON WINDOW CLOSE\n"
TRADES = "WHERE { ?trade :company ?company ; :price ?p ; :volume ?v } GROUP BY ?company"
W3 = HEAD + "SELECT ?company (AVG(?p) AS ?avg) (COUNT(*) AS ?n) (SUM(?v) AS ?s) " + WINDOW + TRADES


def test_w3_splits_by_the_trade_with_merged_partial_sums_where_the_run_merges() -> None:
    query = parse_query(W3)
    assert split_of(query) == "no projected GROUP BY variable is in every triple pattern"
    found = split_of(query, merge=True)
    assert isinstance(found, Split)
    assert found.variable.value == "trade"
    assert found.merged == (("avg", "AVG"), ("n", "COUNT"), ("s", "SUM"))
    assert len(found.patterns) == 3


def test_a_split_by_a_grouped_variable_is_not_merged() -> None:
    text = HEAD + "SELECT ?c (AVG(?p) AS ?avg) " + WINDOW + "WHERE { ?c :price ?p } GROUP BY ?c"
    found = split_of(parse_query(text), merge=True)
    assert isinstance(found, Split) and found.variable.value == "c" and found.merged == ()


NEAR_MISSES = {
    "MIN": (HEAD + "SELECT ?company (MIN(?p) AS ?m) " + WINDOW + TRADES,
            "an aggregate other than COUNT, SUM and AVG"),
    "COUNT DISTINCT": (HEAD + "SELECT ?company (COUNT(DISTINCT ?p) AS ?m) " + WINDOW + TRADES,
                       "an aggregate other than COUNT, SUM and AVG"),
    "HAVING": (HEAD + "SELECT ?company (AVG(?p) AS ?avg) " + WINDOW + TRADES
               + " HAVING (AVG(?p) > 1)", "HAVING"),
    "BIND over an aggregate": (HEAD + "SELECT ?company (AVG(?p) * 2 AS ?twice) " + WINDOW
                               + TRADES, "a BIND above the GROUP BY"),
    "ISTREAM": (HEAD.replace("QUERY a", "ISTREAM :out") + "SELECT ?company (AVG(?p) AS ?avg) "
                + CLOSE + TRADES, "partial sums under ISTREAM or DSTREAM"),
    "no variable in one place": (
        HEAD + "SELECT ?company (AVG(?p) AS ?avg) " + WINDOW
        + "WHERE { ?trade :company ?company . ?p :of ?trade } GROUP BY ?company",
        "no variable holds one place of every triple pattern"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_near_misses_of_a_merged_split_say_why(case: str) -> None:
    text, why = NEAR_MISSES[case]
    found = split_of(parse_query(text), merge=True)
    assert found == f"no projected GROUP BY variable is in every triple pattern; {why}", case


def test_background_data_keeps_a_merged_split_out() -> None:
    """A background triple would reach every bucket and be counted in each."""
    found = split_of(parse_query(W3.replace(WINDOW, CLOSE)), background=True, merge=True)
    assert found == (
        "no projected GROUP BY variable is in every triple pattern; "
        "partial sums with background data"
    )
