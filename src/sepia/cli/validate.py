"""`sepia validate STREAM...`: read stream files through the Spark pipeline and report on them."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from sepia.cli.app import app, err_console, fail
from sepia.cli.options import stream_binding
from sepia.io.tables import print_fitted
from sepia.rdf.time import format_time

if TYPE_CHECKING:
    from sepia.runtime.spark.validate import StreamReport, ValidationReport


class ReportFormat(StrEnum):
    table = "table"
    jsonl = "jsonl"


@app.command(short_help="Check stream files through the Spark ingest pipeline.")
def validate(
    streams: Annotated[
        list[str],
        typer.Argument(
            metavar="[IRI=]PATH",
            help="Stream files or watched folders, each as [IRI=]PATH (TriG / N-Quads, .gz ok)."
        ),
    ],
    allowed_lateness: Annotated[
        int, typer.Option(help="Put back in order elements up to this many time units late.")
    ] = 0,
    master: Annotated[str, typer.Option(metavar="URL", help="Spark master URL.")] = "local[*]",
    format: Annotated[
        ReportFormat, typer.Option("--format", help="table for a person, jsonl for tools.")
    ] = ReportFormat.table,
) -> None:
    """Check stream files: elements, triples, time range, rate and every error, per stream.

    Reads through Sepia's Spark ingest pipeline; exits 1 when any error was found.
    """
    # imported here: pyspark costs every other command ~0.3 s at start-up
    from sepia.runtime.spark.ingest import IngestOptions, StreamSource
    from sepia.runtime.spark.session import SparkConfig, SparkUnavailable, spark_session
    from sepia.runtime.spark.validate import validate_streams

    sources = [StreamSource(*stream_binding(text)) for text in streams]
    show_progress = format is ReportFormat.table and err_console.is_terminal
    try:
        spark = spark_session(SparkConfig(master=master))
    except SparkUnavailable as error:
        fail(str(error))
    options = IngestOptions(allowed_lateness=allowed_lateness)
    if show_progress:
        err_console.print(f"Spark UI: {spark.sparkContext.uiWebUrl}", highlight=False)
        with err_console.status("reading streams through Spark...") as status:
            report = validate_streams(
                spark, sources, options, progress=lambda r: status.update(_progress_line(r))
            )
    else:
        report = validate_streams(spark, sources, options)
    if format is ReportFormat.jsonl:
        _print_jsonl(report)
    else:
        _print_table(report)
    raise typer.Exit(1 if report.errors else 0)


def _progress_line(report: ValidationReport) -> str:
    rate = report.triples / report.seconds if report.seconds else 0.0
    return (
        f"read {report.elements:,} elements, {report.triples:,} triples "
        f"({rate:,.0f} triples/s, {report.seconds:.0f} s)"
    )


def _time_range(stream: StreamReport) -> tuple[object, object]:
    if stream.first is None or stream.last is None:
        return None, None
    return format_time(stream.first, stream.kind), format_time(stream.last, stream.kind)


def _print_table(report: ValidationReport) -> None:
    console = Console()
    headers = ("stream", "elements", "triples", "from", "to", "elements / unit", "errors")
    rows = []
    for stream in report.streams.values():
        first, last = _time_range(stream)
        rate = stream.data_rate
        rows.append((
            stream.stream, f"{stream.elements:,}", f"{stream.triples:,}", str(first), str(last),
            "-" if rate is None else f"{rate:,.3g}", str(len(stream.errors)),
        ))  # fmt: skip
    title = f"{report.triples:,} triples in {report.seconds:.1f} s"
    print_fitted(console, title, headers, rows, right=headers[1:])
    for error in report.errors:
        console.print(f"Error: {error}", highlight=False, markup=False)


def _print_jsonl(report: ValidationReport) -> None:
    for stream in report.streams.values():
        first, last = _time_range(stream)
        line = {
            "stream": stream.stream,
            "elements": stream.elements,
            "triples": stream.triples,
            "from": first,
            "to": last,
            "errors": len(stream.errors),
            "seconds": report.seconds,
        }
        print(json.dumps(line), file=sys.stdout)
    for error in report.errors:
        line = {
            "error": error.reason,
            "stream": error.stream,
            "file": error.file,
            "line": error.line,
            "element": error.element,
        }
        print(json.dumps(line), file=sys.stdout)
