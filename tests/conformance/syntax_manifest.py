"""Read the W3C SPARQL syntax tests (positive and negative) from their manifests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

import pyoxigraph as ox

from w3c_suites import W3C

MF = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#"
POSITIVE = {MF + "PositiveSyntaxTest", MF + "PositiveSyntaxTest11"}
NEGATIVE = {MF + "NegativeSyntaxTest", MF + "NegativeSyntaxTest11"}
_QUERY = f"""
PREFIX mf: <{MF}>
PREFIX dawgt: <http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#>
SELECT ?test ?type ?action ?approval WHERE {{
  ?test a ?type ; mf:action ?action .
  OPTIONAL {{ ?test dawgt:approval ?approval }}
}}
"""


@dataclass(frozen=True)
class SyntaxTest:
    """One syntax test: a query file that must parse (positive) or be rejected (negative)."""

    name: str
    directory: str
    path: Path
    positive: bool
    withdrawn: bool


def manifests() -> list[Path]:
    """The manifests holding query syntax tests: SPARQL 1.1 folders and sparql10's syntax-*."""
    found = sorted((W3C / "sparql11").glob("*/manifest.ttl"))
    found += sorted((W3C / "sparql10").glob("syntax-sparql*/manifest.ttl"))
    return found


def syntax_tests() -> list[SyntaxTest]:
    """Every positive and negative query syntax test of every manifest, in file order."""
    tests: list[SyntaxTest] = []
    for manifest in manifests():
        store = ox.Store()
        store.load(path=str(manifest), format=ox.RdfFormat.TURTLE,
                   base_iri=manifest.resolve().as_uri())
        for row in store.query(_QUERY):
            kind = row["type"].value
            if kind not in POSITIVE | NEGATIVE:
                continue
            path = Path(unquote(urlparse(row["action"].value).path))
            approval = row["approval"]
            tests.append(SyntaxTest(
                name=path.name, directory=manifest.parent.name, path=path,
                positive=kind in POSITIVE,
                withdrawn=approval is not None and approval.value.endswith("Withdrawn"),
            ))
    return sorted(tests, key=lambda t: (t.directory, t.name))
