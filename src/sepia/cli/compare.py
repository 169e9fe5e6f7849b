"""`sepia compare QUERY.rq ... --stream IRI=PATH --operator rstream,istream`: the queries
under several settings over the same inputs, side by side per evaluation time, results
that not every setting gave marked (sepia.timeline.compare)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from sepia.algebra.query import Entailment, Unsupported
from sepia.cli.app import app, fail
from sepia.cli.described import described_run
from sepia.cli.options import (
    DataOption,
    QueriesArgument,
    StreamOption,
    UntilOption,
    load_inputs,
    warn_static,
)
from sepia.cli.timeline import TimelineOption, TimelineRangeOption, check_timeline, draw_timeline
from sepia.rdf.results import Result, result_to_json
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import ReadOptions

if TYPE_CHECKING:
    from sepia.timeline.compare import Row
    from sepia.timeline.text import Shortener


def _list(help_text: str) -> object:
    return typer.Option(metavar="A,B,...", help=help_text + " Comma-separated.")


@app.command(short_help="Run queries under several settings, results side by side.")
def compare(
    queries: QueriesArgument,
    stream: StreamOption = [],  # noqa: B006  (typer reads the default, never mutates it)
    data: DataOption = [],  # noqa: B006
    report: Annotated[
        str | None,
        _list(
            "Report policies: cc (content change), wc (window close), nc (non empty), p or pN "
            "(periodic); join strategies with +, e.g. wc+nc."
        ),
    ] = None,
    operator: Annotated[
        str | None, _list("Streaming operators: rstream, istream, dstream.")
    ] = None,
    event_policy: Annotated[
        str | None,
        _list("Event selection and consumption: unrestricted, chronological, recent, naive."),
    ] = None,
    contiguity: Annotated[
        str | None, _list("SPAseq sequences: strict (,), next (;), any (:).")
    ] = None,
    engine: Annotated[
        str | None, _list("Engines: reference, local, spark (each query's text as written).")
    ] = None,
    dialect: Annotated[
        str | None,
        _list("Dialect defaults (report policy and stream operator): csparql, rspql, cqels."),
    ] = None,
    format: Annotated[
        str, typer.Option("--format", metavar="table|jsonl", help="How to print the results.")
    ] = "table",
    until: UntilOption = None,
    timeline: TimelineOption = None,
    timeline_range: TimelineRangeOption = None,
) -> None:
    """Run the queries under several settings and print their results side by side.

    Each result line says which settings gave it; a line not every setting gave is marked
    (≠ in the table, "differs" in jsonl). --timeline draws one result lane per setting.
    """  # fmt: skip
    if format not in ("table", "jsonl"):
        fail(f"--format {format}: table or jsonl")
    # the settings run on the engines and the reference evaluator: loaded only here
    from sepia.timeline.compare import SettingError, differing, key, run_setting, settings
    from sepia.timeline.compare import compare as compare_rows
    from sepia.timeline.model import Run
    from sepia.timeline.spark import SparkFailed
    from sepia.timeline.text import Shortener

    span = check_timeline(timeline, timeline_range)
    try:
        axes = (report, operator, event_policy, contiguity, engine, dialect)
        chosen = settings(*(_split(v) for v in axes))
    except SettingError as error:
        fail(str(error))
    described = described_run(queries, stream, data)
    warn_static(described.queries, described.stream, described.data)
    entailment = Entailment(described.entailment) if described.entailment else None
    inputs = load_inputs(described.queries, described.stream, described.data, ReadOptions(),
                         entailment=entailment)  # fmt: skip
    results: dict[str, list[Result]] = {}
    for setting in chosen:
        try:
            results[setting.name] = run_setting(
                setting, inputs.queries, inputs.streams, inputs.background, until
            )
        except SettingError as error:
            fail(str(error))
        except Unsupported as error:
            fail(f"setting {setting.name}: the {setting.engine} engine cannot run it: {error}")
        except SparkFailed as error:
            fail(f"setting {setting.name}: {error}")
    rows = compare_rows(results)
    names = list(results)
    if format == "jsonl":
        from sepia.semantics.evaluator import time_kind

        _jsonl(rows, names, time_kind(inputs.streams))
    else:
        _table(rows, names, Shortener(inputs.queries[0].query.prefixes))
    if timeline is not None:
        marked = differing(rows)
        runs = [
            Run(q.name, s.apply(q.query), results[s.name],
                lane=s.name if len(inputs.queries) == 1 else f"{q.name} {s.name}",
                differs=lambda r: key(r) in marked)
            for q in inputs.queries
            for s in chosen
        ]  # fmt: skip
        title = "compare " + " ".join(q.source.name for q in inputs.queries)
        draw_timeline(timeline, runs, inputs.streams, inputs.background, span, until=until,
                      title=title, windows=False)  # fmt: skip


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()] if value else []


def _table(rows: list[Row], names: list[str], shorten: Shortener) -> None:
    table = Table(show_lines=False)
    for column in ("t", "query", "result", *names, ""):
        table.add_column(column, overflow="fold")
    for row in rows:
        text = shorten.result(row.result).split(": ", 1)[-1]
        if row.result.interval:
            text = f"[{row.result.interval[0]}, {row.result.interval[1]}] {text}"
        if row.result.op == "-":
            text = "- " + text
        marks = ["✓" if n == 1 else (f"✓×{n}" if n else "") for n in row.counts]
        table.add_row(str(row.t), row.query, text, *marks, "≠" if row.differs else "")
    Console(soft_wrap=False, width=max(120, Console().width)).print(table)
    differ = sum(row.differs for row in rows)
    print(f"{differ} of {len(rows)} result lines differ between {', '.join(names)}")


def _jsonl(rows: list[Row], names: list[str], kind: TimeKind) -> None:
    for row in rows:
        line = result_to_json(row.result, kind)
        line.pop("match", None)
        line["settings"] = {n: c for n, c in zip(names, row.counts, strict=True)}
        line["differs"] = row.differs
        sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
