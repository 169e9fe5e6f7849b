"""The W3C SPARQL 1.1 entailment tests that apply to RDFS, as one-time queries.

A test applies when its ``sd:entailmentRegime`` lists ``ent:RDFS``. Each runs twice: through
the reference evaluator with ``rdfs=True`` (it closes every graph itself), and through the
plain evaluator over the dataset closed by :func:`sepia.reasoning.close_background`. Both
must pass the same tests. Exclusions, with their reasons, are in ``EXCLUDED``; an excluded
test that starts passing fails here so the list stays true.
"""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from sepia.lang import parse_query
from sepia.rdf.results import Result
from sepia.reasoning import close_background
from sepia.semantics import evaluate
from sepia.semantics.conformance import EvaluationTest, read_manifest, run_test
from w3c_suites import SPARQL11, message

ENTAILMENT = SPARQL11 / "entailment"
if not ENTAILMENT.is_dir():  # fails the run under CI (tests/conftest.py)
    pytest.skip(message(), allow_module_level=True)

REFLEXIVE = (
    "needs reflexive rdfs:subClassOf / rdfs:subPropertyOf (rules rdfs6, rdfs10 with rdf1 and "
    "the axiom rdf:type rdfs:range rdfs:Class), which semantics.md's rule set leaves out"
)
EXCLUDED = {
    "rdfs05": REFLEXIVE + " (:d rdfs:subClassOf :d)",
    "rdfs11": REFLEXIVE + " (ex:p rdfs:subPropertyOf ex:p)",
    "paper-sparqldl-Q1-rdfs": REFLEXIVE + " (ex:Student rdfs:subClassOf ex:Student)",
    "sparqldl-02": REFLEXIVE + " (:c rdfs:subClassOf :c)",
    "sparqldl-03": REFLEXIVE + " (:c rdfs:subClassOf :c)",
}


REGIME_QUERY = """
PREFIX mf: <http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#>
PREFIX sd: <http://www.w3.org/ns/sparql-service-description#>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX ent: <http://www.w3.org/ns/entailment/>
SELECT ?result WHERE {
  ?test mf:action ?action ; mf:result ?result .
  { ?action sd:entailmentRegime ent:RDFS } UNION
  { ?action sd:entailmentRegime/rdf:rest*/rdf:first ent:RDFS }
}"""


def rdfs_tests() -> list[EvaluationTest]:
    """The evaluation tests of the manifest whose regimes include RDFS (the manifest's
    result file names each test: a query file may serve several tests)."""
    manifest = ENTAILMENT / "manifest.ttl"
    graph = ox.Store()
    graph.load(path=manifest, format=ox.RdfFormat.TURTLE, base_iri=manifest.resolve().as_uri())
    results = {row["result"].value for row in graph.query(REGIME_QUERY)}
    return [t for t in read_manifest(manifest) if t.result.resolve().as_uri() in results]


def reference(text: str, base: str, store: ox.Store) -> list[Result]:
    return evaluate(parse_query(f"BASE <{base}>\n{text}"), {}, store, rdfs=True)


def closed_first(text: str, base: str, store: ox.Store) -> list[Result]:
    return evaluate(parse_query(f"BASE <{base}>\n{text}"), {}, close_background(store)[0])


TESTS = rdfs_tests()


def test_the_suite_is_there_and_its_rdfs_tests_are_found():
    assert len(TESTS) == 36
    assert EXCLUDED.keys() <= {t.result.stem for t in TESTS}


@pytest.mark.parametrize("test", TESTS, ids=lambda t: t.result.stem)
@pytest.mark.parametrize("engine", [reference, closed_first], ids=["reference", "closed-first"])
def test_rdfs_entailment(test, engine):
    outcome = run_test(test, engine)
    if test.result.stem in EXCLUDED:
        assert not outcome.passed, f"excluded but passes: {EXCLUDED[test.result.stem]}"
    else:
        assert outcome.passed, outcome.reason
