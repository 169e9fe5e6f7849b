"""FILTERs of order comparisons over (run, candidate) pairs as integer comparisons
(``columnar.orderings``): the pairs kept are the evaluator's, the shortcut is taken
exactly where every value read is a sure number that fits, and a column's numbers read
by one search are ``Columns``'s."""

from __future__ import annotations

import numpy as np
import pyoxigraph as ox
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.engine.columnar.expressions import SURE as SURE_STATE
from sepia.engine.columnar.expressions import Columns, Numbers
from sepia.engine.columnar.groups import NumericIds
from sepia.engine.columnar.orderings import (
    ordering,
    pairs_kept,
    possible,
    read_numbers,
    runs_possible,
    scaled,
)
from sepia.engine.columnar.sequences import _Sides
from sepia.engine.columnar.tables import NO_ID, Table, filtered
from sepia.engine.r2r.numbers import Terms

from ..generators import EX
from ..support import filter_plan, xsd

SURE = [xsd(t, "integer") for t in ("-2", "7", "5", "0")] + [
    xsd(t, "decimal") for t in ("7.0", "6.99", "4.9999999", "-0.5", "5.00")]
"""Integers and decimals that fit at 18 fractional digits: the integer comparisons'."""
WIDE = [xsd("4611686018427387903", "integer"), xsd("123456789012.5", "decimal")]
"""Sure numbers too wide once scaled beside a decimal of many digits."""
OTHER = [xsd("7.0E0", "double"), ox.Literal("3"), xsd("x", "integer"),
         ox.NamedNode(EX + "a")]
"""A double, a string, an ill-typed literal and an IRI: left to ``columnar.expressions``."""
TERMS = [*SURE, *WIDE, *OTHER]
ORDERED = ["?a > ?c", "?c < ?b && ?c > ?a", "?b <= ?a || !(?c >= ?b)", "?c >= ?c",
           "!(?a < ?b) && (?c <= ?a || ?b > ?c)"]
"""Order comparisons of variables under &&, || and !."""


def _sides(codec, slots, run_rows, found_rows) -> tuple[_Sides, Table, Table]:
    """Runs binding ?a ?b and candidates binding ?b ?c (?b: the runs' is read)."""
    a, b, c = (slots.index(n) for n in "abc")
    ids = [codec.encode(t) for t in TERMS]
    runs = Table({a: np.array([ids[r[0]] for r in run_rows]),
                  b: np.array([ids[r[1]] for r in run_rows])}, len(run_rows))
    found = Table({b: np.array([ids[r[0]] for r in found_rows]),
                   c: np.array([ids[r[1]] for r in found_rows])}, len(found_rows))
    return _Sides(runs, found), runs, found


INDEX = st.sampled_from(range(len(TERMS)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(INDEX, INDEX), min_size=1, max_size=6),
       st.lists(st.tuples(INDEX, INDEX), min_size=1, max_size=6),
       st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=20),
       st.sampled_from(ORDERED))
def test_ordered_pairs_are_the_evaluators(run_rows, found_rows, pairs, condition):
    """Where every value read is a small sure number, the integer comparisons are
    taken, and where one is not a sure number they are not; taken, they keep the pairs
    the evaluator keeps on the pairs' rows."""
    codec, select, slots = filter_plan(condition)
    sides, runs, found = _sides(codec, slots, run_rows, found_rows)
    compiled = ordering(select.condition, slots)
    assert compiled is not None
    read = compiled.read
    run = np.array([p[0] % runs.size for p in pairs], dtype=np.int64)
    option = np.array([p[1] % found.size for p in pairs], dtype=np.int64)
    values = sides.scaled(read, NumericIds(Terms(codec)), len(run))
    a, b, c = (slots.index(n) for n in "abc")
    read_terms = {TERMS[r[0]] for r in run_rows if a in read} | {
        TERMS[r[1]] for r in run_rows if b in read} | {
        TERMS[r[1]] for r in found_rows if c in read}
    if read_terms <= set(SURE):
        assert values is not None, (condition, read_terms)
    if not read_terms <= {*SURE, *WIDE}:
        assert values is None, (condition, read_terms)
    if values is None:
        return
    table = Table({a: runs.columns[a][run], b: runs.columns[b][run],
                   c: found.columns[c][option]}, len(run))
    compared = sides.compared(compiled, NumericIds(Terms(codec)), len(run))
    assert compared is not None
    keep = pairs_kept(compiled.decide, compared, run, option)
    width = len(slots.names)
    assert table.take(np.flatnonzero(keep)).rows(width) == filtered(
        table, select.condition).rows(width)


