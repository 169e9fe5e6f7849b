"""The columnar sequences' paths for a few rows (a paced instant's: batches of one
element), against hand-derived values and against the vector paths they stand for: a
``;`` state pairing every run with its few candidates untested and ungrouped
(``sequences.FEW``), and the small-table paths of joins, FILTER inputs, numbers and
text ranks (``tables.SMALL``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from types import SimpleNamespace
from unittest.mock import patch

import numpy as np
import pyoxigraph as ox
from hypothesis import given, settings

from sepia.engine.columnar import codes, orderings, sequences, tables
from sepia.engine.columnar.expressions import SURE, UNSURE
from sepia.engine.columnar.groups import NumericIds
from sepia.engine.columnar.orderings import read_numbers
from sepia.engine.columnar.sequences import PartitionedSequence, _text_ranks
from sepia.engine.columnar.tables import Table, distinct_inputs, join_pairs
from sepia.engine.r2r.numbers import Terms
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement, StreamSet
from sepia.semantics import evaluate

from ..generators import EX, S1, S2
from ..support import background, engine_path, session_of
from .test_sequences import CHECKS, cases

XSD = "http://www.w3.org/2001/XMLSchema#"


@contextmanager
def _vector_paths_only() -> Iterator[None]:
    """Every small path off: each ``;`` state tests and groups its runs, every table
    goes through numpy."""
    with ExitStack() as stack:
        stack.enter_context(patch.object(sequences, "FEW", -1))
        for module in (tables, codes, orderings, sequences):
            stack.enter_context(patch.object(module, "SMALL", -1))
        yield


def _pushed(text: str, data: dict) -> list:
    session = session_of(text)
    assert isinstance(session.queries[0], PartitionedSequence), text
    return [r for e in StreamSet(data).merged() for r in session.push(e)] + session.flush()


@settings(max_examples=150, deadline=None, suppress_health_check=CHECKS)
@given(cases)
def test_small_paths_give_the_vector_paths_answers(case):
    """Pushed an element at a time, the drawn sequences give the same results in the same
    order with every small path on (the default) and off, and the reference's."""
    text, data = case
    small = _pushed(text, data)
    with _vector_paths_only():
        vector = _pushed(text, data)
    assert small == vector, text
    expected = evaluate(parse_query(text), data, background(), name="q")
    assert Counter(small) == Counter(expected), text


def test_few_rows_join_by_a_dictionary():
    """Keys 5, 6, 5 against 5, 7, 5, 6: row 0 meets rows 0 and 2, row 1 row 3, row 2
    rows 0 and 2; grouped by the left row, the right ascending."""
    left = Table({1: np.array([5, 6, 5])}, 3)
    right = Table({1: np.array([5, 7, 5, 6]), 2: np.array([1, 2, 3, 4])}, 4)
    li, ri = join_pairs(left, right)
    assert li.tolist() == [0, 0, 1, 2, 2]
    assert ri.tolist() == [0, 2, 3, 0, 2]


def test_few_rows_filter_inputs_are_distinct_and_sorted():
    """Slots 0 and 2 bound (slot 1 not): rows (3, 4), (1, 4), (3, 4), (0, 9); distinct
    and sorted: (0, 9), (1, 4), (3, 4), an id 0 (``NO_ID``) unbound."""
    table = Table({0: np.array([3, 1, 3, 0]), 2: np.array([4, 4, 4, 9])}, 4)
    rows, inverse = distinct_inputs(table, SimpleNamespace(positions=(0, 1, 2)))
    assert rows == [(None, None, 9), (1, None, 4), (3, None, 4)]
    assert inverse.tolist() == [2, 1, 2, 0]


def test_few_ids_numbers():
    """5 (an integer) and 2.5 (a decimal) sure at their digits, 1.5e0 (a double) unsure."""
    session = session_of(f"""PREFIX : <{EX}>
SELECT * FROM STREAM S1 :s1 WHERE {{ SEQ(A ; B)
  DEFINE GPM A ON S1 {{ ?x :p ?y }} DEFINE GPM B ON S1 {{ ?x :p ?z }} }}""")
    texts = [f'"5"^^<{XSD}integer>', f'"2.5"^^<{XSD}decimal>', f'"1.5E0"^^<{XSD}double>']
    ids = np.array([session.dictionary.encode_text(t) for t in texts], dtype=np.int64)
    numbers = NumericIds(Terms(session.dictionary))
    numbers.learn(ids)
    found = read_numbers(ids[[1, 0, 2, 1]], numbers)
    assert found.state.tolist() == [SURE, SURE, UNSURE, SURE]
    assert [m * 10.0 ** -d for m, d, s in zip(found.mantissa.tolist(), found.digits.tolist(),
                                               found.state.tolist(), strict=True)
            if s == SURE] == [2.5, 5, 2.5]
    assert found.mantissa[2] == found.digits[2] == 0


def test_few_values_ranked_by_text():
    """Ids 7, 3, 9, 3 whose texts are "b", "c", "a": ranks 1, 2, 0, 2."""
    text = {7: "b", 3: "c", 9: "a"}.__getitem__
    assert _text_ranks(np.array([7, 3, 9, 3]), text).tolist() == [1, 2, 0, 2]


SETS = f"""PREFIX : <{EX}>
SELECT ?y ?z FROM STREAM S1 :s1 FROM STREAM S2 :s2
WHERE {{ SEQ(A ; B) DEFINE GPM A ON S1 {{ ?x :p ?y }} DEFINE GPM B ON S2 {{ ?x :q ?z }} }}"""


def _on(stream: str, n: int, t: int, p: str, o: str) -> StreamElement:
    triple = ox.Triple(ox.NamedNode(EX + "a"), ox.NamedNode(EX + p), ox.NamedNode(EX + o))
    return StreamElement(stream, f"_:g{n}", t, t, (triple,))


def test_a_stream_with_two_elements_at_one_time_gives_its_matches_once():
    """S1 holds (:a :p :b) twice at 1, S2 (:a :q :c) at 1 and 2. At 1, A's candidates
    are the two elements' one match: a single run, which takes B at 2 (B at 1 is not
    after it): one result, y = b, z = c, from 1 to 2. With S1's elements at 1 and 3
    instead (a time each, S2 sharing 1), the run from 1 takes B at 2 and the run from 3
    nothing."""
    for second in (1, 3):
        data = {S1: [_on(S1, 0, 1, "p", "b"), _on(S1, 1, second, "p", "b")],
                S2: [_on(S2, 2, 1, "q", "c"), _on(S2, 3, 2, "q", "c")]}
        with engine_path("columnar-always"):
            got = _pushed(SETS, data)
        assert [(r.t, r.interval, {n: str(v) for n, v in r.binding}) for r in got] == [
            (2, (1, 2), {"y": f"<{EX}b>", "z": f"<{EX}c>"})]
        expected = evaluate(parse_query(SETS), data, background(), name="q")
        assert Counter(got) == Counter(expected)
