"""The order the columnar sequences release one step's results in, and their partition
labels as columns (``columnar.sequences``).

``_released`` finds by ranks what the row engine gets by sorting one instant's results by
their jsonl lines (``partition.result_order``); here the lines themselves are written and
sorted, over texts chosen to trip a rank-based order (quotes, backslashes, spaces and ``!``
below the JSON string's closing quote, numbers of several lengths and signs, a term that
is a prefix of another's text). ``Labels`` is checked against a dictionary of labels."""

from __future__ import annotations

import numpy as np
import pyoxigraph as ox
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.engine.columnar.sequences import NONE, Labels, _number_ranks, _released, _text_ranks
from sepia.engine.query.partition import result_order
from sepia.rdf.results import Result, Solution

TERMS = [
    ox.NamedNode("http://ex.org/a"),
    ox.NamedNode("http://ex.org/a!"),
    ox.NamedNode("http://ex.org/ab"),
    ox.Literal("a"),
    ox.Literal("a", language="en"),
    ox.Literal("a b"),
    ox.Literal("a!"),
    ox.Literal('say "hi"'),
    ox.Literal("back\\slash"),
    ox.Literal("tab\there"),
    ox.Literal("é"),
    ox.Literal("10", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
    ox.Literal("9", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
]
"""Terms whose texts sort differently as raw strings, as JSON strings and as lines."""
NAMES = ["<http://ex.org/a>@5.m1", "<http://ex.org/a>@5.m12", "<http://ex.org/a>@12.m2",
         '"x y"@5.m1', '"x"@5.m1', '"x!"@5.m1', '"\\"q\\""@5.m1', "_:b1@-3.m1"]
"""Match names with the same kind of traps."""


@st.composite
def steps(draw) -> tuple:
    """Rows of one step: few ends (many ties), starts of varied lengths and signs, two
    columns of terms, and match names or none."""
    size = draw(st.integers(1, 25))
    ends = draw(st.lists(st.sampled_from([7, 100, 1000]), min_size=size, max_size=size))
    starts = draw(st.lists(st.sampled_from([-5, -50, 1, 12, 123, 9, 99]),
                           min_size=size, max_size=size))
    columns = [draw(st.lists(st.integers(1, len(TERMS)), min_size=size, max_size=size))
               for _ in range(2)]
    names = draw(st.none() | st.lists(st.sampled_from(NAMES), min_size=size, max_size=size))
    interval = draw(st.booleans())
    return ends, starts, columns, names, interval


@settings(max_examples=300, deadline=None)
@given(steps())
def test_released_in_the_order_of_the_lines(step) -> None:
    ends, starts, columns, names, interval = step
    terms = {i + 1: t for i, t in enumerate(TERMS)}
    results = [
        Result("q", end, binding=Solution([("u", terms[columns[0][k]]),
                                           ("v", terms[columns[1][k]])]),
               interval=(starts[k], end) if interval else None,
               match=None if names is None else names[k])
        for k, end in enumerate(ends)
    ]
    expected = [result_order(r) for r in sorted(results, key=lambda r: (r.t, result_order(r)))]
    order = _released(np.array(ends), np.array(starts) if interval else None, names,
                      [np.array(c) for c in columns], terms)
    assert [result_order(results[k]) for k in order.tolist()] == expected
    if names is not None:  # each row's match, one per name: its names need no ranks
        match = np.array([NAMES.index(n) for n in names], dtype=np.int64)
        order = _released(np.array(ends), np.array(starts) if interval else None, names,
                          [np.array(c) for c in columns], terms, match)
        assert [result_order(results[k]) for k in order.tolist()] == expected


def test_released_ties_by_line_text_worked_out() -> None:
    """Two results at t=7, from 12 and from 9: the line with ``"from": 12`` comes first
    (its text, "1" < "9"), though 9 < 12; the result at t=3 before both."""
    a = ox.NamedNode("http://ex.org/a")
    terms = {1: a}
    order = _released(np.array([7, 7, 3]), np.array([9, 12, 1]), None, [np.array([1, 1, 1])],
                      terms)
    assert order.tolist() == [2, 1, 0]


@st.composite
def label_updates(draw) -> list:
    """Steps of (value, made, count, latest or None) labels, with the instant after each."""
    out, instant = [], 0
    for _ in range(draw(st.integers(1, 6))):
        instant += draw(st.integers(1, 10))
        values = draw(st.lists(st.integers(1, 12), unique=True, max_size=6))
        rows = [(v, draw(st.integers(0, instant)), draw(st.integers(0, 5)),
                 draw(st.none() | st.integers(0, instant))) for v in values]
        out.append((rows, instant))
    return out


@settings(max_examples=200, deadline=None)
@given(label_updates(), st.sampled_from([None, 3, 8]))
def test_labels_as_a_dictionary_of_live_partitions(updates, width) -> None:
    """Labels updated then kept alive agree with a dictionary updated then pruned as the
    row engine drops a partition (no run left, or its latest start past WITHIN)."""
    labels, expected = Labels.of_rows([]), {}
    for rows, instant in updates:
        labels = labels.updated(Labels.of_rows(rows)).alive(instant, width)
        expected.update({v: (m, c, e) for v, m, c, e in rows})
        expected = {v: label for v, label in expected.items() if label[2] is not None
                    and (width is None or instant <= label[2] + width)}
        assert labels.rows() == sorted((v, *label) for v, label in expected.items())
        asked = np.array(sorted(set(range(1, 13))), dtype=np.int64)
        found = labels.of(asked)
        for k, v in enumerate(asked.tolist()):
            m, c, e = expected.get(v, (NONE, 0, NONE))
            assert (found.made[k], found.count[k], found.latest[k]) == (m, c, e)


def test_number_ranks_are_the_ranks_of_their_texts() -> None:
    """``from`` times ranked by their texts: by number where all are non-negative and of
    one length, by text otherwise ("-1" < "12" < "5" < "9", "10" < "100" < "12")."""
    assert _number_ranks(np.array([1764633600123, 1764633600099, 1764633600123])).tolist() == [
        1, 0, 1]
    assert _number_ranks(np.array([5, 12, 9, -1])).tolist() == [2, 1, 3, 0]
    assert _number_ranks(np.array([10, 99, 12, 100])).tolist() == [0, 3, 2, 1]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-1000, 10**13), min_size=1, max_size=20)
       | st.lists(st.integers(10**12, 10**13 - 1), min_size=1, max_size=20))
def test_number_ranks_agree_with_text_ranks(values: list[int]) -> None:
    column = np.array(values, dtype=np.int64)
    assert _number_ranks(column).tolist() == _text_ranks(column, str).tolist()


def test_results_made_at_once_are_those_made_one_by_one():
    """``Result.of_solutions`` (the sequences' results, each slot set for all rows at
    once) gives the rows ``Result.of_solution`` gives one at a time, intervals and match
    names given or not, every field readable."""
    solutions = [Solution((("x", TERMS[0]),)), Solution((("x", TERMS[3]), ("y", TERMS[4])))]
    for intervals, matches in (([(1, 2), (0, 3)], ["m1", "m2"]), ([None, None], [None, None])):
        made = Result.of_solutions("q", "+", [2, 3], solutions, intervals, matches)
        assert made == [Result.of_solution("q", t, "+", s, i, m) for t, s, i, m in zip(
            [2, 3], solutions, intervals, matches, strict=True)]
        assert [(r.query, r.t, r.op, r.binding, r.triples, r.boolean, r.interval, r.match)
                for r in made] == [("q", t, "+", s, None, None, i, m) for t, s, i, m in zip(
                    [2, 3], solutions, intervals, matches, strict=True)]
