"""PARTITION BY SPAseq sequences on the columnar core (``columnar.partitions`` and
``columnar.sequences``) against the reference evaluator: drawn queries of the covered
subset over planted streams, through the push path and through batches cut anywhere;
hand-derived cases for a batch cut between two contiguous events and a run spanning
batches; and what stays on the row engine."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pyoxigraph as ox
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.engine.columnar import ColumnBatch
from sepia.engine.columnar.comparisons import vector_filtered
from sepia.engine.columnar.expressions import Columns
from sepia.engine.columnar.groups import NumericIds
from sepia.engine.columnar.sequences import PartitionedSequence, _PairInputs, _Sides
from sepia.engine.columnar.tables import Table, filtered
from sepia.engine.columnar.terms import TermKinds
from sepia.engine.query.continuous import ContinuousQuery
from sepia.engine.query.partition import PartitionedQuery
from sepia.engine.r2r.numbers import Terms
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
from sepia.runtime.local import Session
from sepia.semantics import evaluate

from ..generators import (
    EX,
    OBJECTS,
    PREDICATES,
    S1,
    S2,
    SILENT,
    SUBJECTS,
    narrow_triples,
    streams,
)
from ..support import (
    assert_columnar_agrees,
    background,
    cut_anywhere,
    element,
    filter_plan,
    integer,
    row_engines,
    session_of,
)

XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_INTEGER, XSD_DECIMAL, XSD_DOUBLE = (ox.NamedNode(XSD + t) for t in ("integer", "decimal",
                                                                        "double"))
CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

GPMS = {
    "A": "DEFINE GPM A ON S1 { ?x :p ?y }",
    "B": "DEFINE GPM B ON S2 { ?x ?k ?z }",
    "C": "DEFINE GPM C ON S1 { ?x :q ?w FILTER(?w != ?y) }",  # ?y from another GPM
    "D": "DEFINE GPM D ON S1 { ?x :p ?v . ?x :q ?u }",
    "E": "DEFINE GPM E ON S1 { ?x :p ?n FILTER(!isBlank(?n)) }",
    "F": "DEFINE GPM F ON S2 { ?x :q ?m FILTER(?m > ?y || ?m = :a) }",
}
"""GPMs of the covered subset: BGPs over the event graph, FILTERs on their own variables
and on other GPMs' (deferred to the automaton), all binding ?x."""


def elements(draw, names: list[str]) -> list[str]:
    """The GPMs as a sequence's elements, two of them sometimes one conjunction
    ``(X & Y)`` (two elements at least)."""
    pool, parts = list(names), []
    while pool:
        name = pool.pop(0)
        if len(pool) >= 2 - bool(parts) and draw(st.integers(0, 2)) == 0:
            name = f"({name} & {pool.pop(0)})"
        parts.append(name)
    return parts


@st.composite
def covered_sequences(draw) -> str:
    """A SPAseq query the columnar core covers: 2-4 GPMs as 2-3 elements (a GPM or a
    conjunction & of two) joined by , or ;, PARTITION BY ?x or none, WITHIN sliding,
    tumbling or none."""
    names = draw(st.lists(st.sampled_from(sorted(GPMS)), min_size=2, max_size=4, unique=True))
    first, *rest = elements(draw, names)
    expression = first
    for part in rest[:2]:
        expression += f" {draw(st.sampled_from([',', ';']))} {part}"
    width = draw(st.integers(1, 15))
    within = draw(st.sampled_from(["", f"WITHIN {width}", f"WITHIN {width} TUMBLING"]))
    head = draw(st.sampled_from(["SELECT *", "SELECT ?x ?y", "SELECT ?x"]))
    partition = draw(st.sampled_from(["PARTITION BY ?x\n", ""]))
    used = [n for n in names if n in expression]
    defines = "\n".join(GPMS[n] for n in used)
    return (
        f"PREFIX : <{EX}>\n{head} {within}\nFROM STREAM S1 :s1\nFROM STREAM S2 :s2\n"
        f"{partition}WHERE {{ SEQ({expression})\n{defines} }}"
    )


NOISE = st.one_of(SILENT, SILENT, streams(content=narrow_triples))
"""Planted streams, without noise two times in three (noise in a partition breaks its
strict contiguity)."""

