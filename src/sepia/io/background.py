"""Background data (`--data [GRAPH=]PATH`) loaded into a pyoxigraph Store the engine queries.

Every syntax pyoxigraph reads, chosen by extension (through a trailing `.gz`). A triples
file goes to the default graph, or to GRAPH when one is given; TriG and N-Quads keep their
named graphs (with GRAPH given, their default-graph triples go to GRAPH). Relative IRIs
resolve against the file's own URI. A syntax error, or damaged gzip data, names the file
and line.

A run that knows its queries names the predicates they read (``predicates``): in a large
N-Triples or Turtle file, a line that is one whole triple of another predicate, written
the way N-Triples writes it, is then blanked before pyoxigraph parses it (``Skipping``).
A query whose patterns all have constant predicates matches no such triple, so the answers
are the same. W10's queries read 2 of its background's 6 predicates: its 10,000,000 triples
loaded in 22 s instead of 39 s. Lines of any other shape are parsed as they are (prefixed
names, statements over several lines, a line out of shape that pyoxigraph reports), a
blanked line still counts (errors name the same line), the first whole triple of each file
is kept (a graph holding only other predicates still exists) and so is every
``prov:generatedAtTime`` (versions of time-varying graphs).
"""

from __future__ import annotations

from collections.abc import Collection, Generator, Iterable
from contextlib import closing
from pathlib import Path
from typing import BinaryIO

import pyoxigraph as ox

from sepia.io.ahead import read_ahead
from sepia.io.chunks import syntax_message
from sepia.io.errors import InputError
from sepia.io.sources import LOST, DamagedInput, base_extension, open_binary
from sepia.rdf.background import GENERATED_AT

EXTRA_EXTENSIONS = {"nquads": ox.RdfFormat.N_QUADS, "owl": ox.RdfFormat.RDF_XML}
TRIPLE_LINES = frozenset({ox.RdfFormat.N_TRIPLES, ox.RdfFormat.TURTLE})
"""The syntaxes whose files may hold one triple a line, each in the default graph or GRAPH
(in TriG and N-Quads a line also names its graph: they are parsed whole)."""
SKIPPING_FROM = 1 << 22
"""Bytes of a file from which lines of unread predicates are blanked: below, the block
reader's libraries (polars, pyarrow) cost more to load than parsing those lines does."""
SKIP_BLOCK = 1 << 24
"""Bytes of text blanked at once (whole lines), on a thread while pyoxigraph loads the
block before."""
_IRI = r'<[A-Za-z][A-Za-z0-9+.\-]*:[^<>"{}|^`\\\x00-\x20]*>'
_BLANK = r"_:[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?"
_LITERAL = (r'"(?:[^"\\\n\r]|\\[tbnrf"\'\\]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*"'
            rf"(?:@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*|\^\^{_IRI})?")
WHOLE_TRIPLE = rf"^(?:{_IRI}|{_BLANK}) {_IRI} (?:{_IRI}|{_BLANK}|{_LITERAL}) \.\r?\n$"
"""A line that is one triple and nothing else, its terms one space apart, every IRI
absolute and unescaped (so equal to the predicate it names), ASCII blank node labels:
N-Triples as pyoxigraph and most writers write it. In Turtle no such line can be the middle
of a statement (it would be a triple after a triple with no ``.`` or ``;``), only of a long
string, so the blanking stops at the first ``\"\"\"`` or ``\'\'\'``."""


def background_format(path: Path) -> ox.RdfFormat:
    """The RDF syntax of a background file, from its extension."""
    extension = base_extension(path.name)
    found = EXTRA_EXTENSIONS.get(extension) or ox.RdfFormat.from_extension(extension)
    if found is None:
        raise InputError(str(path), 1, f"cannot tell the RDF syntax of extension {extension!r}")
    return found


Source = str | Path | tuple[str | None, str | Path]
"""A file (`str` or `Path`), or a (graph IRI or None, file) pair."""


def load_background(
    paths: str | Path | Iterable[Source], predicates: Collection[str] | None = None
) -> ox.Store:
    """An in-memory store holding the triples and quads of one file or of many.

    A (graph, file) pair's triples go to that graph; a bare file's to the default graph
    (TriG and N-Quads keep their named graphs). ``predicates``: the IRIs of the only
    predicates the queries that will read the store read (None: any); large N-Triples and
    Turtle files may then leave out triples of others (see the module), so a query
    registered later must read no other (``sepia.engine.background.loaded_for``).

    >>> len(load_background("examples/e1-shops-coupons/background.ttl"))
    2
    >>> store = load_background([("http://example.org/map", "examples/e2-subway-delays/"
    ...                           "background.ttl")])
    >>> {str(quad.graph_name) for quad in store}
    {'<http://example.org/map>'}
    """
    store = ox.Store()
    keep = None if predicates is None else frozenset({*predicates, GENERATED_AT.value})
    for source in [paths] if isinstance(paths, str | Path) else paths:
        graph, path = source if isinstance(source, tuple) else (None, source)
        _load(store, Path(path), ox.NamedNode(graph) if graph else None, keep)
    return store


