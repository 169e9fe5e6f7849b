"""What a generated workload is on disk: its streams, background graphs, queries and the
parameters the baselines need, recorded in ``manifest.json`` next to the data.

The manifest is the contract between the generators, the harness and every system: a system
never guesses a window width or a file name, it reads them here.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"


@dataclass(frozen=True, slots=True)
class StreamFile:
    """One stream of the workload: the IRI queries name it by, its file, and what is in it
    (``quads`` also counts the time statements)."""

    name: str
    iri: str
    path: str
    elements: int
    triples: int
    quads: int


@dataclass(frozen=True, slots=True)
class BackgroundFile:
    """A background graph file (Turtle), loaded into ``graph`` (None: the default graph)."""

    path: str
    triples: int
    graph: str | None = None


@dataclass(frozen=True, slots=True)
class Variant:
    """One measured configuration of a workload: a query (and the background it reads).

    ``x`` places the variant on a cost-growth axis (W10 background size, W11 window width);
    ``params`` are what a hand-written baseline needs to evaluate the same query; the
    ``streams`` parameter, when present, restricts the variant to some of the stream files.
    """

    name: str
    query: str | None
    background: tuple[str, ...] = ()
    x: float | None = None
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def rdfs(self) -> bool:
        """Whether the query is read under RDFS entailment (the EP-SPARQL variant of W8)."""
        return self.params.get("entailment") == "rdfs"


@dataclass(frozen=True, slots=True)
class Manifest:
    """Everything ``sepia generate`` wrote for one workload, with its counts."""

    workload: str
    scale: int
    seed: int
    streams: tuple[StreamFile, ...]
    background: tuple[BackgroundFile, ...]
    variants: tuple[Variant, ...]

    @property
    def elements(self) -> int:
        return sum(stream.elements for stream in self.streams)

    @property
    def triples(self) -> int:
        """Triples inside the stream elements (the time statements are not counted)."""
        return sum(stream.triples for stream in self.streams)

    def streams_of(self, variant: Variant) -> tuple[StreamFile, ...]:
        chosen = variant.params.get("streams")
        return tuple(s for s in self.streams if chosen is None or s.name in chosen)

    def background_of(self, variant: Variant) -> list[tuple[str | None, Path]]:
        """(graph, path) of the variant's background files, relative to the data folder: the
        graph each is loaded into (None: the default graph), as its queries name it."""
        graphs = {item.path: item.graph for item in self.background}
        return [(graphs.get(path), Path(path)) for path in variant.background]

    def variant(self, name: str) -> Variant:
        for variant in self.variants:
            if variant.name == name:
                return variant
        raise KeyError(f"workload {self.workload} has no variant {name!r}")

    def save(self, directory: Path) -> Path:
        path = directory / MANIFEST
        path.write_text(json.dumps(asdict(self), indent=2, sort_keys=True) + "\n")
        return path

    @staticmethod
    def load(directory: Path) -> Manifest:
        raw = json.loads((directory / MANIFEST).read_text())
        return Manifest(
            workload=raw["workload"],
            scale=raw["scale"],
            seed=raw["seed"],
            streams=tuple(StreamFile(**item) for item in raw["streams"]),
            background=tuple(BackgroundFile(**item) for item in raw["background"]),
            variants=tuple(
                Variant(**{**item, "background": tuple(item["background"])})
                for item in raw["variants"]
            ),
        )
