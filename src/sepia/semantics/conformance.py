"""Run the W3C SPARQL 1.1 query evaluation tests (``mf:QueryEvaluationTest``) through an
engine: each test's query is a one-time query over its dataset (no stream).

An engine is a function from (query text, base IRI, dataset store) to Sepia results; the
expected answers come from the test's result file (SPARQL XML / JSON / TSV results, an RDF
graph for CONSTRUCT, or a result set written in RDF with the DAWG ``rs:`` vocabulary).
Answers are compared as bags of solutions (or graphs, or a boolean); blank node labels are
not compared (every blank node reads the same), which is weaker than isomorphism, numbers
and booleans are compared in canonical form, and the order
of solutions is not compared.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pyoxigraph as ox

from sepia.rdf.results import Result
from sepia.rdf.terms import term_to_nt
from sepia.rdf.time import INTEGER_TYPES
from sepia.rdf.vocabulary import RDF, XSD

MF = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#"
QT = "http://www.w3.org/2001/sw/DataAccess/tests/test-query#"
RS = "http://www.w3.org/2001/sw/DataAccess/tests/result-set#"

Engine = Callable[[str, str, ox.Store], Sequence[Result]]
Answer = bool | Counter[tuple[tuple[str, str], ...]] | Counter[tuple[str, str, str]]

CANONICAL: dict[str, Callable[[str], str]] = {
    **{t: lambda v: str(int(v)) for t in INTEGER_TYPES},
    XSD + "decimal": lambda v: format(Decimal(v).normalize(), "f"),
    XSD + "double": lambda v: repr(float(v)),
    XSD + "float": lambda v: repr(float(v)),
    XSD + "boolean": lambda v: {"1": "true", "0": "false"}.get(v, v),
}

RESULT_FORMATS = {
    ".srx": ox.QueryResultsFormat.XML,
    ".srj": ox.QueryResultsFormat.JSON,
    ".tsv": ox.QueryResultsFormat.TSV,
}


@dataclass(frozen=True, slots=True)
class EvaluationTest:
    """One mf:QueryEvaluationTest of a manifest."""

    name: str
    query: Path
    data: tuple[Path, ...]
    graph_data: tuple[Path, ...]
    result: Path


@dataclass(frozen=True, slots=True)
class Outcome:
    """Whether a test passed, and why not."""

    test: EvaluationTest
    passed: bool
    reason: str = ""


def _node(graph: ox.Store, subject: object, predicate: str) -> list[object]:
    if not isinstance(subject, ox.NamedNode | ox.BlankNode):
        return []  # a literal has no properties
    return [q.object for q in graph.quads_for_pattern(subject, ox.NamedNode(predicate), None)]


def _list(graph: ox.Store, head: object) -> list[object]:
    items = []
    while head != ox.NamedNode(RDF + "nil"):
        items += _node(graph, head, RDF + "first")
        head = _node(graph, head, RDF + "rest")[0]
    return items


def _path(term: object) -> Path:
    return Path(str(term.value).removeprefix("file://"))  # type: ignore[attr-defined]


def read_manifest(manifest: Path) -> list[EvaluationTest]:
    """The evaluation tests a manifest lists, in its order."""
    graph = ox.Store()
    graph.load(path=manifest, format=ox.RdfFormat.TURTLE, base_iri=manifest.resolve().as_uri())
    (entries,) = [
        q.object for q in graph.quads_for_pattern(None, ox.NamedNode(MF + "entries"), None)
    ]
    tests = []
    for entry in _list(graph, entries):
        kinds = _node(graph, entry, RDF + "type")
        if ox.NamedNode(MF + "QueryEvaluationTest") not in kinds:
            continue
        (action,) = _node(graph, entry, MF + "action")
        (result,) = _node(graph, entry, MF + "result")
        tests.append(
            EvaluationTest(
                str(_node(graph, entry, MF + "name")[0].value),  # type: ignore[attr-defined]
                _path(_node(graph, action, QT + "query")[0]),
                tuple(map(_path, _node(graph, action, QT + "data"))),
                tuple(map(_path, _node(graph, action, QT + "graphData"))),
                _path(result),
            )
        )
    return tests


def _rdf_format(path: Path) -> ox.RdfFormat:
    return ox.RdfFormat.from_extension(path.suffix.lstrip("."))  # type: ignore[return-value]


def dataset(test: EvaluationTest) -> ox.Store:
    """The test's dataset: qt:data in the default graph, qt:graphData as named graphs."""
    store = ox.Store()
    for path in test.data:
        store.load(path=path, format=_rdf_format(path), base_iri=path.as_uri())
    for path in test.graph_data:
        store.load(
            path=path,
            format=_rdf_format(path),
            base_iri=path.as_uri(),
            to_graph=ox.NamedNode(path.as_uri()),
        )
    return store