def _load(
    store: ox.Store, path: Path, graph: ox.NamedNode | None, keep: frozenset[str] | None
) -> None:
    """Parse ``path`` into ``store`` inside pyoxigraph (no Python object per quad: half the
    time of parsing to quads and adding them on a 1,000,000-triple file). ``Store.load``,
    not ``bulk_load``: into a store in memory it took 39 s for W10's 10,000,000 triples
    where ``bulk_load`` took 51 s (2.7 against 3.3 s at 1,000,000), with less memory."""
    syntax = background_format(path)
    large = syntax in TRIPLE_LINES and path.stat().st_size >= SKIPPING_FROM
    skip = keep if large else None
    with open_binary(path) as binary, closing(_text(binary, skip)) as text:
        try:
            store.load(text, format=syntax, base_iri=path.resolve().as_uri(),  # type: ignore[arg-type]
                       to_graph=graph)
        except SyntaxError as error:
            raise InputError(str(path), error.lineno or 1, syntax_message(error)) from None
        except DamagedInput as damage:
            raise InputError(str(path), damage.line, damage.reason.removesuffix(LOST)) from None


def _text(binary: BinaryIO, skip: frozenset[str] | None) -> BinaryIO | Skipping:
    """The file's text as pyoxigraph reads it: whole, or with lines skipped (``Skipping``)."""
    return binary if skip is None else Skipping(binary, skip)


class Skipping:
    """A triples file's text in which each whole-triple line (``WHOLE_TRIPLE``) of a
    predicate not in ``keep`` is blank (its line break kept), but the first."""

    def __init__(self, binary: BinaryIO, keep: frozenset[str]) -> None:
        self.blocks = read_ahead(_blanked(binary, [f"<{p}>" for p in keep]),
                                 "sepia-background-reader")  # fmt: skip
        self.text = b""
        self.at = 0

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (all of a block with a negative one): the rest of the
        block at hand, or of the next; no bytes at the end."""
        if self.at >= len(self.text):
            self.text, self.at = next(self.blocks, b""), 0
        given = self.text[self.at:] if size < 0 else self.text[self.at:self.at + size]
        self.at += len(given)
        return given

    def close(self) -> None:
        """Stop the reading thread (a syntax error ends the load early)."""
        self.blocks.close()


def _blanked(binary: BinaryIO, keep: list[str]) -> Generator[bytes, None, None]:
    """The text in blocks of whole lines, lines of other predicates blanked, up to the
    first long string (Turtle's triple quotes: lines inside it are not triples)."""
    carried, first, whole = b"", True, True
    while block := binary.read(SKIP_BLOCK):
        text = carried + block
        end = text.rfind(b"\n") + 1
        carried = text[end:]
        whole = whole and b'"""' not in text and b"'''" not in text
        if end and whole:
            blanked, first = _blank(text[:end], keep, first)
            yield blanked
        elif end:
            yield text[:end]
    if carried:
        yield carried


def _blank(text: bytes, keep: list[str], first: bool) -> tuple[bytes, bool]:
    """Blank the whole-triple lines of ``text`` (whole lines) whose predicate is not in
    ``keep``; keep the first whole-triple line if ``first`` (and say whether it is still
    to come). Text that is not UTF-8 is left for pyoxigraph to report."""
    import numpy as np
    import polars as pl
    import pyarrow as pa

    try:
        text.decode()
    except UnicodeDecodeError:
        return text, first
    starts = np.flatnonzero(np.frombuffer(text, dtype=np.uint8) == ord("\n")) + 1
    offsets = np.concatenate(([0], starts)).astype(np.int64)
    lines = pl.Series(pa.LargeStringArray.from_buffers(
        len(starts), pa.py_buffer(offsets), pa.py_buffer(text)))  # no copy of the text
    whole = lines.str.contains(WHOLE_TRIPLE)
    blank = whole & ~lines.str.split_exact(" ", 2).struct.field("field_1").is_in(keep)
    if first and whole.any():
        blank = blank.scatter(whole.arg_true()[0], False)
        first = False
    kept = pl.select(pl.when(blank).then(pl.lit("\n")).otherwise(lines)).to_series()
    return kept.str.join("").item().encode(), first
