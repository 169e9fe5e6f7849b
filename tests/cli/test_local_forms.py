"""`sepia run --engine local` on the query forms the engine used to refuse: each prints the
reference's lines, and the answer derived by hand."""

from __future__ import annotations

import json
from pathlib import Path

from .test_run import invoke, lines_as_multiset

PREFIX = "@prefix : <http://example.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"


def run_both(tmp_path: Path, query: str, streams: dict[str, str]) -> list[dict]:
    """Run ``query`` over the TriG ``streams`` (local name -> elements) on both engines:
    the same lines; the local engine's, parsed."""
    (tmp_path / "q.rq").write_text(query)
    args = ["run", str(tmp_path / "q.rq"), "--format", "jsonl"]
    for name, text in streams.items():
        (tmp_path / f"{name}.trig").write_text(PREFIX + text)
        args += ["--stream", f"http://example.org/{name}={tmp_path / f'{name}.trig'}"]
    local = invoke([*args, "--engine", "local"])
    reference = invoke([*args, "--engine", "reference"])
    assert local.exit_code == 0, local.output
    assert reference.exit_code == 0, reference.output
    assert lines_as_multiset(local.stdout) == lines_as_multiset(reference.stdout)
    return [json.loads(line) for line in local.stdout.splitlines()]


def nt(s: str, p: str, o: str) -> str:
    return f"<http://example.org/{s}> <http://example.org/{p}> <http://example.org/{o}> ."


def test_describe(tmp_path: Path) -> None:
    """DESCRIBE ?y over [RANGE 4 STEP 2]: at 4 the window holds a p b (1) and b p c, b q d
    (3), so b and c are described (b by its two triples, c by none); at 6, c alone."""
    lines = run_both(
        tmp_path,
        "PREFIX : <http://example.org/>\nREGISTER RSTREAM :o AS DESCRIBE ?y\n"
        "FROM NAMED WINDOW :w ON :s [RANGE 4 STEP 2]\nWHERE { WINDOW :w { ?x :p ?y } }\n",
        {"s": ":G1 { :a :p :b . } :G1 prov:generatedAtTime 1 .\n"
              ":G2 { :b :p :c . :b :q :d . } :G2 prov:generatedAtTime 3 .\n"},
    )
    assert [(r["t"], sorted(r["triples"])) for r in lines] == [
        (4, sorted([nt("b", "p", "c"), nt("b", "q", "d")]))
    ]


def test_several_matches(tmp_path: Path) -> None:
    """A SEQ (a p b at 1, b q c at 3) joined with an alarm MATCH (a at 2 and 5): pushed at 3
    over [1, 3] and at 5 over [1, 5] (tests/engine/cep/test_several_matches.py)."""
    lines = run_both(
        tmp_path,
        "PREFIX : <http://example.org/>\nSELECT ?a\n"
        "FROM NAMED WINDOW :w1 ON :s1 [RANGE 10 STEP 1]\n"
        "FROM NAMED WINDOW :w2 ON :s2 [RANGE 10 STEP 1]\n"
        "WHERE { MATCH { EVENT :w1 { ?x :p ?y } SEQ EVENT :w1 { ?y :q ?z } }\n"
        "        MATCH { EVENT :w2 { ?x :alarm ?a } } }\n",
        {"s1": ":G1 { :a :p :b . } :G1 prov:generatedAtTime 1 .\n"
               ":G2 { :b :q :c . } :G2 prov:generatedAtTime 3 .\n",
         "s2": ":H1 { :a :alarm :x . } :H1 prov:generatedAtTime 2 .\n"
               ":H2 { :a :alarm :y . } :H2 prov:generatedAtTime 5 .\n"},
    )
    assert [(r["t"], r["from"], r["to"], r["binding"]["a"]) for r in lines] == [
        (3, 1, 3, "<http://example.org/x>"), (5, 1, 5, "<http://example.org/y>")
    ]  # fmt: skip


def test_an_event_over_a_stream(tmp_path: Path) -> None:
    """``SEQ(A | B)``: GPMs outside a sequence see every element of their stream; each
    event's match is pushed at its time (a p b at 1 from s1, a q x at 2 from s2)."""
    lines = run_both(
        tmp_path,
        "PREFIX : <http://example.org/>\nSELECT ?x ?y\n"
        "FROM STREAM S1 :s1\nFROM STREAM S2 :s2\n"
        "WHERE { SEQ(A | B) DEFINE GPM A ON S1 { ?x :p ?y } DEFINE GPM B ON S2 { ?x :q ?y } }\n",
        {"s1": ":G1 { :a :p :b . } :G1 prov:generatedAtTime 1 .\n",
         "s2": ":H1 { :a :q :x . } :H1 prov:generatedAtTime 2 .\n"},
    )
    assert [(r["t"], r["binding"]["y"]) for r in lines] == [
        (1, "<http://example.org/b>"), (2, "<http://example.org/x>")
    ]  # fmt: skip


def test_a_sub_select_inside_an_event(tmp_path: Path) -> None:
    """COUNT per event inside EVENT: 2 objects of :a at 1, 1 at 2 (each event's graph alone)."""
    lines = run_both(
        tmp_path,
        "PREFIX : <http://example.org/>\nSELECT ?x ?n\n"
        "FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 1]\n"
        "WHERE { MATCH { EVENT :w { { SELECT ?x (COUNT(?y) AS ?n) WHERE { ?x :p ?y }"
        " GROUP BY ?x } } } }\n",
        {"s": ":G1 { :a :p :b . :a :p :c . } :G1 prov:generatedAtTime 1 .\n"
              ":G2 { :a :p :d . } :G2 prov:generatedAtTime 2 .\n"},
    )
    assert [(r["t"], r["binding"]["n"]) for r in lines] == [
        (1, '"2"^^<http://www.w3.org/2001/XMLSchema#integer>'),
        (2, '"1"^^<http://www.w3.org/2001/XMLSchema#integer>'),
    ]
