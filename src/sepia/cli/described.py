"""A folder given as the query: the run its `run.json` describes (the examples' form).

`run.json` holds `queries` (files in the folder), `streams` (IRI -> file), `data`
(`[GRAPH=]file`) and optionally `entailment`; paths are relative to the folder. Streams
and data given on the command line replace the folder's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sepia.cli.app import fail
from sepia.cli.options import split_binding

_HINT = "give query files (.rq), or one folder holding a run.json (see examples/)"


@dataclass(frozen=True, slots=True)
class Described:
    """The queries and inputs of a run, after a folder's run.json is read."""

    queries: list[Path]
    stream: list[str]
    data: list[str]
    entailment: str | None = None


def described_run(queries: list[Path], stream: list[str], data: list[str]) -> Described:
    """The run as given, or as the one folder among `queries` describes it."""
    folders = [path for path in queries if path.is_dir()]
    if not folders:
        return Described(queries, stream, data)
    folder = folders[0]
    if len(queries) > 1:
        fail(f"{folder} is a folder among query files", _HINT)
    spec = _read(folder / "run.json")
    in_folder = [str(folder / path) for path in spec.get("queries", [])]
    if not in_folder:
        fail(f"{folder / 'run.json'} names no queries", 'list them as "queries": ["q.rq"]')
    own_streams = [f"{iri}={folder / path}" for iri, path in spec.get("streams", {}).items()]
    own_data = [_in_folder(folder, binding) for binding in spec.get("data", [])]
    return Described(
        [Path(path) for path in in_folder],
        stream or own_streams,
        data or own_data,
        spec.get("entailment"),
    )


def _read(path: Path) -> dict:
    if not path.is_file():
        fail(f"{path.parent} is a folder with no run.json", _HINT)
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        fail(f"{path}: not a run description: {error}", "fix its JSON (see examples/*/run.json)")
    if not isinstance(spec, dict):
        fail(f"{path}: not a run description", "it must be a JSON object (see examples/)")
    return spec


def _in_folder(folder: Path, binding: str) -> str:
    graph, path = split_binding(binding)
    return f"{graph}={folder / path}" if graph else str(folder / path)
