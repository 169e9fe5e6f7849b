"""The `sepia` command line: one module per command, registered on one typer app."""

from sepia.cli import bench, check, explain, generate, run, validate  # noqa: F401  (register commands)
from sepia.cli.app import app

__all__ = ["app"]
