"""`sepia explain`: the tree, JSON and S-expression outputs, and errors with their caret."""

import json
from pathlib import Path

from typer.testing import CliRunner

from sepia.cli import app

RSEPQL = Path(__file__).parent / "papers" / "rsepql-example-4.rq"
runner = CliRunner()


def test_tree_output_has_the_header_and_one_operator_per_line():
    result = runner.invoke(app, ["explain", str(RSEPQL)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "dialect: RSEP-QL"
    assert "report: (push-matches)" in lines
    assert "    windows[0]: WindowDecl name=:w1 stream=:s into_default=false" in lines
    algebra = lines[lines.index("algebra:") + 1 : lines.index("physical plan (--engine local):")]
    assert algebra == [
        "Project variables=(?x ?y ?z)",
        "  inner: Match",
        "    event: Seq policy=unrestricted",
        "      left: Event window=:w1",
        "        pattern: Bgp triples={ ?x :p ?y }",
        "      right: Event window=:w2",
        "        pattern: Bgp triples={ ?y :q ?z }",
    ]


def test_json_output_is_the_whole_query():
    result = runner.invoke(app, ["explain", str(RSEPQL), "--format", "json"])
    data = json.loads(result.output)
    assert data["type"] == "Query" and data["dialect"] == "RSEP-QL"
    assert data["expression"]["inner"]["event"]["type"] == "Seq"
    assert data["dataset"]["windows"][0]["spec"] == {"type": "Landmark", "t0": 1}


def test_sexpr_output_and_stdin():
    result = runner.invoke(app, ["explain", "-", "-f", "sexpr"],
                           input="SELECT * WHERE { ?s <http://e/p> ?o }")
    assert result.output.strip() == "(project (bgp ((triple-pattern ?s <http://e/p> ?o))) (?s ?o))"


def test_a_bad_query_exits_2_with_the_caret_on_stderr():
    result = runner.invoke(app, ["explain", "-"], input="SELECT * WHERE { ?s ex:p ?o }")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[1:] == [
        "1 | SELECT * WHERE { ?s ex:p ?o }",
        "                        ^^^^",
    ]


def test_sparql_output_compiles_back_to_the_same_algebra():
    result = runner.invoke(app, ["explain", str(RSEPQL), "-f", "sparql"])
    assert result.exit_code == 0
    assert "MATCH { EVENT :w1 { ?x :p ?y . } SEQ EVENT :w2 { ?y :q ?z . } }" in result.output
    again = runner.invoke(app, ["explain", "-", "-f", "sexpr"], input=result.output)
    first = runner.invoke(app, ["explain", str(RSEPQL), "-f", "sexpr"])
    assert again.output == first.output
