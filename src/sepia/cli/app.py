"""The typer application the command modules register on, and helpers they share.

Help and errors are plain text (click's formatter, no boxed panels) so they read at 80
columns; every error is one style: `Error: <cause>` then what to do, on standard error.
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, NoReturn

import typer
from rich.console import Console
from typer._click.exceptions import NoArgsIsHelpError, UsageError  # typer's vendored click
from typer.core import TyperGroup


class _Commands(TyperGroup):
    """Usage errors (a missing argument, a path that is not there) in the one error style:
    `Error: <cause>` wrapped to the terminal, then where the command's help is."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        given = (args, prog_name, complete_var)
        if not standalone_mode:
            return super().main(*given, False, windows_expand_args, **extra)
        try:
            code = super().main(*given, False, windows_expand_args, **extra)
        except NoArgsIsHelpError as error:  # `sepia` alone: the help, as click prints it
            error.show()
            sys.exit(error.exit_code)
        except UsageError as error:
            where = error.ctx.command_path if error.ctx else "sepia"
            typer.echo(_wrapped(f"Error: {error.format_message()}"), err=True)
            typer.echo(_wrapped(f"see {where} --help for what it takes", "  "), err=True)
            sys.exit(error.exit_code)
        except typer.Abort:
            typer.echo("Aborted.", err=True)
            sys.exit(1)
        except BrokenPipeError:
            reader_gone()
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=_Commands,
    name="sepia",
    help="Continuous queries over RDF streams: RSP-QL windows, complex event patterns, "
    "background knowledge, on Apache Spark.\n\n"
    "Start with: sepia run examples/e1-shops-coupons --engine local",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"max_content_width": 100},
)

err_console = Console(stderr=True)


def fail(message: str, hint: str | None = None, code: int = 1) -> NoReturn:
    """Print an error for a person on stderr and exit non-zero: the cause, then what to do.

    The cause and the hint are wrapped to the terminal's width; the lines after the cause
    (a query error's source line and the caret under a column) are printed as they are.
    """
    cause, *excerpt = message.split("\n")
    typer.echo("\n".join([_wrapped(f"Error: {cause}"), *excerpt]), err=True)
    if hint:
        typer.echo(_wrapped(hint, indent="  "), err=True)
    raise typer.Exit(code)


def reader_gone() -> NoReturn:
    """The reader of standard output closed it (`sepia run ... | head -3`): end at once and
    quietly, with status 1 as click does. Standard output is pointed at the null device
    first, so the interpreter's last flush of what is still buffered finds somewhere to go
    instead of printing an error."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)
    sys.exit(1)


def warn(message: str) -> None:
    """A warning in the errors' style: the run goes on."""
    typer.echo(_wrapped(f"Warning: {message}"), err=True)


def _wrapped(text: str, indent: str = "") -> str:
    """Wrapped to the terminal's width (COLUMNS when set); not wrapped when stderr is
    no terminal (a log, a pipe), so a tool can still find a message on one line."""
    columns = os.environ.get("COLUMNS", "")
    if not columns.isdigit() and not sys.stderr.isatty():
        return indent + text
    width = int(columns) if columns.isdigit() else shutil.get_terminal_size().columns
    follow = indent or " " * (text.find(" ") + 1)  # under the cause, after `Error: `
    return textwrap.fill(text, width=max(width, 40), initial_indent=indent,
                         subsequent_indent=follow, break_on_hyphens=False,
                         break_long_words=False)