PATTERNS = {
    name: (S1 if stream == "S1" else S2,
           [tuple(p.split()) for p in body.split(" FILTER")[0].split(" . ")])
    for name, stream, body in (re.fullmatch(r"DEFINE GPM (\w) ON (S\d) \{ (.*) \}", text)
                               .groups() for text in GPMS.values())  # type: ignore[union-attr]
}
"""Each GPM's stream and triple patterns, read from its text."""


def _term(name: str, bound: dict, draw) -> ox.NamedNode | ox.Literal:
    """A pattern's term: a variable bound once per match (subjects, predicates or any
    object), a constant as written."""
    if not name.startswith("?"):
        return ox.NamedNode(EX + name[1:])
    if name not in bound:
        terms = SUBJECTS[:2] if name == "?x" else PREDICATES if name == "?k" else OBJECTS
        bound[name] = draw(st.sampled_from(terms))
    return bound[name]


@st.composite
def planted_matches(draw, text: str) -> dict[str, list[StreamElement]]:
    """Streams holding one or two matches of the query's sequence (each element's GPMs'
    triples, a conjunction's at one instant, a GPM's in one element, the elements one or
    two apart), their variables drawn (FILTERs hold or not), among ``NOISE``. The
    generators' ``planted`` puts each triple in an element of its own and ties instants
    one time in four: a conjunction or a query without PARTITION BY (where every element
    of the streamset counts for strict contiguity) rarely answered."""
    data = {iri: list(elements) for iri, elements in draw(NOISE).items()}
    steps = re.split(r"\s*[,;]\s*", re.search(r"SEQ\((.*)\)", text).group(1))  # type: ignore[union-attr]
    for _ in range(draw(st.integers(1, 2))):
        bound: dict = {}
        t = draw(st.integers(1, 4))
        for step in steps:
            for name in re.findall(r"[A-Z]", step):
                stream, patterns = PATTERNS[name]
                triples = tuple(ox.Triple(*(_term(n, bound, draw) for n in p)) for p in patterns)
                if not any(isinstance(x.subject, ox.Literal) for x in triples):
                    data.setdefault(stream, []).append(StreamElement(stream, "", t, t, triples))
            t += draw(st.integers(1, 2))
    return {iri: [StreamElement(iri, f"_:g{n}", e.start, e.end, e.triples, e.kind)
                  for n, e in enumerate(sorted(elements, key=lambda e: e.end))]
            for iri, elements in data.items()}


cases = covered_sequences().flatmap(lambda text: st.tuples(st.just(text), planted_matches(text)))


@settings(max_examples=200, deadline=None, suppress_health_check=CHECKS)
@given(cases)
def test_partitioned_sequences_agree_with_reference(case):
    """The push path (one instant at a time) gives the reference's answer, in time order."""
    text, data = case
    assert_columnar_agrees(text, data, PartitionedSequence)


@settings(max_examples=200, deadline=None, suppress_health_check=CHECKS)
@given(cases, st.lists(st.integers(0, 30), max_size=4))
def test_batches_cut_anywhere_agree_with_reference(case, cuts):
    """``push_columns`` with the input cut at arbitrary elements (between two contiguous
    events of a partition, inside a run) gives the reference's answer, in the order the
    row engine gives it."""
    text, data = case
    got, rows = cut_anywhere(text, data, cuts)
    assert got == rows, text


def _pushed_one_by_one(text: str, elements: list[StreamElement]) -> list[tuple]:
    """Each element a batch of its own: (t, interval, binding by name) of each result."""
    session = session_of(text)
    assert isinstance(session.queries[0], PartitionedSequence)
    got = []
    for e in elements:
        got += session.push_columns(ColumnBatch.from_elements([e], session.dictionary))
    got += session.flush()
    return [(r.t, r.interval, {n: str(v) for n, v in r.binding}) for r in got]


STRICT = f"""PREFIX : <{EX}>
SELECT ?x ?y ?z FROM STREAM S1 :s1 PARTITION BY ?x
WHERE {{ SEQ(A , B) DEFINE GPM A ON S1 {{ ?x :p ?y }} DEFINE GPM B ON S1 {{ ?x :q ?z }} }}"""


