"""Fast, deterministic writing of stream files (TriG or N-Quads, optionally gzip) and
background Turtle, by string building: rdflib would be ~50x slower than the parsers we feed.

Terms are handed around as N-Triples text, the one external form of a term in Sepia, so the
same element can be written as TriG or N-Quads. Each element is written as its time
statement in the default graph followed by its named graph, as io.md describes.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from sepia.rdf.time import TimeKind, format_time
from sepia.rdf.vocabulary import PROV, RDF, RDFS, XSD
from sepia.workloads.manifest import BackgroundFile, Manifest, StreamFile, Variant

RDF_TYPE = f"<{RDF}type>"
RDFS_SUBCLASS = f"<{RDFS}subClassOf>"
EPOCH_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z: every generated stream starts here
MINUTE_MS = 60_000

Triple = tuple[str, str, str]


def iri(text: str) -> str:
    return f"<{text}>"


def integer(value: int) -> str:
    return f'"{value}"^^<{XSD}integer>'


def decimal(value: float) -> str:
    """An xsd:decimal with two digits (prices, amounts): exact in the query, no float noise."""
    return f'"{value:.2f}"^^<{XSD}decimal>'


def string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def datetime_literal(ms: int) -> str:
    return f'"{format_time(ms, TimeKind.DATETIME)}"^^<{XSD}dateTime>'


def _open(path: Path, compress: bool) -> IO[str]:
    """A text file; gzip with mtime 0 and no name, so the same content gives the same bytes."""
    if not compress:
        return path.open("w", encoding="utf-8", newline="\n")
    raw = path.open("wb")
    packed = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6)
    return io.TextIOWrapper(packed, encoding="utf-8", newline="\n")


class StreamWriter:
    """Writes one stream file element by element and counts what it wrote."""

    _FLUSH_EVERY = 4096

    def __init__(self, path: Path, compress: bool = False) -> None:
        self.path = path
        self.nquads = ".nq" in path.suffixes
        self.elements = 0
        self.triples = 0
        self.quads = 0
        self._file = _open(path, compress)
        self._buffer: list[str] = []
        if not self.nquads:
            self._buffer.append(f"@prefix prov: <{PROV}> .\n@prefix xsd: <{XSD}> .\n")

    def element(
        self, graph: str, triples: Iterable[Triple], time: int, end: int | None = None
    ) -> None:
        """One event graph stamped at ``time``, or over [time, end] when ``end`` is given."""
        stamps = self._stamps(time, end)
        body = list(triples)
        if self.nquads:
            self._buffer.extend(f"{graph} <{PROV}{p}> {t} .\n" for p, t in stamps)
            self._buffer.extend(f"{s} {p} {o} {graph} .\n" for s, p, o in body)
        else:
            self._buffer.extend(
                f"{graph} prov:{p} {t.replace(f'<{XSD}dateTime>', 'xsd:dateTime')} .\n"
                for p, t in stamps
            )
            inner = " ".join(f"{s} {p} {o} ." for s, p, o in body)
            self._buffer.append(f"{graph} {{ {inner} }}\n")
        self.elements += 1
        self.triples += len(body)
        self.quads += len(body) + len(stamps)
        if len(self._buffer) >= self._FLUSH_EVERY:
            self._flush()

    @staticmethod
    def _stamps(time: int, end: int | None) -> list[tuple[str, str]]:
        if end is None:
            return [("generatedAtTime", datetime_literal(time))]
        return [("startedAtTime", datetime_literal(time)), ("endedAtTime", datetime_literal(end))]

    def _flush(self) -> None:
        self._file.write("".join(self._buffer))
        self._buffer.clear()

    def close(self) -> None:
        self._flush()
        self._file.close()


class DatasetWriter:
    """Lays out one generated workload: ``streams/``, ``background/``, ``queries/`` and the
    manifest, so every generator module only says what its domain contains."""

    def __init__(self, out: Path, workload: str, scale: int, seed: int, compress: bool) -> None:
        self.out = out
        self.compress = compress
        self._head = (workload, scale, seed)
        self._streams: dict[str, tuple[str, StreamWriter]] = {}
        self._background: list[BackgroundFile] = []
        self._variants: list[Variant] = []
        for folder in ("streams", "background", "queries"):
            (out / folder).mkdir(parents=True, exist_ok=True)

    def stream(self, name: str, stream_iri: str, filename: str) -> StreamWriter:
        suffix = ".gz" if self.compress else ""
        writer = StreamWriter(self.out / "streams" / (filename + suffix), self.compress)
        self._streams[name] = (stream_iri, writer)
        return writer

    def background(self, filename: str, triples: Iterable[Triple], graph: str | None = None) -> str:
        path = self.out / "background" / filename
        count = 0
        with _open(path, compress=False) as file:
            for s, p, o in triples:
                file.write(f"{s} {p} {o} .\n")
                count += 1
        relative = f"background/{filename}"
        self._background.append(BackgroundFile(relative, count, graph))
        return relative

    def query(
        self,
        name: str,
        text: str | None,
        background: tuple[str, ...] = (),
        x: float | None = None,
        params: dict[str, object] | None = None,
    ) -> None:
        """A query file (none for pure ingest) and the variant that measures it."""
        relative = None
        if text is not None:
            relative = f"queries/{name}.rq"
            (self.out / relative).write_text(text.strip() + "\n")
        self._variants.append(Variant(name, relative, background, x, dict(params or {})))

    def finish(self) -> Manifest:
        streams = []
        for name, (stream_iri, writer) in self._streams.items():
            writer.close()
            relative = str(writer.path.relative_to(self.out))
            streams.append(StreamFile(name, stream_iri, relative, writer.elements, writer.triples,
                                      writer.quads))
        workload, scale, seed = self._head
        manifest = Manifest(
            workload, scale, seed, tuple(streams), tuple(self._background), tuple(self._variants)
        )
        manifest.save(self.out)
        return manifest

