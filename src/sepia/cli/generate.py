"""`sepia generate`: not built yet; it says so and exits non-zero rather than print fake output."""

from __future__ import annotations

from sepia.cli.app import app, not_built_yet


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def generate() -> None:
    """(not built yet)"""
    not_built_yet("sepia generate")
