"""Kleene plus on the columnar core's sequences (``columnar.sequences``): ``SEQ(A , B+)``
and longer sequences with one ``B+`` past the first element, last or mid-sequence, joined
by ``,`` or ``;``, with GPMs joining a background graph (SPAseq Q2's shape), against the
reference evaluator (matches up to their names) and the row engine (the same lines, match
names included), through the push path and through batches cut anywhere; hand-derived
cases; and what stays on the row engine."""

from __future__ import annotations

import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.engine.columnar import ColumnBatch
from sepia.engine.columnar.carried import carried, carried_slot
from sepia.engine.columnar.frontend import stream_columns
from sepia.engine.columnar.sequences import PartitionedSequence
from sepia.engine.query.continuous import ContinuousQuery
from sepia.engine.query.partition import PartitionedQuery
from sepia.io.streams import read_stream
from sepia.lang import parse_query
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement
from sepia.semantics import evaluate

from ..generators import EX, S1, S2, SILENT, answering, narrow_triples, streams
from ..support import (
    assert_columnar_agrees,
    assert_resumes,
    background,
    canonical,
    cut_anywhere,
    element,
    engine_path,
    integer,
    pushed_in_cuts,
    recorded_numbers,
    row_engines,
    session_of,
)

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

GPMS = {
    "A": "DEFINE GPM A ON S1 { ?x :p ?y }",
    "B": "DEFINE GPM B ON S2 { ?x ?k ?z }",
    "C": "DEFINE GPM C ON S1 { ?x :q ?w FILTER(?w != ?y) }",  # ?y from another GPM
    "D": "DEFINE GPM D ON S1 { ?x :p ?v . ?x :q ?u }",
    "G": "DEFINE GPM G ON S1 { ?x :q ?m . GRAPH :g { ?x :r ?h } }",  # a background join
    "K": "DEFINE GPM K ON S1 { ?x ?e ?n . GRAPH :g { ?n :r ?o } }",
}
"""GPMs of the covered subset, all binding ?x: BGPs over the event graph, FILTERs on their
own and other GPMs' variables, joins with the background's named graph :g."""


@st.composite
def kleene_sequences(draw) -> str:
    """A SPAseq query of 2-3 GPMs, one ``X+`` past the first (last or mid-sequence),
    joined by ``,`` or ``;``, PARTITION BY ?x or none, WITHIN sliding or none."""
    names = draw(st.lists(st.sampled_from(sorted(GPMS)), min_size=2, max_size=3, unique=True))
    names[draw(st.integers(1, len(names) - 1))] += "+"
    ops = draw(st.lists(st.sampled_from([",", ";"]), min_size=len(names) - 1,
                        max_size=len(names) - 1))
    expression = names[0] + "".join(f" {op} {n}" for op, n in zip(ops, names[1:], strict=True))
    width = draw(st.integers(1, 15))
    within = draw(st.sampled_from(["", f"WITHIN {width}"]))
    head = draw(st.sampled_from(["SELECT *", "SELECT ?x ?y", "SELECT ?x"]))
    defines = "\n".join(GPMS[n.rstrip("+")] for n in names)
    partition = draw(st.sampled_from(["PARTITION BY ?x\n", ""]))
    return (
        f"PREFIX : <{EX}>\n{head} {within}\nFROM STREAM S1 :s1\nFROM STREAM S2 :s2\n"
        f"{partition}WHERE {{ SEQ({expression})\n{defines} }}"
    )


cases = answering(kleene_sequences(), st.one_of(SILENT, SILENT, streams(content=narrow_triples)),
                  aimed=True)
"""Planted streams, without noise two times in three (noise breaks strict contiguity)."""


@settings(max_examples=200, deadline=None, suppress_health_check=CHECKS)
@given(cases)
def test_kleene_sequences_agree_with_reference(case):
    """The push path gives the reference's matches (up to their names), in time order."""
    text, data = case
    assert_columnar_agrees(text, data, PartitionedSequence, renamed=True)


@settings(max_examples=200, deadline=None, suppress_health_check=CHECKS)
@given(cases, st.lists(st.integers(0, 30), max_size=4))
def test_kleene_batches_cut_anywhere_are_the_row_engines(case, cuts):
    """``push_columns`` with the input cut at arbitrary elements (inside a run, between
    two iterations) gives the reference's matches and the row engine's very lines: the
    same match names (a partition's label and count) and order."""
    text, data = case
    got, rows = cut_anywhere(text, data, cuts, canonical)
    assert isinstance(session_of(text, "rows").queries[0], PartitionedQuery
                      if "PARTITION" in text else ContinuousQuery)
    assert got == rows, text