def test_strict_contiguity_across_a_batch_cut():
    """Partition :a's events are at 1, 3, 4, 5, 6 (:b's at 2 does not count for :a): A
    at 1 then B at 3 are contiguous in the partition, though in two batches; A at 4 is
    followed by an A at 5, not a B, so only A at 5 then B at 6 matches again."""
    elements = [
        element(0, 1, ("a", "p", 1)),
        element(1, 2, ("b", "q", 5)),
        element(2, 3, ("a", "q", 2)),
        element(3, 4, ("a", "p", 3)),
        element(4, 5, ("a", "p", 4)),
        element(5, 6, ("a", "q", 6)),
    ]
    expected = [
        (3, (1, 3), {"x": f"<{EX}a>", "y": integer(1), "z": integer(2)}),
        (6, (5, 6), {"x": f"<{EX}a>", "y": integer(4), "z": integer(6)}),
    ]
    assert _pushed_one_by_one(STRICT, elements) == expected
    reference = evaluate(parse_query(STRICT), {S1: elements}, background(), name="q")
    assert sorted((r.t, r.interval) for r in reference) == [(3, (1, 3)), (6, (5, 6))]


V_SHAPE = f"""PREFIX : <{EX}>
SELECT ?x ?y ?z ?w FROM STREAM S1 :s1 PARTITION BY ?x
WHERE {{ SEQ(A ; B ; C)
  DEFINE GPM A ON S1 {{ ?x :p ?y }}
  DEFINE GPM B ON S1 {{ ?x :p ?z FILTER(?z > ?y) }}
  DEFINE GPM C ON S1 {{ ?x :p ?w FILTER(?w < ?z) }} }}"""
PRICES = [5, 3, 7, 9, 6]


def test_skip_till_next_runs_span_batches():
    """Prices 5, 3, 7, 9, 6 at 1-5, each in a batch of its own. A at 1 (5) skips 3, takes
    7 at 3, then skips 9 and takes 6 at 5; A at 2 (3) takes 7 then 6; A at 3 (7) takes 9
    at 4 then 6; A at 4 and 5 find no higher price after them: three matches at 5."""
    elements = [element(n, n + 1, ("a", "p", price)) for n, price in enumerate(PRICES)]
    a = f"<{EX}a>"
    expected = [
        (5, (start, 5), {"x": a, "y": integer(y), "z": integer(z), "w": integer(6)})
        for start, y, z in ((1, 5, 7), (2, 3, 7), (3, 7, 9))
    ]
    got = _pushed_one_by_one(V_SHAPE, elements)
    assert sorted(got, key=repr) == sorted(expected, key=repr)
    reference = evaluate(parse_query(V_SHAPE), {S1: elements}, background(), name="q")
    assert sorted(r.interval for r in reference) == [(1, 5), (2, 5), (3, 5)]


def test_an_event_only_a_filtered_leaf_matches_joins_no_partition():
    """B's FILTER reads A's ?y: routing reads B with its FILTER (?y unbound: false), as
    the reference does, so the :q events join no partition and B never takes one."""
    text = V_SHAPE.replace("?x :p ?z", "?x :q ?z")
    elements = [element(n, n + 1, ("a", "q" if n in (1, 2) else "p", price))
                for n, price in enumerate(PRICES)]
    assert _pushed_one_by_one(text, elements) == []
    assert evaluate(parse_query(text), {S1: elements}, background(), name="q") == []
    routed = [*elements[:1], element(1, 2, ("a", "q", 3), ("a", "p", 0)), *elements[2:]]
    assert len(_pushed_one_by_one(text, routed)) == len(
        evaluate(parse_query(text), {S1: routed}, background(), name="q"))


