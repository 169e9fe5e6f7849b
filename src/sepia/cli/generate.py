"""`sepia generate`: write a benchmark workload's streams, background, queries and manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from sepia.cli.app import app, fail
from sepia.workloads import WORKLOADS, workload
from sepia.workloads import generate as generate_workload


def _list_workloads() -> None:
    table = Table("id", "workload", "after", "default scale", "--quick scale")
    for spec in WORKLOADS.values():
        table.add_row(spec.id, spec.title, spec.source, f"{spec.scale:,}", f"{spec.quick_scale:,}")
    Console().print(table)


@app.command(short_help="Generate a benchmark workload's stream files.")
def generate(
    workload_id: Annotated[
        str | None, typer.Argument(metavar="WORKLOAD", help="W1..W13 or triples")
    ] = None,
    scale: Annotated[
        int | None, typer.Option(help="stream elements (default: per workload)")
    ] = None,
    seed: Annotated[int, typer.Option(help="same seed, same bytes")] = 7,
    out: Annotated[Path | None, typer.Option("-o", "--out", help="output directory")] = None,
    gzip: Annotated[bool, typer.Option("--gzip", help="gzip the stream files")] = False,
    list_: Annotated[bool, typer.Option("--list", help="list the workloads")] = False,
) -> None:
    """Generate a benchmark workload (seeded, scalable) in the io.md stream format."""
    if list_:
        _list_workloads()
        return
    if workload_id is None or out is None:
        fail("give a WORKLOAD and -o DIR (or --list)")
    try:
        spec = workload(workload_id)
        manifest = generate_workload(spec.id, scale or spec.scale, seed, out, compress=gzip)
    except (KeyError, ValueError) as error:
        fail(str(error.args[0]))
    Console().print(
        f"{manifest.workload}: {manifest.elements:,} elements, "
        f"{manifest.triples:,} triples, {len(manifest.variants)} variant(s) in {out}"
    )