def _text(term: object) -> str:
    """A term in N-Triples, every blank node written the same (labels are not compared) and
    numbers and booleans in canonical form (a store may canonicalise what it loads)."""
    if isinstance(term, ox.BlankNode):
        return "_:b"
    if isinstance(term, ox.Literal) and term.datatype.value in CANONICAL:
        try:
            value = CANONICAL[term.datatype.value](term.value.strip())
        except (ValueError, ArithmeticError):
            value = term.value
        return term_to_nt(ox.Literal(value, datatype=term.datatype))
    return term_to_nt(term)  # type: ignore[arg-type]


def expected(test: EvaluationTest) -> Answer:
    """The answer the test's result file gives."""
    if test.result.suffix in RESULT_FORMATS:
        results = ox.parse_query_results(
            path=test.result, format=RESULT_FORMATS[test.result.suffix]
        )
        if isinstance(results, ox.QueryBoolean):
            return bool(results)
        names = [v.value for v in results.variables]
        return Counter(
            tuple(sorted((n, _text(s[n])) for n in names if s[n] is not None)) for s in results
        )
    graph = ox.Store()
    graph.load(path=test.result, format=_rdf_format(test.result), base_iri=test.result.as_uri())
    result_sets = [
        q.subject
        for q in graph.quads_for_pattern(
            None, ox.NamedNode(RDF + "type"), ox.NamedNode(RS + "ResultSet")
        )
    ]
    if result_sets:
        return _result_set(graph, result_sets[0])
    triples = graph.quads_for_pattern(None, None, None, None)
    return Counter({(_text(q.subject), _text(q.predicate), _text(q.object)): 1 for q in triples})


def _result_set(graph: ox.Store, result_set: object) -> Answer:
    """A result set written in the rs: vocabulary (rs:boolean, or rs:solution / rs:binding
    with rs:variable and rs:value)."""
    boolean = _node(graph, result_set, RS + "boolean")
    if boolean:
        return str(boolean[0].value) == "true"  # type: ignore[attr-defined]
    return Counter(
        tuple(sorted(_binding(graph, b) for b in _node(graph, solution, RS + "binding")))
        for solution in _node(graph, result_set, RS + "solution")
    )


def _binding(graph: ox.Store, binding: object) -> tuple[str, str]:
    variable = _node(graph, binding, RS + "variable")[0]
    return str(variable.value), _text(_node(graph, binding, RS + "value")[0])  # type: ignore[attr-defined]


def answer(results: Sequence[Result]) -> Answer:
    """The answer an engine's results give, in the same form as ``expected``."""
    if results and results[0].boolean is not None:
        return bool(results[0].boolean)
    if results and results[0].triples is not None:
        triples = {t for r in results for t in r.triples or ()}
        return Counter(
            {(_text(t.subject), _text(t.predicate), _text(t.object)): 1 for t in triples}
        )
    return Counter(tuple(sorted((k, _text(v)) for k, v in r.values.items())) for r in results)


def run_test(test: EvaluationTest, engine: Engine) -> Outcome:
    """Evaluate one test with ``engine`` and compare with its expected answer."""
    try:
        got = answer(engine(test.query.read_text(), test.query.as_uri(), dataset(test)))
    except Exception as error:  # every failure is reported with its reason
        return Outcome(test, False, f"{type(error).__name__}: {error}".splitlines()[0][:200])
    want = expected(test)
    if isinstance(want, bool) and not isinstance(got, bool):
        got = bool(got)  # an ASK answered by no results
    if got == want:
        return Outcome(test, True)
    return Outcome(test, False, "answer differs from the expected result")


def run_manifest(manifest: Path, engine: Engine) -> list[Outcome]:
    """Every evaluation test of one manifest through ``engine``."""
    return [run_test(t, engine) for t in read_manifest(manifest)]