def test_head_and_shoulders_interval_by_hand():
    """?c < ?b && ?c > ?a with a run at a = 1, b = 5.0: of the candidates 0, 1, 3,
    4.9999999, 5, 5.00 and 7, only 3 and 4.9999999 lie strictly
    between (5 and 5.00 equal 5.0)."""
    codec, select, slots = filter_plan("?c < ?b && ?c > ?a")
    a, b, c = (slots.index(n) for n in "abc")
    terms = [xsd("0", "integer"), xsd("1", "integer"), xsd("3", "integer"),
             xsd("4.9999999", "decimal"), xsd("5", "integer"),
             xsd("5.00", "decimal"), xsd("7", "integer")]
    runs = Table({a: np.array([codec.encode(xsd("1", "integer"))]),
                  b: np.array([codec.encode(xsd("5.0", "decimal"))])}, 1)
    found = Table({c: np.array([codec.encode(t) for t in terms])}, len(terms))
    compiled = ordering(select.condition, slots)
    assert compiled is not None
    values = _Sides(runs, found).compared(compiled, NumericIds(Terms(codec)), len(terms))
    assert values is not None
    keep = pairs_kept(compiled.decide, values, np.zeros(len(terms), dtype=np.int64),
                      np.arange(len(terms)))
    assert np.flatnonzero(keep).tolist() == [2, 3]


@settings(deadline=None)
@given(st.sampled_from(["?a * ?b > ?c", "?a / 2 > ?b", "?a * 1.0E0 > ?b", "?a + \"1\" > ?b",
                        "(?a + 1) * 2 > ?b", "?a = ?b", "?a > 3", "?a != ?c", "BOUND(?a)"]))
def test_other_shapes_are_left_to_the_vectors(condition):
    """Products of variables, division, double or string constants, nested arithmetic,
    equality, lone constants and functions are not order comparisons of variables (or
    of a variable and an exact constant, added or multiplied): ``columnar.expressions``
    decides them."""
    _, select, slots = filter_plan(condition)
    assert ordering(select.condition, slots) is None


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([*TERMS, None]), min_size=1, max_size=12), st.booleans())
def test_numbers_read_by_one_search_are_the_columns(column, learned):
    """``read_numbers`` gives ``Columns``'s numbers, the ids known beforehand (one
    search) or not (through ``Columns``); unbound rows (``NO_ID``) included."""
    codec, _, _ = filter_plan("?a > ?b")
    ids = np.array([NO_ID if t is None else codec.encode(t) for t in column], dtype=np.int64)
    numbers = NumericIds(Terms(codec))
    if learned:
        numbers.of(np.unique(ids[ids != NO_ID]))
    mine = read_numbers(ids, numbers)
    theirs = Columns(Table({0: ids}, len(ids)), NumericIds(Terms(codec))).column(0)
    for field in ("state", "digits", "mantissa"):
        assert getattr(mine, field).tolist() == getattr(theirs, field).tolist(), field


def test_values_too_wide_once_scaled_are_left_to_the_vectors():
    """4611686018427387903 beside 6.99 would be 461168601842738790300 at 2 digits, past
    2^62: not taken; 123456789012.5 beside 7 fits at 1 digit, and 123456789012.5 > 7."""
    codec, select, slots = filter_plan("?a > ?c")
    a, c = slots.index("a"), slots.index("c")
    compiled = ordering(select.condition, slots)
    assert compiled is not None

    def values(left: ox.Literal, right: ox.Literal):
        runs = Table({a: np.array([codec.encode(left)])}, 1)
        found = Table({c: np.array([codec.encode(right)])}, 1)
        return _Sides(runs, found).compared(compiled, NumericIds(Terms(codec)), 1)

    assert values(xsd("4611686018427387903", "integer"), xsd("6.99", "decimal")) is None
    fits = values(xsd("123456789012.5", "decimal"), xsd("7", "integer"))
    assert fits is not None
    one = np.zeros(1, dtype=np.int64)
    assert pairs_kept(compiled.decide, fits, one, one).tolist() == [True]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(range(len(SURE))), st.sampled_from(range(len(SURE))),
                          st.integers(0, 2)), min_size=1, max_size=6),
       st.lists(st.tuples(st.sampled_from(range(len(SURE))), st.sampled_from(range(len(SURE))),
                          st.integers(0, 2)), min_size=1, max_size=8),
       st.sampled_from([c for c in ORDERED if "!" not in c]))