@settings(max_examples=100, deadline=None, suppress_health_check=CHECKS)
@given(cases, st.integers(0, 30))
def test_kleene_runs_resume_from_a_snapshot(case, cut):
    """A session restored from a JSON snapshot taken anywhere (runs holding iterations,
    partitions with matches counted) goes on as one that ran through."""
    text, data = case
    with engine_path("columnar-always"):
        assert isinstance(session_of(text).queries[0], PartitionedSequence), text
        assert_resumes(text, data, min(cut, sum(len(es) for es in data.values())),
                       renamed=True)


BIG_THEN_SMALL = f"""PREFIX : <{EX}>
SELECT ?x ?y ?z WITHIN 10 FROM STREAM S1 :s1 PARTITION BY ?x
WHERE {{ SEQ(A , B+)
  DEFINE GPM A ON S1 {{ ?x :p ?y }}
  DEFINE GPM B ON S1 {{ ?x :p ?z FILTER(?z * 10 <= ?y) }} }}"""


def _one_by_one(query: str, elements: list[StreamElement]) -> list[Result]:
    """The columnar core's results with the elements pushed one at a time, one batch of
    columns each, then its flush."""
    session = session_of(query)
    assert isinstance(session.queries[0], PartitionedSequence)
    got = [r for e in elements
           for r in session.push_columns(ColumnBatch.from_elements([e], session.dictionary))]
    return got + session.flush()


def test_big_then_small_by_hand():
    """Amounts of :a at 1-4 and 20: 100, 5, 9, 50, 3 (:b's 1 at 2 is another partition).
    A at 1 (100) takes 5 at 2 (match m1: one row), then 9 at 3 (m2: two rows, 5 and 9);
    50 at 4 is no B of it (50 * 10 > 100), which ends that run. A at 2 (5), 3 (9) find no
    B after them; A at 4 (50) takes nothing at 20 (3 * 10 <= 50, but 20 - 4 > WITHIN 10).
    The partition was made at 1 and holds runs through 4; at 20 it is a new one (the last
    run, from 4, expired at the streamset's next instant past 14): no matches there."""
    elements = [
        element(0, 1, ("a", "p", 100)),
        element(1, 2, ("a", "p", 5), ("b", "p", 1)),
        element(2, 3, ("a", "p", 9)),
        element(3, 4, ("a", "p", 50)),
        element(4, 20, ("a", "p", 3)),
    ]
    got = _one_by_one(BIG_THEN_SMALL, elements)
    a, y = f"<{EX}a>", integer(100)
    assert [(r.t, r.interval, r.match, {n: str(v) for n, v in r.binding}) for r in got] == [
        (2, (1, 2), f"{a}@1.m1", {"x": a, "y": y, "z": integer(5)}),
        (3, (1, 3), f"{a}@1.m2", {"x": a, "y": y, "z": integer(5)}),
        (3, (1, 3), f"{a}@1.m2", {"x": a, "y": y, "z": integer(9)}),
    ]
    assert got == row_engines(BIG_THEN_SMALL, elements)
    reference = evaluate(parse_query(BIG_THEN_SMALL), {S1: elements}, background(), name="q")
    assert canonical(reference) == canonical(got)


def _in_batches(query: str, *batches: list[StreamElement]) -> list[Result]:
    """A session's results with each list of elements pushed as one batch of columns."""
    session = session_of(query)
    assert isinstance(session.queries[0], PartitionedSequence)
    got = [r for batch in batches
           for r in session.push_columns(ColumnBatch.from_elements(batch, session.dictionary))]
    return got + session.flush()


def _lines(results: list[Result]) -> list[tuple]:
    return [(r.t, r.interval, r.match, r.binding["z"].value) for r in results]


def test_kleene_iterations_of_a_batch_in_one_pass(monkeypatch):
    """One batch, :a's amounts 100, 5, 9, 50, 3 at 1-5 (:b's 1 at 6 another partition's):
    the run from 100 takes 5 at 2 and 9 at 3, and ends at 50 (50 * 10 > 100), so 3 at 5,
    small enough, is not its: a chain stops at its first miss. The run from 50 takes 3 at
    5, the partition's last instant here, and waits: the next batch's 4 at 7 is its second
    iteration. All of it without a strict step one instant at a time."""
    first = [element(0, 1, ("a", "p", 100)), element(1, 2, ("a", "p", 5)),
             element(2, 3, ("a", "p", 9)), element(3, 4, ("a", "p", 50)),
             element(4, 5, ("a", "p", 3)), element(5, 6, ("b", "p", 1))]
    then = [element(6, 7, ("a", "p", 4))]
    expected = row_engines(BIG_THEN_SMALL, [*first, *then])

    def no_step(*args: object, **kwargs: object) -> None:
        raise AssertionError("stepped one instant at a time")

    monkeypatch.setattr(PartitionedSequence, "_strict", no_step)
    got = _in_batches(BIG_THEN_SMALL, first, then)
    a = f"<{EX}a>"
    assert _lines(got) == [(2, (1, 2), f"{a}@1.m1", "5"), (3, (1, 3), f"{a}@1.m2", "5"),
                           (3, (1, 3), f"{a}@1.m2", "9"), (5, (4, 5), f"{a}@1.m3", "3"),
                           (7, (4, 7), f"{a}@1.m4", "3"), (7, (4, 7), f"{a}@1.m4", "4")]
    assert got == expected


