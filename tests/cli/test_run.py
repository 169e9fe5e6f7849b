"""`sepia run` end to end on the bundled examples, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sepia.cli import app
from sepia.cli.options import split_binding

EXAMPLES = Path(__file__).parents[2] / "examples"


def run_args(example: Path, query: str) -> list[str]:
    """The `sepia run` arguments that run.json describes for one query of an example."""
    spec = json.loads((example / "run.json").read_text())
    args = ["run", str(example / query)]
    for iri, path in spec["streams"].items():
        args += ["--stream", f"{iri}={example / path}"]
    if spec.get("entailment"):
        args += ["--entailment", spec["entailment"]]
    for binding in spec["data"]:
        graph, path = split_binding(binding)
        args += ["--data", f"{graph}={example / path}" if graph else str(example / path)]
    return args


def lines_as_multiset(text: str) -> list[str]:
    return sorted(json.dumps(json.loads(line), sort_keys=True) for line in text.splitlines())


def invoke(args: list[str]):
    return CliRunner().invoke(app, args, env={"COLUMNS": "500"})


@pytest.mark.parametrize(
    "example", sorted(p.name for p in EXAMPLES.iterdir() if (p / "run.json").exists())
)
def test_every_example_gives_its_expected_jsonl_on_the_reference_engine(example: str) -> None:
    folder = EXAMPLES / example
    spec = json.loads((folder / "run.json").read_text())
    expected = (folder / "expected.jsonl").read_text()
    got = ""
    for query in spec["queries"]:
        result = invoke([*run_args(folder, query), "--engine", "reference", "--format", "jsonl"])
        assert result.exit_code == 0, result.output
        got += result.stdout
    assert lines_as_multiset(got) == lines_as_multiset(expected)


ALL_QUERIES = [
    (example.name, query)
    for example in sorted(p for p in EXAMPLES.iterdir() if (p / "run.json").exists())
    for query in json.loads((example / "run.json").read_text())["queries"]
]
LOCAL_SUPPORTED = {"e1-shops-coupons", "e3-rsepql-landmark", "e4-spaseq-selection",
                   "e6-smart-city-rdfs"}  # fmt: skip


@pytest.mark.parametrize(("example", "query"), ALL_QUERIES)
def test_the_local_engine_gives_the_expected_results_or_says_it_cannot(
    example: str, query: str
) -> None:
    folder = EXAMPLES / example
    result = invoke([*run_args(folder, query), "--engine", "local", "--format", "jsonl"])
    if example not in LOCAL_SUPPORTED and result.exit_code == 3:
        assert "the local engine cannot run this query yet" in result.output
        return
    assert result.exit_code == 0, result.output
    expected = [
        line
        for line in (folder / "expected.jsonl").read_text().splitlines()
        if json.loads(line)["query"] == query.removesuffix(".rq")
    ]
    assert lines_as_multiset(result.stdout) == lines_as_multiset("\n".join(expected))


@pytest.mark.parametrize("example", ["e3-rsepql-landmark", "e5-epsparql-drop-rise"])
def test_a_single_stream_binds_without_its_iri(example: str) -> None:
    # E3 declares one stream; E5 (EP-SPARQL) declares none and reads what it is given.
    folder = EXAMPLES / example
    result = invoke(
        [
            "run",
            str(folder / "query.rq"),
            "--stream",
            str(folder / "stream.trig"),
            "--engine",
            "reference",
            "--format",
            "jsonl",
        ]
    )
    assert result.exit_code == 0, result.output
    assert lines_as_multiset(result.stdout) == lines_as_multiset(
        (folder / "expected.jsonl").read_text()
    )


def test_a_bad_query_is_rejected_with_its_position(tmp_path: Path) -> None:
    query = tmp_path / "bad.rq"
    query.write_text("SELECT ?x WHERE {\n  ?x <http://e/p> \n}\n")
    result = invoke(["run", str(query), "--engine", "reference"])
    assert result.exit_code == 1
    assert "bad.rq" in result.output and "3" in result.output


def test_an_unbound_stream_is_named() -> None:
    folder = EXAMPLES / "e1-shops-coupons"
    result = invoke(
        [
            "run",
            str(folder / "query.rq"),
            "--stream",
            f"http://example.org/nearby={folder / 'stream-nearby.trig'}",
            "--engine",
            "reference",
        ]
    )
    assert result.exit_code == 1
    assert "no --stream given for <http://example.org/coupons>" in result.output


@pytest.mark.spark
def test_the_default_spark_engine_gives_the_expected_jsonl(spark) -> None:
    folder = EXAMPLES / "e3-rsepql-landmark"
    result = invoke([*run_args(folder, "query.rq"), "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    assert lines_as_multiset(result.stdout) == lines_as_multiset(
        (folder / "expected.jsonl").read_text()
    )


def test_csv_columns_follow_the_select_clause() -> None:
    folder = EXAMPLES / "e1-shops-coupons"
    result = invoke([*run_args(folder, "query.rq"), "--engine", "reference", "--format", "csv"])
    assert result.exit_code == 0, result.output
    header, first, *_ = result.stdout.splitlines()
    assert header == "query,t,op,from,to,match,shopper,shop,shop_owner,coupon"
    assert first == (
        "query,8,+,,,,http://example.org/carl,http://example.org/a,"
        "http://example.org/alice,10% discount on ..."
    )


def test_results_go_to_the_output_file(tmp_path: Path) -> None:
    folder = EXAMPLES / "e3-rsepql-landmark"
    out = tmp_path / "out.jsonl"
    args = [*run_args(folder, "query.rq"), "--engine", "reference", "--output", str(out)]
    result = invoke(args)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert lines_as_multiset(out.read_text()) == lines_as_multiset(
        (folder / "expected.jsonl").read_text()
    )


def test_event_policy_chronological_consumes_what_it_used() -> None:
    # E3 under CHRONOLOGICAL (RSEP-QL Table 1, hand-derived): at 6, b1-q-c1 takes the earliest
    # a-p-b1 (G1@2) and consumes it; at 8, b2-q-c2 takes G2@4, the earliest a2-p-b2; at 10 the
    # only a-p-b1 is consumed, so nothing: two results instead of UNRESTRICTED's four.
    folder = EXAMPLES / "e3-rsepql-landmark"
    args = [*run_args(folder, "query.rq"), "--engine", "reference", "--format", "jsonl"]
    result = invoke([*args, "--event-policy", "chronological"])
    assert result.exit_code == 0, result.output
    got = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["t"], r["from"], r["binding"]["x"]) for r in got] == [
        (6, 2, "<http://example.org/a1>"),
        (8, 4, "<http://example.org/a2>"),
    ]


ALERTS = """PREFIX : <http://example.org/>
REGISTER STREAM :alerts AS
CONSTRUCT { ?x :q :hot }
FROM STREAM <http://example.org/s1> [RANGE 4 STEP 2]
WHERE { ?x :p :hot }
"""
PAIRS = """PREFIX : <http://example.org/>
REGISTER ISTREAM :out AS SELECT ?x ?y
FROM NAMED WINDOW :recent ON :alerts [RANGE 1]
FROM NAMED WINDOW :w ON :s2 [RANGE 10]
REPORT ON CONTENT CHANGE
WHERE { WINDOW :recent { ?x :q :hot } WINDOW :w { ?x :p ?y } }
"""


def test_a_query_network_runs_on_the_local_engine_as_on_the_reference(tmp_path: Path) -> None:
    """A C-SPARQL ``REGISTER STREAM ... AS CONSTRUCT`` feeds an RSP-QL query of the same
    run (language.md section 7): both engines print the same lines, among them the pairs
    derived by hand in tests/engine/hosts/test_network.py (a hot at 1 and a :p c at 3 meet at 4;
    b hot at 5 and b :p a at 7 meet at 8)."""
    (tmp_path / "alerts.rq").write_text(ALERTS)
    (tmp_path / "pairs.rq").write_text(PAIRS)
    prefix = "@prefix : <http://example.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
    (tmp_path / "s1.trig").write_text(
        prefix + ":G1 { :a :p :hot . } :G1 prov:generatedAtTime 1 .\n"
        ":G2 { :b :p :hot . } :G2 prov:generatedAtTime 5 .\n"
    )
    (tmp_path / "s2.trig").write_text(
        prefix + ":H1 { :a :p :c . } :H1 prov:generatedAtTime 3 .\n"
        ":H2 { :b :p :a . } :H2 prov:generatedAtTime 7 .\n"
    )
    args = ["run", str(tmp_path / "alerts.rq"), str(tmp_path / "pairs.rq"), "--format", "jsonl",
            "--stream", f"http://example.org/s1={tmp_path / 's1.trig'}",
            "--stream", f"http://example.org/s2={tmp_path / 's2.trig'}"]  # fmt: skip
    local = invoke([*args, "--engine", "local"])
    reference = invoke([*args, "--engine", "reference"])
    assert local.exit_code == 0, local.output
    assert reference.exit_code == 0, reference.output
    assert lines_as_multiset(local.stdout) == lines_as_multiset(reference.stdout)
    pairs = [json.loads(line) for line in local.stdout.splitlines()]
    pairs = [(p["t"], *p["binding"].values()) for p in pairs if p["query"] == "pairs"]
    assert pairs == [
        (4, "<http://example.org/a>", "<http://example.org/c>"),
        (8, "<http://example.org/b>", "<http://example.org/a>"),
    ]
    times = [json.loads(line)["t"] for line in local.stdout.splitlines()]
    assert times == sorted(times)


def test_an_ep_sparql_q_closure_runs_on_the_local_engine(tmp_path: Path) -> None:
    """EP-SPARQL's Q-closure from the command line: the reachability rule reads its own
    output (tests/semantics/test_network.py derives the answer by hand); both engines print
    a-c at 2, then a-d and b-d at 3 (a-d from a-c, derived at 2, then c-d)."""
    (tmp_path / "reach.rq").write_text(
        "PREFIX : <http://example.org/>\n"
        "REGISTER RSTREAM :derived AS CONSTRUCT { ?a :reach ?c }\n"
        "WHERE { { ?a :reach ?b } SEQ { ?b :reach ?c } }\n"
    )
    prefix = "@prefix : <http://example.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n"
    (tmp_path / "in.trig").write_text(
        prefix + ":G1 { :a :reach :b . } :G1 prov:generatedAtTime 1 .\n"
        ":G2 { :b :reach :c . } :G2 prov:generatedAtTime 2 .\n"
        ":G3 { :c :reach :d . } :G3 prov:generatedAtTime 3 .\n"
    )
    args = ["run", str(tmp_path / "reach.rq"), "--format", "jsonl",
            "--stream", f"http://example.org/in={tmp_path / 'in.trig'}"]  # fmt: skip
    local = invoke([*args, "--engine", "local"])
    reference = invoke([*args, "--engine", "reference"])
    assert local.exit_code == 0, local.output
    assert lines_as_multiset(local.stdout) == lines_as_multiset(reference.stdout)
    lines = [json.loads(line) for line in local.stdout.splitlines()]
    got = sorted((r["t"], r["from"], *r["triples"]) for r in lines)
    reach = "<http://example.org/{}> <http://example.org/reach> <http://example.org/{}> .".format
    assert got == [(2, 1, reach("a", "c")), (3, 1, reach("a", "d")), (3, 2, reach("b", "d"))]


def test_both_evaluators_refuse_a_blank_node_at_an_end_of_a_nested_path(tmp_path: Path) -> None:
    """`_:b (path with a nested test) :c` would be read by the reference as that very node
    (no solution: a silently wrong answer); both evaluators say they cannot run it."""
    stream = tmp_path / "s.trig"
    stream.write_text(
        "@prefix : <http://ex/> . @prefix prov: <http://www.w3.org/ns/prov#> .\n"
        ":g1 { :a :beg :x . :x :means :subway . :x :end :c . :a :name \"A\" . }\n"
        ":g1 prov:generatedAtTime 1 .\n"
    )
    query = tmp_path / "q.rq"
    query.write_text(
        "PREFIX : <http://ex/>\nREGISTER RSTREAM :out AS SELECT ?n\n"
        "FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 1]\n"
        "WHERE { WINDOW :w { _:b (:beg/[:means :subway]/:end)+ :c . _:b :name ?n } }\n"
    )
    for engine in ("reference", "local"):
        args = ["run", str(query), "--stream", f"http://ex/s={stream}", "--engine", engine]
        result = invoke(args)
        assert result.exit_code != 0, result.output
        assert "a blank node at an end of a path with nested tests" in result.output


@pytest.mark.parametrize(("follow", "live"), [([], False), (["--follow"], True)])
def test_a_spark_run_sets_its_session_for_what_it_reads(monkeypatch, follow, live) -> None:
    """A followed run's session compiles for a live job, a file run's for its short input:
    the configuration `sepia run` asks Spark for (stopped before Spark starts)."""
    from sepia.runtime.spark import session

    asked: list[session.SparkConfig] = []

    def refuse(config: session.SparkConfig):
        asked.append(config)
        raise session.SparkUnavailable("not started in this test")

    monkeypatch.setattr(session, "spark_session", refuse)
    example = EXAMPLES / "e1-shops-coupons"
    result = invoke([*run_args(example, "query.rq"), "--engine", "spark", *follow])
    assert result.exit_code == 1 and "not started in this test" in result.output
    assert [(c.live, c.short) for c in asked] == [(live, not live)]


@pytest.mark.parametrize("drawn", [False, True])
def test_a_local_run_keeps_its_results_only_to_draw_them(monkeypatch, tmp_path, drawn) -> None:
    """Every result of a local run used to be kept for a --timeline picture that was not
    asked for: a 1,000,000-element W4 run grew from 168 to 306 MiB with its 232,912
    results. Without --timeline no results are kept (memory follows the live state)."""
    import sepia.cli.local

    given = []
    monkeypatch.setattr(sepia.cli.local, "run_local", lambda run, *rest: given.append(run))
    args = [*run_args(EXAMPLES / "e1-shops-coupons", "query.rq"), "--engine", "local"]
    if drawn:
        args += ["--timeline", str(tmp_path / "t.svg")]
        monkeypatch.setattr("sepia.cli.run.draw_run", lambda *args: None)
    assert invoke(args).exit_code == 0
    assert (given[0].on_results is not None) is drawn
