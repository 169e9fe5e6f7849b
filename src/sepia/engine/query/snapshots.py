"""Snapshot files: a session's state rows on disk, to stop a run and resume it later.

A snapshot file is one JSON document: a format tag, the names of the queries whose state it
holds, ``Session.snapshot()`` (the dictionary, the elements not yet released, the
watermark, each query's rows), and how many elements of each input file the session had
taken (``inputs``: resolved path -> count), so that a resumed run skips them. Resuming
needs a session with the same queries under the same names and the same background data
(their term ids are allocated again in the same order, and the dictionary rows must
continue them). The file is written next to its final name and
renamed over it, so a stop in the middle of a write leaves the previous snapshot whole.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

FORMAT = "sepia-local-snapshot/1"


class SnapshotError(ValueError):
    """A snapshot file that cannot resume this session (wrong file, other queries)."""


class Saved(NamedTuple):
    """What a snapshot file holds for the session and for the run that feeds it."""

    state: dict[str, Any]
    inputs: dict[str, int]


def write_snapshot(
    path: str | Path,
    queries: Sequence[str],
    state: Mapping[str, Any],
    inputs: Mapping[str, int] | None = None,
) -> None:
    """Write the state rows of the session running ``queries`` to ``path``, atomically."""
    path = Path(path)
    scratch = path.with_name(f".{path.name}.partial")
    document = {"format": FORMAT, "queries": list(queries), "state": state}
    document["inputs"] = dict(inputs or {})
    with scratch.open("w", encoding="utf-8") as out:
        json.dump(document, out, separators=(",", ":"))
        out.flush()
        os.fsync(out.fileno())
    os.replace(scratch, path)


def read_snapshot(path: str | Path, queries: Sequence[str]) -> Saved:
    """The state rows in ``path``, checked to belong to a session running ``queries``."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise SnapshotError(f"{path}: cannot read the snapshot: {error}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise SnapshotError(f"{path}: not a Sepia local snapshot ({FORMAT})")
    if sorted(document["queries"]) != sorted(queries):
        saved, given = ", ".join(document["queries"]), ", ".join(queries)
        raise SnapshotError(f"{path}: the snapshot is of the queries {saved}, not {given}")
    return Saved(document["state"], document.get("inputs", {}))