def test_runs_found_impossible_keep_no_candidate(run_rows, found_rows, condition):
    """A run ``possible`` rules out keeps none of its partition's candidates under the
    FILTER (the evaluator's answer on every (run, candidate) pair of one partition)."""
    codec, select, slots = filter_plan(condition)
    test = possible(select.condition, slots)
    compiled = ordering(select.condition, slots)
    assert test is not None and compiled is not None
    a, b, c = (slots.index(n) for n in "abc")
    ids = [codec.encode(t) for t in SURE]
    found_rows = sorted(found_rows, key=lambda r: r[2])  # by partition, as ``_earliest``'s
    runs = Table({a: np.array([ids[r[0]] for r in run_rows]),
                  b: np.array([ids[r[1]] for r in run_rows])}, len(run_rows))
    found = Table({b: np.array([ids[r[0]] for r in found_rows]),
                   c: np.array([ids[r[1]] for r in found_rows])}, len(found_rows))
    values = _Sides(runs, found).scaled(compiled.read, NumericIds(Terms(codec)), 0)
    assert values is not None
    keys = np.array([r[2] for r in found_rows])
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    run_keys = np.array([r[2] for r in run_rows])
    segment = np.minimum(np.searchsorted(keys[starts], run_keys), len(starts) - 1)
    able = runs_possible(test, values.values, segment, starts)
    width = len(slots.names)
    for r in np.flatnonzero(~able).tolist():
        option = np.flatnonzero(keys == run_keys[r])
        table = Table({a: np.repeat(runs.columns[a][r], len(option)),
                       b: np.repeat(runs.columns[b][r], len(option)),
                       c: found.columns[c][option]}, len(option))
        assert filtered(table, select.condition).rows(width) == [], (r, condition)


def test_a_run_waiting_above_its_partitions_prices_is_ruled_out_by_hand():
    """?c > ?a: runs at a = 7 and a = 5 over a partition whose prices are -2, 0 and 5:
    none is above 7 or 5; a run at a = -2 could take 0 or 5. ?c < ?b && ?c > ?a at
    a = -2, b = 0 over prices 5 and 7: none is below 0."""
    _, _, slots = filter_plan("?c > ?a")
    a, b, c = (slots.index(n) for n in "abc")

    def able(condition: str, run_values: list[tuple[str, str]], prices: list[str]) -> list[bool]:
        codec, select, slots = filter_plan(condition)
        runs = Table({a: np.array([codec.encode(xsd(x, "integer")) for x, _ in run_values]),
                      b: np.array([codec.encode(xsd(y, "integer")) for _, y in run_values])},
                     len(run_values))
        found = Table({c: np.array([codec.encode(xsd(p, "integer")) for p in prices])},
                      len(prices))
        test, compiled = possible(select.condition, slots), ordering(select.condition, slots)
        assert test is not None and compiled is not None
        values = _Sides(runs, found).scaled(compiled.read, NumericIds(Terms(codec)), 0)
        assert values is not None
        return runs_possible(test, values.values, np.zeros(len(run_values), dtype=np.int64),
                             np.zeros(1, dtype=np.int64)).tolist()

    assert able("?c > ?a", [("7", "0"), ("5", "0"), ("-2", "0")], ["-2", "0", "5"]) == [
        False, False, True]
    assert able("?c < ?b && ?c > ?a", [("-2", "0"), ("-2", "6")], ["5", "7"]) == [False, True]
    assert possible(filter_plan("!(?c > ?a)")[1].condition, slots) is None


