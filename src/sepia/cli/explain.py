"""`sepia explain QUERY`: the logical algebra a query compiles to, as an indented tree (for
people), JSON (for tools), an S-expression (as the tests compare them) or query text."""

from __future__ import annotations

import enum
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from sepia.algebra import Query, to_json, to_sexpr, to_sparql, to_tree
from sepia.algebra.query import Unsupported
from sepia.cli.app import app, fail, warn
from sepia.cli.options import StreamOption, stream_kind
from sepia.lang import QueryError, parse_query, static_warnings
from sepia.rdf.dictionary import Dictionary


class ExplainFormat(enum.Enum):
    """How ``sepia explain`` prints the algebra."""

    TREE = "tree"
    JSON = "json"
    SEXPR = "sexpr"
    SPARQL = "sparql"


@app.command(short_help="Print a query's algebra and the local engine's plan.")
def explain(
    query: Annotated[str, typer.Argument(help="Query file (.rq), or '-' to read stdin.")],
    output_format: Annotated[
        ExplainFormat, typer.Option("--format", "-f", help="tree, json or sexpr.")
    ] = ExplainFormat.TREE,
    stream: StreamOption = [],  # noqa: B006  (typer reads the default, never mutates it)
) -> None:
    """Print the algebra a query compiles to, and the local engine's physical plan for it;
    with --stream, the query's durations are also checked against the stream's time."""
    text, source = _read(query)
    try:
        compiled = parse_query(text, source=source)
    except QueryError as error:
        typer.echo(f"error: {error}", err=True)  # plain text: a wrapped line would move the caret
        raise typer.Exit(2) from None
    for warning in static_warnings(text, source=source, stream_kind=stream_kind(stream)):
        warn(str(warning))
    prefixes = dict(compiled.prefixes)
    if output_format is ExplainFormat.JSON:
        typer.echo(json.dumps(to_json(compiled, prefixes), indent=2))
    elif output_format is ExplainFormat.SEXPR:
        typer.echo(to_sexpr(compiled.expression, prefixes))
    elif output_format is ExplainFormat.SPARQL:
        typer.echo(to_sparql(compiled), nl=False)
    else:
        typer.echo(_summary(compiled, prefixes))
        typer.echo(to_tree(compiled.expression, prefixes))
        typer.echo("physical plan (--engine local):")
        typer.echo(_physical_plan(compiled))
        feed = _spark_feed(compiled)
        if feed:
            typer.echo(feed)


def _physical_plan(query: Query) -> str:
    """The incremental engine's plan, indented, or why the engine cannot run the query yet."""
    from sepia.engine import explain as engine_explain  # the engine, for this command only
    from sepia.engine import plan

    dictionary = Dictionary()
    try:
        physical = plan(query, dictionary)
    except Unsupported as error:
        return f"  not runnable on the local engine yet: {error}"
    return "\n".join("  " + line for line in engine_explain(physical, dictionary).splitlines())


def _spark_feed(query: Query) -> str | None:
    """How the Spark job steps the query's keys (one line), if the engine runs it (else
    the job runs it on its reference adapter, as the plan's refusal says)."""
    from sepia.engine import plan
    from sepia.runtime.spark.columns import feed_of  # no pyspark: numpy and pyarrow only

    try:
        physical = plan(query, Dictionary())
    except Unsupported:
        return None
    return f"spark job (--engine spark): {feed_of(physical)}"


def _read(query: str) -> tuple[str, str]:
    if query == "-":
        return sys.stdin.read(), "<stdin>"
    path = Path(query)
    if not path.is_file():
        fail(f"no query file {query}")
    return path.read_text(encoding="utf-8"), str(path)


def _summary(query: Query, prefixes: dict[str, str]) -> str:
    """The query's header: dialect, form, dataset, report policy and event settings."""
    lines = [f"dialect: {query.dialect.value}", f"form: {to_sexpr(query.form, prefixes)}"]
    dataset = to_tree(query.dataset, prefixes).splitlines()
    if dataset != ["Dataset"]:
        lines += ["dataset:", *("  " + line for line in dataset)]
    lines.append(f"report: {to_sexpr(query.report, prefixes)}")
    extras = {
        "registration": query.registration,
        "within": query.within,
        "partition by": query.partition_by,
        "time unit": query.time_kind,
    }
    lines += [
        f"{name}: {to_sexpr(value, prefixes)}"
        for name, value in extras.items()
        if value is not None
    ]
    lines.append(f"event policy: {query.event_policy.value}")
    return "\n".join(lines) + "\nalgebra:"