def test_kleene_runs_of_long_partitions_step_one_at_a_time(monkeypatch):
    """Every element :a's: the runs from 100 at 1 and from each small amount after it
    have 19 to 1 later instants of their partition here, 10 each on average, more than
    ``CHAIN``, so the iterations are stepped an instant at a time (each run stops at its
    first miss) rather than paired with them all; the row engine's lines all the same."""
    query = BIG_THEN_SMALL
    elements = [element(0, 1, ("a", "p", 100))] + [
        element(n, n + 1, ("a", "p", 2 + n % 3)) for n in range(1, 20)]
    steps = []
    strict = PartitionedSequence._strict
    monkeypatch.setattr(PartitionedSequence, "_strict",
                        lambda self, *a, **k: (steps.append(1), strict(self, *a, **k))[1])
    got = _in_batches(query, elements)
    assert steps
    assert len(got) == sum(range(1, 11))  # 100 takes every one up to 10 at 11 (WITHIN)
    assert got == row_engines(query, elements)
    monkeypatch.setattr(PartitionedSequence, "_chained", lambda *a: 1 / 0)
    single = BIG_THEN_SMALL.replace("PARTITION BY ?x\n", "")  # the span's instants all
    assert len(_in_batches(single, elements)) == len(got)  # the partition's: never tried


def test_kleene_runs_branching_at_an_instant_step_one_at_a_time():
    """Two B options at one instant (5 and 6 at 2) split the run from 100 in two, each
    going on with 7 at 3: four matches, those ending at 3 of two rows each. In one batch
    the iterations are then stepped an instant at a time (a chain holds one option per
    instant); the row engine's lines and the reference's matches all the same. (:b's
    element at 4 lets the session step 3 with the batch: it holds a batch's last instant
    back until a later one comes.)"""
    elements = [element(0, 1, ("a", "p", 100)), element(1, 2, ("a", "p", 5), ("a", "p", 6)),
                element(2, 3, ("a", "p", 7)), element(3, 4, ("b", "p", 1))]
    got = _in_batches(BIG_THEN_SMALL, elements)
    a = f"<{EX}a>@1."
    assert _lines(got) == [(2, (1, 2), f"{a}m1", "5"), (2, (1, 2), f"{a}m2", "6"),
                           (3, (1, 3), f"{a}m3", "5"), (3, (1, 3), f"{a}m3", "7"),
                           (3, (1, 3), f"{a}m4", "6"), (3, (1, 3), f"{a}m4", "7")]
    assert got == row_engines(BIG_THEN_SMALL, elements)
    reference = evaluate(parse_query(BIG_THEN_SMALL), {S1: elements}, background(), name="q")
    assert canonical(reference) == canonical(got)


BLOCK = 700
"""Bytes of a block of the file below: three elements."""


