"""The W3C manifest runner, checked with pyoxigraph itself as the engine: a correct engine
passes a directory, an engine that answers wrongly fails with a reason."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from sepia.rdf.results import Result
from sepia.semantics.conformance import read_manifest, run_manifest
from w3c_suites import SPARQL11, message

if not SPARQL11.is_dir():  # fails the run under CI (tests/conftest.py)
    pytest.skip(message(), allow_module_level=True)


def oxigraph(text: str, base: str, store: ox.Store) -> list[Result]:
    """pyoxigraph's own answer, as Sepia results."""
    answer = store.query(text, base_iri=base)
    if isinstance(answer, ox.QueryBoolean):
        return [Result("q", 0, "+", boolean=bool(answer))]
    if isinstance(answer, ox.QueryTriples):
        return [Result("q", 0, "+", triples=tuple(answer))]
    names = [v.value for v in answer.variables]
    return [
        Result("q", 0, "+", tuple(sorted((n, s[n]) for n in names if s[n] is not None)))
        for s in answer
    ]


def test_manifest_is_read():
    tests = read_manifest(SPARQL11 / "bind" / "manifest.ttl")
    assert [t.name for t in tests][:2] == ["bind01 - BIND", "bind02 - BIND"]
    assert tests[0].query.name == "bind01.rq" and tests[0].result.name == "bind01.srx"
    assert tests[0].data[0].name == "data.ttl"


@pytest.mark.parametrize("directory", ["bind", "cast", "construct", "exists"])
def test_a_correct_engine_passes(directory):
    outcomes = run_manifest(SPARQL11 / directory / "manifest.ttl", oxigraph)
    assert [o.test.name for o in outcomes if not o.passed] == []


def test_a_wrong_engine_fails_with_reasons():
    def empty(text, base, store):
        return []

    def broken(text, base, store):
        raise ValueError("cannot parse\nsecond line")

    outcomes = run_manifest(SPARQL11 / "bind" / "manifest.ttl", empty)
    # only bind10 expects no solution at all
    assert [o.test.name for o in outcomes if o.passed] == [
        "bind10 - BIND scoping - Variable in filter not in scope"
    ]
    assert {o.reason for o in outcomes if not o.passed} == {
        "answer differs from the expected result"
    }
    (first, *_) = run_manifest(SPARQL11 / "bind" / "manifest.ttl", broken)
    assert first.reason == "ValueError: cannot parse"
