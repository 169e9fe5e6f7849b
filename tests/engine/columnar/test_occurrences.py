"""EP-SPARQL occurrences fed by batches of columns (``columnar.occurrences``): drawn
chains of range-indexed SEQs (W8's drop-then-rise) and patterns under random RDFS
schemas, pushed as columns cut anywhere, against the reference evaluator and the row
engine's very lines; a hand-derived drop-then-rise under RDFS; a restored session; and
what stays on the push path."""

from __future__ import annotations

import json
from dataclasses import replace

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sepia.algebra.query import Unsupported
from sepia.engine.columnar import ColumnBatch
from sepia.engine.columnar.occurrences import PushedOccurrences
from sepia.engine.hosts.engine_path import explain
from sepia.engine.query.continuous import ContinuousQuery
from sepia.rdf.stream import StreamElement, StreamSet

from ..cep.test_epsparql_chains import W8, chains
from ..cep.test_epsparql_ranges import EX, query
from ..cep.test_epsparql_rdfs import STREAM, drop, element, schema_store, typed_epsparql
from ..query.test_rdfs_streams import background, typed_streams
from ..support import canonical, cut_anywhere, pushed_in_cuts, session_of

RDFS = "http://www.w3.org/2000/01/rdf-schema#"
CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
CUTS = st.lists(st.integers(0, 12), max_size=4)


def _points(data: dict[str, list[StreamElement]]) -> dict[str, list[StreamElement]]:
    """Each element stamped at its end only: a batch of columns holds one time an element
    (an interval-stamped file is read as rows)."""
    return {s: [replace(e, start=e.end) for e in es] for s, es in data.items()}


def _assert_columns_agree(text: str, data: dict, cuts: list[int], store: ox.Store,
                          rdfs: bool = False) -> None:
    """Columns cut at ``cuts`` give the reference's matches and the push path's lines."""
    session = session_of(text, "columnar", store, rdfs)
    assert isinstance(session.queries[0], PushedOccurrences), text
    shown = explain(session.queries[0].host.physical, session.dictionary)
    assert "path: columnar: fed batches of id columns" in shown, shown
    got, rows = cut_anywhere(text, data, cuts, canonical, store, rdfs)
    assert got == rows, text


@settings(max_examples=150, deadline=None, suppress_health_check=CHECKS)
@given(chains(), CUTS)
def test_chains_in_batches_cut_anywhere_agree(case, cuts):
    text, data = case
    _assert_columns_agree(text, _points(data), cuts, ox.Store())


@settings(max_examples=100, deadline=None, suppress_health_check=CHECKS)
@given(typed_epsparql(), typed_streams(), background(), CUTS)
def test_patterns_under_random_schemas_in_batches_agree(text, data, store, cuts):
    """Each element is closed under the schema as the push path closes it."""
    _assert_columns_agree(text, data, cuts, store, rdfs=True)


def test_a_drop_of_a_typed_company_under_rdfs():
    """x is typed Leaf (so Top, through Mid); y is typed Other: only x's 10 at 1 drops to
    its 5 at 3, whichever batch each element comes in (worked out by hand)."""
    text = drop("?c a :Top")
    merged = list(StreamSet(STREAM).merged())
    for cuts in ([], [1], [2, 3]):
        session = session_of(text, "columnar", schema_store(), True)
        got = pushed_in_cuts(session, merged, cuts)
        assert [(r.t, r.interval, str(r.binding["p2"])) for r in got] == [(3, (1, 3), '"5"')]


def test_a_session_fed_columns_resumes_from_a_snapshot():
    """Snapshot rows after a batch of columns (the row engine's occurrences) restore a
    session that goes on as one that ran through."""
    text = query(W8)
    ten, six, eleven = (ox.Literal(v, datatype=ox.NamedNode(
        "http://www.w3.org/2001/XMLSchema#integer")) for v in ("10", "6", "11"))
    p, a = ox.NamedNode("http://example.org/p"), ox.NamedNode("http://example.org/a")
    elements = [StreamElement("http://example.org/s1", f"_:g{t}", t, t, (ox.Triple(a, p, v),))
                for t, v in ((0, ten), (1, six), (3, eleven))]
    first = session_of(text, "columnar", ox.Store())
    got = first.push_columns(ColumnBatch.from_elements(elements[:2], first.dictionary))
    got += first.watermark(1)
    state = json.loads(json.dumps(first.snapshot()))
    second = session_of(text, "columnar", ox.Store())
    second.restore(state)
    got += second.push_columns(ColumnBatch.from_elements(elements[2:], second.dictionary))
    got += second.flush()
    assert [(r.t, r.interval) for r in got] == [(3, (0, 3))]


def test_what_is_not_covered_stays_on_the_push_path():
    """A consuming policy and ISTREAM are the row engine's, and explain says why."""
    for text, reason in (
        (query(W8, "EVENT POLICY CHRONOLOGICAL"), "consuming"),
        (query(W8).replace("SELECT", "REGISTER ISTREAM :out AS SELECT", 1), "RSTREAM"),
    ):
        session = session_of(text, "columnar", ox.Store())
        assert isinstance(session.queries[0], ContinuousQuery), text
        shown = explain(session.queries[0].physical, session.dictionary)
        assert "path: rows" in shown and reason in shown, shown


def test_a_schema_triple_in_a_batch_is_refused_naming_its_element():
    """Under RDFS a stream element may not change the schema: the error names the element
    by its time where the reader left its graph name unencoded (the push path names it by
    its graph)."""
    session = session_of(drop("?c a :Top"), "columnar", schema_store(), True)
    schema = ox.Triple(ox.NamedNode(EX + "Leaf"), ox.NamedNode(RDFS + "subClassOf"),
                       ox.NamedNode(EX + "Top2"))
    bad = [element(1, "x price 10"), replace(element(4), triples=(schema,))]
    batch = ColumnBatch.from_elements(bad, session.dictionary)
    batch = replace(batch, graph=batch.graph * 0)  # graph names the query cannot read
    with pytest.raises(Unsupported, match="schema triples inside stream element stamped 4 "):
        session.push_columns(batch)
        session.flush()  # the batch's last instant waits for what comes next