def test_what_is_not_covered_stays_on_the_row_engine(monkeypatch):
    kleene = STRICT.replace("SEQ(A , B)", "SEQ(A+ ; B)")
    any_ = STRICT.replace("SEQ(A , B)", "SEQ(A : B)")
    optional = STRICT.replace("SEQ(A , B)", "SEQ(A , B?)")
    ordered = STRICT + " ORDER BY ?z"
    either = STRICT.replace("SEQ(A , B)", "SEQ(A , (A | B))")
    for text in (kleene, any_, optional, ordered, either):
        assert isinstance(session_of(text).queries[0], PartitionedQuery), text
    unpartitioned = either.replace("PARTITION BY ?x", "")
    assert type(session_of(unpartitioned).queries[0]) is ContinuousQuery
    both = STRICT.replace("SEQ(A , B)", "SEQ(A , (A & B))")
    for text in (both, both.replace("PARTITION BY ?x", "")):
        assert isinstance(session_of(text).queries[0], PartitionedSequence), text
    background_graph = STRICT.replace("{ ?x :q ?z }", "{ ?x :q ?z . GRAPH :g { ?x :r ?z } }")
    assert isinstance(session_of(background_graph).queries[0], PartitionedSequence)
    monkeypatch.setenv("SEPIA_ENGINE_PATH", "rows")
    with_rows = Session(background())
    with_rows.register(parse_query(STRICT), "q")
    assert isinstance(with_rows.queries[0], PartitionedQuery)


UNPARTITIONED = f"""PREFIX : <{EX}>
SELECT ?y ?z ?w FROM STREAM S1 :s1 FROM STREAM S2 :s2
WHERE {{ SEQ(A , (B & C))
  DEFINE GPM A ON S1 {{ ?x :p ?y }}
  DEFINE GPM B ON S1 {{ ?x :q ?z FILTER(?z > ?y) }}
  DEFINE GPM C ON S2 {{ ?u :q ?w }} }}"""


def test_without_partition_strict_contiguity_is_the_streamsets_next_instant():
    """No PARTITION BY: ``,`` takes the streamset's next instant, whatever stream or
    subject its elements have. A(:a, 1) at 1 meets B(:a, 5) & C at 2 (B on S1, C on S2:
    one instant); A(:b, 7) at 3 is followed at 4 by an element of S2 without triples (an
    instant all the same), so B & C at 5 is too late; A(:c, 2) at 5 (with B & C there)
    meets B(:c, 3) & C(6) at 6 (B(:a, 1) there binds another ?x)."""
    elements = [
        element(0, 1, ("a", "p", 1)),
        element(1, 2, ("a", "q", 5)), element(2, 2, ("d", "q", 9), stream=S2),
        element(3, 3, ("b", "p", 7)),
        element(4, 4, stream=S2),
        element(5, 5, ("b", "q", 8), ("c", "p", 2)),
        element(6, 5, ("d", "q", 4), stream=S2),
        element(7, 6, ("c", "q", 3), ("a", "q", 1)),
        element(8, 6, ("d", "q", 6), stream=S2),
    ]
    expected = [
        (2, (1, 2), {"y": integer(1), "z": integer(5), "w": integer(9)}),
        (6, (5, 6), {"y": integer(2), "z": integer(3), "w": integer(6)}),
    ]
    assert _pushed_one_by_one(UNPARTITIONED, elements) == expected
    data = {iri: [e for e in elements if e.stream == iri] for iri in (S1, S2)}
    reference = evaluate(parse_query(UNPARTITIONED), data, background(), name="q")
    assert sorted((r.t, r.interval) for r in reference) == [(2, (1, 2)), (6, (5, 6))]


SKIPPING = f"""PREFIX : <{EX}>
SELECT ?y ?z FROM STREAM S1 :s1
WHERE {{ SEQ(A ; B)
  DEFINE GPM A ON S1 {{ ?x :p ?y }}
  DEFINE GPM B ON S1 {{ ?x :q ?z FILTER(?z > ?y) }} }}"""


def test_skip_till_next_takes_the_earliest_instant_however_far():
    """No PARTITION BY. A(5) at 1 skips the B values 1-5 at 2-10 (A(8) at 6 among them)
    and takes B(7) at 11, not B(9) at 12 (its first instant with an option only); A(8)
    at 6 skips 7 at 11 and takes 9 at 12. The instants a run scans before its match
    (ten, past a few of them at a time) give the same matches in one batch as one
    element at a time."""
    values = [1, 2, 3, 4, 5, 1, 2, 3, 4]
    elements = [element(0, 1, ("a", "p", 5))]
    elements += [element(n, n + 1, ("a", "q", z)) for n, z in enumerate(values, start=1)]
    elements[5] = element(5, 6, ("a", "q", 1), ("a", "p", 8))
    elements += [element(10, 11, ("a", "q", 7)), element(11, 12, ("a", "q", 9))]
    expected = [(11, (1, 11), {"y": integer(5), "z": integer(7)}),
                (12, (6, 12), {"y": integer(8), "z": integer(9)})]
    assert _pushed_one_by_one(SKIPPING, elements) == expected
    session = session_of(SKIPPING)
    whole = session.push_columns(ColumnBatch.from_elements(elements, session.dictionary))
    assert [(r.t, r.interval) for r in whole + session.flush()] == [(11, (1, 11)), (12, (6, 12))]
    reference = evaluate(parse_query(SKIPPING), {S1: elements}, background(), name="q")
    assert sorted((r.t, r.interval) for r in reference) == [(11, (1, 11)), (12, (6, 12))]