def test_numbers_read_with_a_file_are_taught_once_and_not_learnt(tmp_path, monkeypatch):
    """A file read as columns brings its amounts' numbers (``frontend``'s reader works
    them out): two blocks of three elements, each pushed in slices of two (a session
    merges the instant it holds back with the next slice), the query is taught each
    block's once, not per slice, learns none of them itself, and gives the lines it
    gives from the row reader's elements (100.50 at 1 takes 5.0 at 2 and 9.25 at 3, 50
    at 4 ends it; 50 takes 3 at 5; :b's 3.0 at 6 is 3's term)."""
    amounts = ["100.50", "5.0", "9.25", "50", "3", "3.0"]
    stamps = [f'"2026-01-01T00:00:00.00{n + 1}Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'
              for n in range(len(amounts))]
    path = tmp_path / "s1.trig"
    path.write_text("".join(
        f"<{EX}g{n}> <http://www.w3.org/ns/prov#generatedAtTime> {stamps[n]} .\n"
        f"<{EX}g{n}> {{ <{EX}{'b' if n == 5 else 'a'}> <{EX}p> "
        f'"{amount}"^^<http://www.w3.org/2001/XMLSchema#decimal> . }}\n'
        for n, amount in enumerate(amounts)), encoding="utf-8")
    expected = _in_batches(BIG_THEN_SMALL, list(read_stream(path, S1)))
    taught, learnt = recorded_numbers(monkeypatch)
    session = session_of(BIG_THEN_SMALL)
    blocks = list(stream_columns(path, S1, session.dictionary, session.predicates(), BLOCK))
    assert [len(b) for b in blocks] == [3, 3]
    got = [r for batch in blocks for start in range(0, len(batch), 2)
           for r in session.push_columns(batch.slice(start, start + 2))] + session.flush()
    assert [len(ids) for ids in taught] == [3, 2]  # 3 and 3.0: one term, one id
    assert not {session.dictionary.decode_text(i) for i in learnt} & {
        session.dictionary.decode_text(i) for ids in taught for i in ids.tolist()}
    assert got == expected
    assert [r.binding["z"].value for r in got] == ["5", "5", "9.25", "3"]


def test_kleene_runs_carry_the_numbers_their_filter_reads():
    """Runs waiting in ``SEQ(A , B+)``'s ``B+`` state carry ?y's numbers (read once, as
    they enter: 100 at 1 is mantissa 100, no digits), and its FILTER reads them: with
    the carried 100 replaced by 1, the run takes no B at 3 (5 * 10 > 1), though its ?y
    is still 100's id; untouched, it takes it. (:b's element at 2 is another
    partition's: :a's next instant is 3.)"""
    first = [element(0, 1, ("a", "p", 100)), element(1, 2, ("b", "p", 1))]
    then = element(2, 3, ("a", "p", 5))
    answers = []
    for replaced in (False, True):
        session = session_of(BIG_THEN_SMALL)
        engine = session.queries[0]
        assert isinstance(engine, PartitionedSequence)
        session.push_columns(ColumnBatch.from_elements(first, session.dictionary))
        runs, y = engine.runs[1], engine.host.physical.slots.index("y")
        assert runs is not None
        numbers = carried(runs, y)
        assert numbers is not None
        assert (numbers.mantissa.tolist(), numbers.digits.tolist()) == ([100], [0])
        if replaced:
            runs.columns[carried_slot(y)][:] = 1 * 32  # mantissa 1, no digits
        answers.append(session.push_columns(ColumnBatch.from_elements([then],
                                                                      session.dictionary))
                       + session.flush())
    assert [r.binding["z"].value for r in answers[0]] == ["5"]
    assert answers[1] == []


NEXT_THEN_KLEENE = f"""PREFIX : <{EX}>
SELECT ?x ?y ?z ?w WITHIN 10 FROM STREAM S1 :s1
WHERE {{ SEQ(A ; B+ , C)
  DEFINE GPM A ON S1 {{ ?x :p ?y }}
  DEFINE GPM B ON S1 {{ ?x :b ?z }}
  DEFINE GPM C ON S1 {{ ?x :c ?w }} }}"""


def test_skip_then_kleene_then_strict_by_hand():
    """W5's shape ``A ; B+ , C`` (one partition). A at 1 (:a 1); 2 holds only a C, which
    ``;`` skips; B at 3 (5) is the first iteration, C must follow at 4 but 4 holds the
    second iteration (6) instead, which ends that run; C at 5 (7) follows the second:
    one match over [1, 5], one row per iteration (z 5, then 6); the run waiting for a
    third iteration finds none at 5 and ends."""
    elements = [
        element(0, 1, ("a", "p", 1)),
        element(1, 2, ("a", "c", 9)),
        element(2, 3, ("a", "b", 5)),
        element(3, 4, ("a", "b", 6)),
        element(4, 5, ("a", "c", 7)),
    ]
    got = _one_by_one(NEXT_THEN_KLEENE, elements)
    a = f"<{EX}a>"
    lines = sorted((r.t, r.interval, r.match, sorted((n, str(v)) for n, v in r.binding))
                   for r in got)
    assert lines == [(5, (1, 5), "m1", [("w", integer(7)), ("x", a), ("y", integer(1)),
                                       ("z", integer(z))]) for z in (5, 6)]
    assert got == row_engines(NEXT_THEN_KLEENE, elements)
    reference = evaluate(parse_query(NEXT_THEN_KLEENE), {S1: elements}, background(), name="q")
    assert canonical(reference) == canonical(got)