BOUND = 2**62
NUMBER = st.one_of(
    st.integers(-1000, 1000).map(lambda n: xsd(str(n), "integer")),
    st.sampled_from([BOUND // 10 - 1, BOUND // 10, BOUND // 10 + 1, BOUND - 1, BOUND, 2**63,
                     -BOUND // 10, -(2**63)]).map(lambda n: xsd(str(n), "integer")),
    st.tuples(st.integers(-10**6, 10**6), st.integers(0, 19)).map(
        lambda p: xsd(f"{'-' if p[0] < 0 else ''}{abs(p[0]) // 10**p[1]}."
                      f"{str(abs(p[0]) % 10**p[1]).zfill(p[1])}" if p[1] else str(p[0]),
                      "decimal")),
    st.sampled_from(OTHER),
)
"""Integers (small, near 2^62 once scaled, past 2^63), decimals of 0-19 fractional
digits, and a double, a string, an ill-typed literal and an IRI."""
CONSTANT = st.sampled_from(["10", "-3", "0", "2.5", "0.001", "1.000000000000000001",
                            "461168601842738790", "7.0E0"])
ARITHMETIC = ["?a * {k} <= ?c", "{k} * ?b > ?c", "?c + {k} >= ?a", "?a - {k} < ?c",
              "{k} - ?c <= ?b", "?c * {k} <= ?a && ?c > ?b", "!(?b + {k} < ?a * {k})"]
"""A variable times, plus or minus a constant, compared with another side."""


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(NUMBER, NUMBER), min_size=1, max_size=5),
       st.lists(st.tuples(NUMBER, NUMBER), min_size=1, max_size=5),
       st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=12),
       st.sampled_from(ARITHMETIC), CONSTANT)
def test_arithmetic_sides_are_the_evaluators(run_rows, found_rows, pairs, shape, constant):
    """A side times, plus or minus an exact constant: where the integer comparisons are
    taken they keep the pairs the evaluator keeps; they are taken where every value read
    is a small integer or decimal of few digits, and not where one is not a sure number
    or the constant is a double."""
    codec, select, slots = filter_plan(shape.format(k=constant))
    compiled = ordering(select.condition, slots)
    if "E" in constant:
        assert compiled is None
        return
    assert compiled is not None
    a, b, c = (slots.index(n) for n in "abc")
    runs = Table({a: np.array([codec.encode(r[0]) for r in run_rows]),
                  b: np.array([codec.encode(r[1]) for r in run_rows])}, len(run_rows))
    found = Table({b: np.array([codec.encode(r[0]) for r in found_rows]),
                   c: np.array([codec.encode(r[1]) for r in found_rows])}, len(found_rows))
    run = np.array([p[0] % runs.size for p in pairs], dtype=np.int64)
    option = np.array([p[1] % found.size for p in pairs], dtype=np.int64)
    values = _Sides(runs, found).compared(compiled, NumericIds(Terms(codec)), len(run))
    keep = None if values is None else pairs_kept(compiled.decide, values, run, option)
    read = [r[0] for r in run_rows if a in compiled.read] + [
        r[1] for r in run_rows if b in compiled.read] + [
        r[1] for r in found_rows if c in compiled.read]
    if any(t in OTHER for t in read):
        assert keep is None
    if all(t not in OTHER and _small(t) for t in read) and len(constant) < 5:
        assert keep is not None, (shape, constant, read)
    if keep is None:
        return
    table = Table({a: runs.columns[a][run], b: runs.columns[b][run],
                   c: found.columns[c][option]}, len(run))
    width = len(slots.names)
    assert table.take(np.flatnonzero(keep)).rows(width) == filtered(
        table, select.condition).rows(width)


def _small(term: ox.Literal) -> bool:
    """Whether a drawn number is at most 1000 with at most 4 fractional digits."""
    digits = term.value.partition(".")[2] if term.datatype.value.endswith("decimal") else ""
    return len(digits) <= 4 and abs(float(term.value)) <= 1000