PROJECTED = f"""PREFIX : <{EX}>
SELECT ?y FROM STREAM S1 :s1
WHERE {{ SEQ(A , B)
  DEFINE GPM A ON S1 {{ ?x :p ?y }}
  DEFINE GPM B ON S1 {{ ?x :q ?w }} }}"""


def test_matches_alike_in_the_select_come_out_together_as_the_row_engines():
    """No PARTITION BY: subjects :s10 to :s<9 + n> with ?y 1, 2, 1, 2 ... at 1 and a B
    each at 2 make n matches over [1, 2], numbered by their mappings' text (?x's), whose
    SELECT ?y rows the row engine lists as a bag: each distinct row where it first
    occurs, its repeats right after it, so all the 1s, then the 2s. Three matches (a
    few rows) and twenty (the columns' path) alike."""
    for n in (3, 20):
        subjects = [f"s{10 + k}" for k in range(n)]
        elements = [element(0, 1, *((x, "p", 1 + k % 2) for k, x in enumerate(subjects))),
                    element(1, 2, *((x, "q", 5) for x in subjects))]
        got = _pushed_one_by_one(PROJECTED, elements)
        ones = (n + 1) // 2
        assert got == [(2, (1, 2), {"y": integer(y)})
                       for y in [1] * ones + [2] * (n - ones)]
        by_rows = row_engines(PROJECTED, elements)
        assert got == [(r.t, r.interval, {k: str(v) for k, v in r.binding}) for r in by_rows]
        reference = evaluate(parse_query(PROJECTED), {S1: elements}, background(), name="q")
        assert Counter(reference) == Counter(by_rows)


LITERALS = [
    ox.Literal("3"), ox.Literal("-2", datatype=XSD_INTEGER), ox.Literal("7", datatype=XSD_INTEGER),
    ox.Literal("7.0", datatype=XSD_DECIMAL), ox.Literal("6.99", datatype=XSD_DECIMAL),
    ox.Literal("123456789012.5", datatype=XSD_DECIMAL), ox.Literal("7.0E0", datatype=XSD_DOUBLE),
    ox.Literal("x", datatype=XSD_INTEGER), ox.Literal("02", datatype=XSD_INTEGER),
    ox.NamedNode(EX + "a"),
]
"""Integers and decimals (the vector path), a double, a string, an ill-typed and a
non-canonical literal and an IRI (the evaluator's), equal values of different types."""


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(*[st.sampled_from(range(len(LITERALS)))] * 3), min_size=1,
                max_size=12),
       st.sampled_from(["?a > ?b", "?a = ?b", "?b <= ?a && ?a != ?c", "?a < ?b || ?c > ?a",
                        "?a >= ?d", "?a + 1 > ?b"]))
def test_vector_comparisons_are_the_evaluators(picked, condition):
    """A FILTER decided on columns keeps the rows the evaluator keeps (?d: unbound)."""
    codec, select, slots = filter_plan(condition)
    ids = [codec.encode(t) for t in LITERALS]
    columns = {slots.index(n): np.array([ids[row[k]] for row in picked], dtype=np.int64)
               for k, n in enumerate("abc")}
    table = Table(columns, len(picked))
    mine = vector_filtered(table, select.condition, slots, NumericIds(Terms(codec)))
    theirs = filtered(table, select.condition)
    assert mine.rows(len(slots.names)) == theirs.rows(len(slots.names)), condition


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(*[st.sampled_from(range(len(LITERALS)))] * 2), min_size=1,
                max_size=6),
       st.lists(st.tuples(*[st.sampled_from(range(len(LITERALS)))] * 2), min_size=1,
                max_size=6),
       st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=20),
       st.sampled_from(["?a > ?c", "?c < ?b && ?c > ?a", "?b <= ?a || ?c != ?b",
                        "?c * 10 <= ?a", "?a >= ?d"]),
       st.booleans(), st.booleans())
