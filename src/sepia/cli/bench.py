"""`sepia bench`: the benchmark suite of design/benchmarks.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from sepia.cli.app import app, fail


@app.command(short_help="Run the benchmark suite and write its tables and plots.")
def bench(
    workloads: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="WORKLOAD",
            help="W1-W13, triples (see `sepia generate --list`), reasoning: EP-SPARQL's "
            "stream-reasoning test (40,000 classes, depth 8; 4,000 with --quick), and soak: "
            "W3 and W4 over 1,000,000 elements (--scale), peak memory at a tenth and at the "
            "end; default: all but soak",
        ),
    ] = None,
    quick: Annotated[bool, typer.Option(help="small scales, short budgets (smoke test)")] = False,
    engine: Annotated[
        list[str] | None,
        typer.Option(
            metavar="SYSTEM",
            help="systems to measure (repeat): floor, naive, local, spark, ...; default: all "
            "but the Spark job's (spark, spark-1core, spark-passthrough: a JVM per run)"
        ),
    ] = None,
    scale: Annotated[int | None, typer.Option(help="stream elements for every workload")] = None,
    seed: Annotated[int, typer.Option()] = 7,
    out: Annotated[Path, typer.Option(help="where JSON and plots go")] = Path("bench-results"),
    data_dir: Annotated[
        Path | None,
        typer.Option(help="keep generated data here and reuse it (default: a temporary directory)"),
    ] = None,
    budget: Annotated[
        float | None,
        typer.Option(help="seconds per run before it stops reading (default 3 quick, 300 full)"),
    ] = None,
    repeat: Annotated[
        int, typer.Option(min=1, help="runs per measurement; the fastest is reported")
    ] = 1,
    check: Annotated[
        bool,
        typer.Option(help="check result counts against the reference evaluator's on a small "
                     "prefix of each workload (the `checked` column)"),
    ] = True,
) -> None:
    """Run the benchmark: table on the terminal, bench-results/<date>-<workload>.json, plots."""
    # imported here: the harness brings pandas and matplotlib, ~0.4 s every other command
    # would pay at start-up
    from sepia.bench import reasoning
    from sepia.bench.harness import BenchOptions, run_bench
    from sepia.workloads import WORKLOADS

    options = BenchOptions(
        tuple(workloads or (*WORKLOADS, reasoning.ID)),  # the soak only when asked
        tuple(engine) if engine else None,
        quick,
        scale,
        seed,
        out,
        data_dir,
        budget,
        repeat,
        check,
    )
    console = Console()
    try:
        written = run_bench(options, console)
    except KeyError as error:
        fail(str(error.args[0]))
    console.print(f"wrote {len(written)} files under {out}")