def test_big_after_small_by_hand():
    """?c * 10 <= ?a (credit cards' B+): runs at a = 100 and 55.5 over candidates 10,
    5.55, 5.56, 11 and -3 keep (100: 10, 5.55, 5.56, -3), (55.5: 5.55, -3). At the
    edge, beside a = 4611686018427387000, c = 461168601842738700 and 461168601842738790
    fit (c * 10 under 2^62; the first is kept); one more is past 2^62 and
    ``columnar.expressions``'s; 10^-18 * 0.5 needs 19 fractional digits (pyoxigraph
    fails it: an error, so !(... <= 0) keeps nothing). A sum is bounded too: 2^62 - 114
    fits, 2^62 + 86 does not."""
    codec, select, slots = filter_plan("?c * 10 <= ?a")
    a, c = slots.index("a"), slots.index("c")
    compiled = ordering(select.condition, slots)
    assert compiled is not None

    def kept(run_values: list[ox.Literal], options: list[ox.Literal]) -> list[int] | None:
        runs = Table({a: np.array([codec.encode(t) for t in run_values])}, len(run_values))
        found = Table({c: np.array([codec.encode(t) for t in options])}, len(options))
        run = np.repeat(np.arange(len(run_values)), len(options))
        option = np.tile(np.arange(len(options)), len(run_values))
        values = _Sides(runs, found).compared(compiled, NumericIds(Terms(codec)), len(run))
        return None if values is None else np.flatnonzero(
            pairs_kept(compiled.decide, values, run, option)).tolist()

    options = [xsd("10", "integer"), xsd("5.55", "decimal"), xsd("5.56", "decimal"),
               xsd("11", "integer"), xsd("-3", "integer")]
    assert kept([xsd("100", "integer"), xsd("55.5", "decimal")], options) == [0, 1, 2, 4, 6, 9]
    top = [xsd("4611686018427387000", "integer")]
    assert kept(top, [xsd("461168601842738700", "integer")]) == [0]
    assert kept(top, [xsd("461168601842738790", "integer")]) == []
    assert kept(top, [xsd("461168601842738791", "integer")]) is None
    codec, select, slots = filter_plan("!(?c * 0.5 <= ?a)")
    compiled = ordering(select.condition, slots)
    assert compiled is not None
    zero, tiny = xsd("0", "integer"), xsd("0.000000000000000001", "decimal")
    assert kept([zero], [tiny]) is None  # exactly 5 * 10^-19 > 0, but an error to SPARQL:
    pair = Table({a: np.array([codec.encode(zero)]), c: np.array([codec.encode(tiny)])}, 1)
    assert filtered(pair, select.condition).size == 0
    assert kept([zero], [xsd("0.00000000000000001", "decimal")]) == [0]
    codec, select, slots = filter_plan("?c + 461168601842738790 > ?a")
    compiled = ordering(select.condition, slots)
    assert compiled is not None
    assert kept([zero], [xsd("4150517416584649000", "integer")]) == [0]  # 2^62 - 114
    assert kept([zero], [xsd("4150517416584649200", "integer")]) is None  # 2^62 + 86


def test_values_at_one_scale_already_are_their_mantissas():
    """Prices of 2 digits beside 2 digits: 25.39 and -1.07 are 2539 and -107 at 2 digits,
    as they are; 2^62 - 1 (2^62 in floating point) does not fit, at any digits."""

    def numbers(mantissas: list[int], digits: list[int]) -> Numbers:
        return Numbers(np.full(len(mantissas), SURE_STATE, dtype=np.int8),
                       np.array(digits, dtype=np.int64), np.array(mantissas, dtype=np.int64))

    found = scaled([numbers([2539, -107], [2, 2]), numbers([990], [2])])
    assert found is not None
    assert [v.tolist() for v in found[0]] == [[2539, -107], [990]] and found[1] == 2
    mixed = scaled([numbers([2539], [2]), numbers([99, 7], [1, 0])])
    assert mixed is not None
    assert [v.tolist() for v in mixed[0]] == [[2539], [990, 700]]
    assert scaled([numbers([2**62 - 1], [0]), numbers([7], [0])]) is None
    assert scaled([numbers([-(2**62) + 1], [2]), numbers([7], [2])]) is None