def test_pair_filters_are_the_evaluators(run_rows, found_rows, pairs, condition, keep, once):
    """A FILTER over (run, candidate) pairs, each slot's numbers read once per side and
    gathered, or (asked ``once``) per pair where the pairs are fewer than a side's rows,
    or from the candidates' numbers ``kept`` by an earlier pairing (?b bound on both
    sides: the runs' is read, ?d unbound), keeps the pairs the evaluator keeps on the
    pairs' gathered rows."""
    codec, select, slots = filter_plan(condition)
    ids = [codec.encode(t) for t in LITERALS]
    a, b, c = (slots.index(n) for n in "abc")
    runs = Table({a: np.array([ids[r[0]] for r in run_rows]),
                  b: np.array([ids[r[1]] for r in run_rows])}, len(run_rows))
    found = Table({b: np.array([ids[r[0]] for r in found_rows]),
                   c: np.array([ids[r[1]] for r in found_rows])}, len(found_rows))
    run = np.array([p[0] % runs.size for p in pairs], dtype=np.int64)
    option = np.array([p[1] % found.size for p in pairs], dtype=np.int64)
    table = Table({a: runs.columns[a][run], b: runs.columns[b][run],
                   c: found.columns[c][option]}, len(pairs))
    kept: dict | None = None
    if keep:  # the candidates' numbers of an earlier pairing of the same ones
        kept = {}
        earlier = _Sides(runs, found, kept)
        earlier.numbers(c, NumericIds(Terms(codec)), found.size)
    sides = _Sides(runs, found, kept, once)

    def inputs(pairs: Table, numbers: NumericIds, kinds: TermKinds) -> Columns:
        return _PairInputs(pairs, numbers, kinds, sides, run, option)

    mine = vector_filtered(table, select.condition, slots, NumericIds(Terms(codec)), inputs)
    theirs = filtered(table, select.condition)
    assert mine.rows(len(slots.names)) == theirs.rows(len(slots.names)), condition


ALIKE = f"""PREFIX : <{EX}>
SELECT ?y ?z WITHIN 10 FROM STREAM S1 :s1 PARTITION BY ?x
WHERE {{ SEQ(A ; B)
  DEFINE GPM A ON S1 {{ ?x :p ?y }}
  DEFINE GPM B ON S1 {{ ?x :p ?z FILTER(?z > ?y) }} }}"""


def test_runs_alike_take_their_instant_each_within_their_own_start():
    """Prices 5, 5, 1, 9 at 1, 5, 8, 13. The runs from 1 and 5 (y = 5) wait alike past
    8 (same partition and value, both before the batch's instants): 9 at 13 passes both
    FILTERs but is 12 after 1, past WITHIN 10, and 8 after 5: only the run from 5
    matches; the run from 8 (y = 1) takes 9 too. An element a batch, or two batches
    cut after 5, as the reference."""
    elements = [element(n, t, ("a", "p", price))
                for n, (t, price) in enumerate([(1, 5), (5, 5), (8, 1), (13, 9)])]
    expected = [(13, (5, 13), {"y": integer(5), "z": integer(9)}),
                (13, (8, 13), {"y": integer(1), "z": integer(9)})]
    assert sorted(_pushed_one_by_one(ALIKE, elements), key=repr) == expected
    session = session_of(ALIKE)
    got = [r for part in (elements[:2], elements[2:])
           for r in session.push_columns(ColumnBatch.from_elements(part, session.dictionary))]
    assert sorted((r.t, r.interval) for r in got + session.flush()) == [(13, (5, 13)),
                                                                         (13, (8, 13))]
    reference = evaluate(parse_query(ALIKE), {S1: elements}, background(), name="q")
    assert sorted((r.t, r.interval) for r in reference) == [(13, (5, 13)), (13, (8, 13))]

