"""The typer application the command modules register on, and helpers they share."""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console

app = typer.Typer(
    name="sepia",
    help="Continuous queries over RDF streams: RSP-QL windows, complex event patterns, "
    "background knowledge, on Apache Spark.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

err_console = Console(stderr=True)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print an error for a person on stderr and exit non-zero.

    Never wrapped: query errors put a caret under a column of the line above it.
    """
    err_console.print("[bold red]error:[/]", highlight=False, end=" ")
    err_console.print(message, markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)