ALIKE = f"""PREFIX : <{EX}>
SELECT * FROM STREAM S1 :s1 FROM STREAM S2 :s2
WHERE {{ SEQ(K , A+)
  DEFINE GPM K ON S1 {{ ?x ?e ?n . GRAPH :g {{ ?n :r ?o }} }}
  DEFINE GPM A ON S1 {{ ?x :p ?y }} }}"""


def test_kleene_rows_alike_come_out_together_as_the_row_engines():
    """No PARTITION BY, so the streamset's instants 0-3 (the four elements at 2 one of
    them; S2's empty one at 0 adds none). :g holds :a :r :a and :b :r :c, so K takes
    :a :p :a (?n :a, ?o :a) at 0-3 and :a :p :b (?n :b, ?o :c) at 2; A takes ?y :a at
    each instant and :b at 2 too. The row engine numbers one instant's matches by start,
    mapping, then iterations (:a before :b), and lists its rows as a bag: each distinct
    row where it first occurs, its repeats right after it. So the match from 0 whose
    iterations are :a, :b, :a at 1-3 (m7) lists :a, :a, :b, while m9's :b, :a (from 1)
    keep their order; all of it the same in one batch, cut anywhere or pushed an
    instant at a time, and the reference's matches."""
    elements = [element(0, 0, ("a", "p", "a")), StreamElement(S2, "_:g0", 0, 0, ()),
                element(1, 1, ("a", "p", "a")), element(2, 2), element(3, 2),
                element(4, 2, ("a", "p", "b")), element(5, 2, ("a", "p", "a")),
                element(6, 3, ("a", "p", "a"))]
    expected = [  # t, start, match, ?n, ?y
        (1, 0, 1, "a", "a"),
        (2, 0, 2, "a", "a"), (2, 0, 2, "a", "a"),
        (2, 0, 3, "a", "a"), (2, 0, 3, "a", "b"),
        (2, 1, 4, "a", "a"),
        (2, 1, 5, "a", "b"),
        (3, 0, 6, "a", "a"), (3, 0, 6, "a", "a"), (3, 0, 6, "a", "a"),
        (3, 0, 7, "a", "a"), (3, 0, 7, "a", "a"), (3, 0, 7, "a", "b"),
        (3, 1, 8, "a", "a"), (3, 1, 8, "a", "a"),
        (3, 1, 9, "a", "b"), (3, 1, 9, "a", "a"),
        (3, 2, 10, "a", "a"),
        (3, 2, 11, "b", "a"),
    ]
    by_rows = row_engines(ALIKE, elements)
    pushed = session_of(ALIKE)
    assert isinstance(pushed.queries[0], PartitionedSequence)
    for got in (by_rows, _one_by_one(ALIKE, elements), _in_batches(ALIKE, elements),
                pushed_in_cuts(session_of(ALIKE), elements, [3, 5, 6]),
                [r for e in elements for r in pushed.push(e)] + pushed.flush()):
        assert [(r.t, r.interval[0], r.match, r.binding["n"].value[len(EX):],
                 r.binding["y"].value[len(EX):]) for r in got] == [
            (t, start, f"m{k}", n, y) for t, start, k, n, y in expected]
        assert [r.interval[1] for r in got] == [r.t for r in got]
        assert {(r.binding["x"], r.binding["e"], r.binding["n"].value, r.binding["o"].value)
                for r in got} == {(ox.NamedNode(f"{EX}a"), ox.NamedNode(f"{EX}p"), f"{EX}{n}",
                                   f"{EX}{o}") for n, o in (("a", "a"), ("b", "c"))}
        assert got == by_rows
    reference = evaluate(parse_query(ALIKE), {S1: elements[:1] + elements[2:],
                                              S2: elements[1:2]}, background(), name="q")
    assert canonical(reference) == canonical(by_rows)


def test_kleene_outside_the_covered_shape_stays_on_the_row_engine():
    """``A+ , B``, two ``+``, TUMBLING with ``+`` and a ``B+`` sharing a variable only
    with a later element (an iteration would bind it for that one) run on rows."""
    for expression in ("A+ , B", "A , B+ , C+", "A , B+", "C , A+ , B"):
        within = " WITHIN 5 TUMBLING" if expression == "A , B+" else ""
        text = BIG_THEN_SMALL.replace("SEQ(A , B+)", f"SEQ({expression})").replace(
            " WITHIN 10", within).replace("DEFINE GPM A", "DEFINE GPM C ON S1 { ?x :q ?w }\n"
                                                        "  DEFINE GPM A")
        if expression == "C , A+ , B":  # B binds A's ?y: not A's own, not bound before it
            text = text.replace("?x :p ?z FILTER", "?x :p ?y FILTER")
        assert isinstance(session_of(text).queries[0], PartitionedQuery), text
