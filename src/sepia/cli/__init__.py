"""The `sepia` command line: one module per command, registered on one typer app."""

from sepia.cli import (  # noqa: F401  (register commands)
    bench,
    check,
    compare,
    explain,
    generate,
    run,
    validate,
)
from sepia.cli.app import app

__all__ = ["app"]
