"""Option values shared by several commands: `IRI=PATH` bindings and output formats."""

from __future__ import annotations

from pathlib import Path

import typer


def split_binding(text: str) -> tuple[str | None, str]:
    """Split `[NAME=]VALUE` (`--stream IRI=PATH`, `--data G=PATH`); NAME must be an IRI.

    Only a left side that looks like an IRI (has a scheme) is taken as the name, so paths
    containing '=' still work; `<...>` around the IRI is allowed.
    """
    name, sep, value = text.partition("=")
    name = name.strip().removeprefix("<").removesuffix(">")
    if sep and ":" in name and value:
        return name, value
    return None, text


def stream_binding(text: str) -> tuple[str, Path]:
    """A `--stream [IRI=]PATH` value; without an IRI the stream is named by the file's URI."""
    name, value = split_binding(text)
    path = Path(value)
    if not path.exists():
        raise typer.BadParameter(f"{value}: no such file or directory")
    return (name or path.resolve().as_uri()), path
