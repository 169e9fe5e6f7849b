"""Background data (`--data [GRAPH=]PATH`) loaded into a pyoxigraph Store the engine queries.

Every syntax pyoxigraph reads, chosen by extension (through a trailing `.gz`). A triples
file goes to the default graph, or to GRAPH when one is given; TriG and N-Quads keep their
named graphs (with GRAPH given, their default-graph triples go to GRAPH). Relative IRIs
resolve against the file's own URI. A syntax error, or damaged gzip data, names the file
and line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pyoxigraph as ox

from sepia.io.chunks import syntax_message
from sepia.io.errors import InputError
from sepia.io.sources import LOST, DamagedInput, base_extension, open_binary

EXTRA_EXTENSIONS = {"nquads": ox.RdfFormat.N_QUADS, "owl": ox.RdfFormat.RDF_XML}


def background_format(path: Path) -> ox.RdfFormat:
    """The RDF syntax of a background file, from its extension."""
    extension = base_extension(path.name)
    found = EXTRA_EXTENSIONS.get(extension) or ox.RdfFormat.from_extension(extension)
    if found is None:
        raise InputError(str(path), 1, f"cannot tell the RDF syntax of extension {extension!r}")
    return found


def load_background(paths: Iterable[tuple[str | None, Path]]) -> ox.Store:
    """An in-memory store holding every (graph, path) pair's triples and quads."""
    store = ox.Store()
    for graph, path in paths:
        store.extend(_quads(path, ox.NamedNode(graph) if graph else None))
    return store


def _quads(path: Path, graph: ox.NamedNode | None) -> Iterator[ox.Quad]:
    syntax = background_format(path)
    with open_binary(path) as binary:
        try:
            quads = ox.parse(binary, format=syntax, base_iri=path.resolve().as_uri())
            if graph is None:
                yield from quads
                return
            for quad in quads:
                if isinstance(quad.graph_name, ox.DefaultGraph):
                    yield ox.Quad(quad.subject, quad.predicate, quad.object, graph)
                else:
                    yield quad
        except SyntaxError as error:
            raise InputError(str(path), error.lineno or 1, syntax_message(error)) from None
        except DamagedInput as damage:
            raise InputError(str(path), damage.line, damage.reason.removesuffix(LOST)) from None
