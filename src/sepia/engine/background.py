"""Background data, dictionary-encoded once and indexed, shared by every query of a run.

The pyoxigraph store is kept as well: ``Fallback`` sub-patterns are evaluated over it. Under
RDFS entailment (semantics.md) every graph is read as its own closure under the background's
schema: ``entailed()`` gives that view once, with the schema for closing stream elements.

Static graphs are encoded in bulk: pyoxigraph writes each graph as N-Triples text and the
columnar reader's term cutter (``columnar.frontend.ntriples_ids``, handed down by the
session, which sits above both) encodes its distinct terms, with no term object per
triple (a graph of a few hundred triples is encoded from pyoxigraph's terms instead:
``SMALL_TEXT``). A graph is kept as id columns, which the columnar core joins as they are, and
indexed (``TripleIndex``) only when a row-engine operator first reads it. On W10's
1,000,000-triple background that took the encoding from 5.1 to 2.4 s of CPU.

Only the triples whose predicate some registered query can read are encoded (``select``,
asked by the session as each query is registered, before it is planned: ``read_predicates``
of the query; a variable predicate, a negated property set or DESCRIBE read them all):
a pattern with a constant predicate matches no other triple, so the answers are the same.
W10's query reads 2 of its background's 6 predicates. The text is cut as pyoxigraph
writes it, block by block, so a large graph's text is never held whole.

A SPAseq query's background triples are joined with its events by subject (``GRAPH``
inside a GPM): its predicates are only noted (``select(..., looked_up=True)``) and the
columnar core asks ``about`` the subjects each batch's events bind, found in the store's
indexes and encoded then (unless the graphs hold fewer than ``LOOKUPS_FROM`` triples of
those predicates: a small graph is encoded whole at once, which costs less than looking
up each of its subjects); a graph is encoded whole only if something reads it whole
(``triples``, ``graph``: the row engine), after the ids were pinned (``late``). W10's
stream names 3,333 of its 1,000,000-triple background's 249,990 card ids. The lookups
kept (``Lookups``) go with the terms the dictionary forgets.

Time-varying graphs (RSP-QL Definition 10, ``prov:generatedAtTime`` versions, read by
:class:`sepia.rdf.background.Background` exactly as the reference reads them) are
snapshots: G(t) is G's unversioned triples plus the latest version stamped at or before t.
Each G(t) is indexed the first time some evaluation reads it and kept (one index per version),
so ``graph(name, t)`` is a lookup; ``state(t)`` names the versions in force (cache keys).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import pyoxigraph as ox

from sepia.algebra.path import Link, NegatedSet, NestedTest, ZeroOrMore, ZeroOrOne
from sepia.algebra.pattern import PathPattern, TriplePattern
from sepia.algebra.query import Describe, Dialect, Entailment, Query
from sepia.algebra.scope import nodes
from sepia.engine.graph import TripleIndex
from sepia.rdf.background import GENERATED_AT, TimeVaryingGraph
from sepia.rdf.background import Background as Versions
from sepia.rdf.dictionary import Dictionary
from sepia.reasoning.entailment import rdfs_closure, schema_of

GraphName = ox.NamedNode | None
Columns = tuple[np.ndarray, np.ndarray, np.ndarray]
"""A graph's triples as s, p and o id columns (int64, one row per distinct triple)."""
TextIds = Callable[..., tuple[np.ndarray, ...] | None]
"""N-Triples lines and a dictionary -> s, p and o id columns (and more), or None where the
cutter does not take the lines (``columnar.frontend.ntriples_ids``)."""
TEXT_BLOCK = 1 << 22
"""Bytes of a graph's N-Triples text encoded at once (whole lines)."""
SMALL_TEXT = 1 << 16
"""A graph whose whole text is shorter is encoded from pyoxigraph's terms: loading the
cutter's libraries (polars: 0.3 s of CPU) costs more than cutting saves on a few hundred
triples, and most runs' background is that small."""

LOOKUPS_FROM = 100_000
"""Static triples of the predicates a query reads by subject from which they are looked
up subject by subject (``about``) rather than encoded whole: encoding costs about 2.4 us a
triple (W10's 1,000,000), a lookup about 50 us a subject (W6's 13,372 card triples: 0.35 s
of lookups for its 6,700 cards, 0.03 s encoded whole)."""


@dataclass(slots=True)
class Background:
    """Background graphs by name (None: the default graph) as id columns, indexed on first
    read; the graphs with versions in ``varying``."""

    store: ox.Store
    dictionary: Dictionary
    columns: dict[GraphName, Columns] = field(default_factory=dict)
    """The static graphs' triples encoded so far (``read``)."""
    static: frozenset[GraphName] = frozenset()
    """The static graphs that hold triples (whatever their predicates)."""
    read: frozenset[str] | None = None
    """The predicate IRIs whose triples ``columns`` holds (None: every triple)."""
    wanted: frozenset[str] | None = frozenset()
    """The predicate IRIs queries read by lookups (``select(..., looked_up=True)``): encoded
    whole only when something reads a graph whole (``triples``, ``graph``)."""
    late: bool = False
    """Whether ``columns`` holds triples encoded after the ids were pinned (then walked)."""
    _lookups: Lookups | None = None
    """``about``'s lookups, made on the first."""
    cut: TextIds | None = None
    graphs: dict[GraphName, TripleIndex] = field(default_factory=dict)
    """The static graphs a row-engine operator has read, indexed."""
    schema: frozenset[ox.Triple] | None = None
    """The RDFS schema every graph is closed under (None: no entailment)."""
    varying: dict[GraphName, TimeVaryingGraph] = field(default_factory=dict)
    _versions: dict[tuple[GraphName, int], TripleIndex] = field(default_factory=dict)
    _entailed: Background | None = None

    @classmethod
    def encode(
        cls, store: ox.Store | None, dictionary: Dictionary, cut: TextIds | None = None,
        predicates: frozenset[str] | None = None,
    ) -> Background:
        """Encode the graphs of ``store`` (none when there is no background data), by ``cut``
        in bulk where no graph has versions: only the triples of ``predicates`` (None: all;
        ``select`` encodes more); the versions of time-varying graphs are encoded when first
        read."""
        store = store if store is not None else ox.Store()
        if cut is not None and not any(store.quads_for_pattern(None, GENERATED_AT, None)):
            graphs = [ox.DefaultGraph(), *store.named_graphs()]  # no versions: all static
            static = frozenset(_name(g) for g in graphs if _holds_triples(store, g))
            background = cls(store, dictionary, static=static, read=frozenset(), cut=cut)
            background.select(predicates)
            return background
        split = Versions.of(store)
        background = cls(store, dictionary, varying={_name(g): v for g, v in split.varying.items()})
        background._index({_name(g): ts for g, ts in split.static.items()})
        return background

    def select(self, predicates: frozenset[str] | None, looked_up: bool = False) -> None:
        """Encode the static graphs' triples of these predicate IRIs (None: all) that are
        not encoded yet; a row-engine index of a graph that grew is made again when read.
        ``looked_up``: the query reads them by subject (``about``): they are only noted, and
        encoded if something reads a graph whole; unless the graphs hold fewer than
        ``LOOKUPS_FROM`` triples of them, which are encoded at once."""
        if looked_up and self.read is not None and not _fewer(self.store, predicates, LOOKUPS_FROM):
            wanted = self.wanted
            self.wanted = None if predicates is None or wanted is None else wanted | predicates
            return
        read = self.read
        if read is None or (predicates is not None and predicates <= read):
            return
        assert self.cut is not None
        keep = None if predicates is None else {f"<{p}>" for p in predicates - read}
        skip = {f"<{p}>" for p in read}
        for name in self.static:
            graph = ox.DefaultGraph() if name is None else name
            found = self._read(graph, self.cut, keep, skip)
            if found is not None:
                held = self.columns.get(name)
                parts = found if held is None else [held, *found]
                self.columns[name] = _concatenated(parts)
                self.graphs.pop(name, None)
        self.read = None if predicates is None else read | predicates

    def encoded(self, predicates: frozenset[str]) -> bool:
        """Whether the static graphs' triples of these predicates are all in ``columns``."""
        return self.read is None or predicates <= self.read

    def _settle(self) -> None:
        """Encode what queries noted for lookups before a graph is read whole: encoded
        after the ids were pinned, the columns are walked by collections from then on."""
        wanted, read = self.wanted, self.read
        if read is not None and (wanted is None or not wanted <= read):
            self.late = True
            self.select(wanted)

    def about(self, name: GraphName, subjects: np.ndarray, predicates: tuple[int, ...]) -> Columns:
        """The triples of static graph ``name`` whose subject is one of ``subjects`` (ids,
        sorted and distinct) and predicate one of ``predicates`` (ids), grouped by subject
        in that order; looked up in the store's indexes the first time a subject is asked
        and encoded then: a stream joining a few of a large background's subjects encodes
        those alone."""
        if self._lookups is None:
            self._lookups = Lookups(self.dictionary)
        found = self._lookups.found.setdefault((name, predicates), Found())
        new = [s for s in subjects.tolist() if s not in found.known]
        if new:
            graph = ox.DefaultGraph() if name is None else name
            decode, encode = self.dictionary.decode, self.dictionary.encode
            iris = [(p, iri) for p in predicates if isinstance(iri := decode(p), ox.NamedNode)]
            find = self.store.quads_for_pattern
            triples = []
            for s in new:
                subject = decode(s)
                if isinstance(subject, ox.NamedNode | ox.BlankNode):
                    triples += [(s, p, encode(q.object))
                                for p, iri in iris for q in find(subject, iri, None, graph)]
            found.add(new, _columns(triples))
        return found.of(subjects)

    def _read(
        self, graph: ox.NamedNode | ox.DefaultGraph, cut: TextIds,
        keep: set[str] | None, skip: set[str],
    ) -> list[Columns] | None:
        """Encode the triples of a static graph whose predicate is in ``keep`` (None: any)
        and not in ``skip``, from its N-Triples text block by block; from pyoxigraph's terms
        when ``cut`` does not take a block (blank nodes, escapes). None: there are none."""
        blocks = _Blocks(lambda lines: cut(_kept(lines, keep, skip), self.dictionary))
        self.store.dump(blocks, format=ox.RdfFormat.N_TRIPLES, from_graph=graph)  # type: ignore[arg-type]
        blocks.close()
        if blocks.refused:
            quads = self.store.quads_for_pattern(None, None, None, graph)
            triples = [q.triple for q in quads if _taken(q.predicate, keep, skip)]
            blocks.parts = [_columns(self.encode_triples(triples))] if triples else []
        return [p for p in blocks.parts if len(p[0])] or None

    def _index(self, graphs: dict[GraphName, list[ox.Triple]]) -> None:
        for name, triples in graphs.items():
            if triples:
                self.columns[name] = _columns(self.encode_triples(triples))
        self.static = frozenset(self.columns)

    def encode_triples(self, triples: Iterable[ox.Triple]) -> list[tuple[int, int, int]]:
        """Triples as ids, closed under the schema first when entailment is on."""
        if self.schema is not None:
            triples = rdfs_closure(triples, self.schema)
        encode = self.dictionary.encode
        return [(encode(t.subject), encode(t.predicate), encode(t.object)) for t in triples]

    def entailed(self) -> Background:
        """The same background read under RDFS entailment (built once): the schema is that
        of the unversioned triples; each G(t) is closed under it and its own schema."""
        if self.schema is not None:
            return self
        if self._entailed is None:
            split = Versions.of(self.store)
            static = {_name(g): ts for g, ts in split.static.items()}
            schema = frozenset(schema_of(t for ts in static.values() for t in ts))
            closed = Background(ox.Store(), self.dictionary, schema=schema, varying=self.varying)
            closed._index(static)
            closed.store.extend(
                ox.Quad(t.subject, t.predicate, t.object, ox.DefaultGraph() if g is None else g)
                for g, ts in static.items()
                for t in rdfs_closure(ts, schema)
            )
            self._entailed = closed
        return self._entailed

    @property
    def names(self) -> tuple[ox.NamedNode, ...]:
        """The named graphs (time-varying ones included, whatever their content at t)."""
        return tuple(g for g in [*self.static, *self.varying] if g is not None)

    def state(self, t: int) -> tuple[int, ...]:
        """Which version of each time-varying graph holds at t (equal states: same data).
        Asked per event matched: without time-varying graphs it is () at once."""
        if not self.varying:
            return ()
        return tuple(g.version_at(t) for g in self.varying.values())

    def version(self, name: GraphName, t: int) -> int | None:
        """The version of graph ``name`` in force at t (None: the graph has no versions)."""
        graph = self.varying.get(name)
        return None if graph is None else graph.version_at(t)

    def pinned(self) -> tuple[object, ...]:
        """The static graphs (columns and indexes): encoded before any element, their ids
        are all pinned, so a collection of unused terms need not walk them; once some were
        encoded later (``late``) the columns are walked (numpy arrays, read whole), the
        indexes, which hold the same ids, are not."""
        return (self.graphs,) if self.late else (self.columns, self.graphs)

    def graph(self, name: GraphName, t: int = 0) -> TripleIndex:
        """A background graph as it is at t (an empty one when there is no such graph)."""
        n = self.version(name, t)
        if n is None:
            self._settle()
            found = self.graphs.get(name)
            if found is None:
                columns = self.columns.get(name)
                if columns is None:
                    return TripleIndex()
                s, p, o = (column.tolist() for column in columns)
                found = self.graphs[name] = TripleIndex(zip(s, p, o, strict=True))
            return found
        found = self._versions.get((name, n))
        if found is None:
            found = TripleIndex(self.encode_triples(self.varying[name].at(t)))
            self._versions[(name, n)] = found
        return found

    def triples(self, name: GraphName, t: int = 0) -> Columns:
        """A background graph as it is at t, as id columns (the columnar core's joins)."""
        if self.version(name, t) is None:
            self._settle()
            return self.columns.get(name) or _columns([])
        return _columns(self.graph(name, t).triples())

    def empty(self, name: GraphName, t: int = 0) -> bool:
        """Whether the graph holds no triple at t."""
        if self.version(name, t) is None:
            return name not in self.static
        return not self.graph(name, t)

class Lookups:
    """``Background.about``'s lookups: per graph and predicates, the triples found
    (``Found``). A cache the dictionary tells of the ids it forgets (an ``IdCache``, which
    a collection does not walk): a subject's triples go with the subject or any of their
    objects and are looked up again if asked, so it holds the subjects the live state
    names, not every subject a long stream ever named."""

    def __init__(self, dictionary: Dictionary) -> None:
        self.found: dict[tuple, Found] = {}
        dictionary.watch(self)

    def forget_ids(self, dropped: set[int]) -> None:
        for found in self.found.values():
            found.forget(dropped)


class Found:
    """The triples looked up so far, as id columns sorted by subject (each subject's in
    the order the store gave them), and the subjects looked up, those with no triple too:
    a batch's subjects select their rows by bisection, with no Python object per triple
    (a list of tuples per batch was an eighth of W6's engine time)."""

    def __init__(self) -> None:
        self.known: set[int] = set()
        nothing = np.empty(0, dtype=np.int64)
        self.s, self.p, self.o = nothing, nothing, nothing

    def add(self, subjects: list[int], triples: Columns) -> None:
        """Keep the triples found about ``subjects`` (looked up once each)."""
        self.known.update(subjects)
        s, p, o = (np.concatenate(pair) for pair in zip((self.s, self.p, self.o), triples,
                                                        strict=True))
        order = np.argsort(s, kind="stable")
        self.s, self.p, self.o = s[order], p[order], o[order]

    def of(self, subjects: np.ndarray) -> Columns:
        """The triples about ``subjects`` (sorted, distinct, all known), grouped by subject."""
        starts = np.searchsorted(self.s, subjects, side="left")
        counts = np.searchsorted(self.s, subjects, side="right") - starts
        rows = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
        return self.s[rows], self.p[rows], self.o[rows]

    def forget(self, dropped: set[int]) -> None:
        """Drop the subjects ``dropped`` names and those with a triple whose object it
        names (they are looked up again if asked)."""
        gone = np.fromiter(dropped, dtype=np.int64, count=len(dropped))
        stale = set(self.s[np.isin(self.o, gone)].tolist()) | (self.known & dropped)
        if not stale:
            return
        self.known -= stale
        kept = ~np.isin(self.s, np.fromiter(stale, dtype=np.int64, count=len(stale)))
        self.s, self.p, self.o = self.s[kept], self.p[kept], self.o[kept]


def read_predicates(query: Query) -> frozenset[str] | None:
    """The predicate IRIs of every triple pattern and property path of ``query`` (None: it
    may read any triple: a variable predicate, a negated property set, a nested path's
    zero-length step, DESCRIBE, RDFS entailment): no pattern of it matches a triple of
    another predicate."""
    if isinstance(query.form, Describe) or query.entailment is not Entailment.NONE:
        return None
    found: set[str] = set()
    for pattern in nodes(query, TriplePattern):
        if not isinstance(pattern.predicate, ox.NamedNode):
            return None
        found.add(pattern.predicate.value)
    for path in nodes(query, PathPattern):
        if nodes(path, NegatedSet) or _zero_length_nested(path):
            return None
        found.update(link.iri.value for link in nodes(path, Link))
    return frozenset(found)


def read_by(queries: Iterable[Query], rdfs: bool = False) -> frozenset[str] | None:
    """The predicate IRIs the queries read (``read_predicates``; None: any, as under RDFS
    entailment, ``rdfs``, which reads the schema's): all a background store needs to hold
    for them (``load_background``'s ``predicates``)."""
    found: set[str] = set()
    for query in queries:
        read = None if rdfs else read_predicates(query)
        if read is None:
            return None
        found |= read
    return frozenset(found)


def loaded_for(queries: Iterable[Query], rdfs: bool = False) -> frozenset[str] | None:
    """The predicate IRIs a background store must hold for the queries (``load_background``'s
    ``predicates``): those they read (``read_by``), or None (all) where a path can take a
    zero-length step (``*``, ``?``): pyoxigraph, evaluating it over the store, relates every
    node of the graph to itself, and a node may appear in triples of other predicates only."""
    given = list(queries)
    if any(nodes(q, ZeroOrMore) or nodes(q, ZeroOrOne) for q in given):
        return None
    return read_by(given, rdfs)


def _zero_length_nested(path: PathPattern) -> bool:
    """Whether a path the engine evaluates itself (one with a nested test) can take a
    zero-length step (``*``, ``?``): that relates every node of the graph to itself, the
    subjects and objects of triples of any predicate."""
    return bool(nodes(path, NestedTest)) and bool(nodes(path, ZeroOrMore) or nodes(path, ZeroOrOne))


def looked_up(query: Query) -> bool:
    """Whether the query's background triples are joined with its events by subject: a
    SPAseq query's GPMs, whose ``GRAPH`` parts the columnar core looks up for the subjects
    the events bind (``Background.about``) instead of encoding the graphs whole."""
    return query.dialect is Dialect.SPASEQ


class _Blocks:
    """A file for ``Store.dump``: the text it is given, cut into blocks of whole lines of
    about ``TEXT_BLOCK`` bytes, each handed to ``take`` as it fills (None from ``take``: it
    does not take the text, and the rest is ignored)."""

    def __init__(self, take: Callable[[list[str]], tuple[np.ndarray, ...] | None]) -> None:
        self.take = take
        self.held: list[bytes] = []
        self.size = 0
        self.parts: list[Columns] = []
        self.refused = False

    def write(self, data: bytes) -> int:
        if not self.refused:
            self.held.append(data)
            self.size += len(data)
            if self.size >= TEXT_BLOCK:
                self._pass(last=False)
        return len(data)

    def flush(self) -> None:
        """Blocks are handed on as they fill, not when pyoxigraph flushes."""

    def close(self) -> None:
        """The text ended: the lines held are the last block, or, when they are the whole
        text and it is small (``SMALL_TEXT``), refused without asking ``take``."""
        if not self.refused and not self.parts and self.size < SMALL_TEXT:
            self.refused, self.held = True, []
        elif not self.refused:
            self._pass(last=True)

    def _pass(self, last: bool) -> None:
        text = b"".join(self.held)
        end = len(text) if last else text.rfind(b"\n") + 1
        self.held = [text[end:]]
        self.size = len(text) - end
        if end:
            found = self.take(text[:end].decode().splitlines())
            if found is None:
                self.refused, self.held = True, []
            else:
                self.parts.append((found[0], found[1], found[2]))


def _kept(lines: list[str], keep: set[str] | None, skip: set[str]) -> list[str]:
    """The N-Triples lines whose predicate (the second term: a subject has no space) is
    in ``keep`` (None: any) and not in ``skip``."""
    if keep is None and not skip:
        return lines
    if keep is None:
        return [line for line in lines if line.split(" ", 2)[1] not in skip]
    return [line for line in lines if line.split(" ", 2)[1] in keep]


def _taken(predicate: ox.NamedNode, keep: set[str] | None, skip: set[str]) -> bool:
    text = f"<{predicate.value}>"
    return (keep is None or text in keep) and text not in skip


def _fewer(store: ox.Store, predicates: frozenset[str] | None, count: int) -> bool:
    """Whether the store's graphs hold fewer than ``count`` triples of ``predicates`` (None:
    any), counted by pyoxigraph up to ``count`` (a Python object per triple is slower)."""
    if predicates is None:
        return False
    values = " ".join(f"<{p}>" for p in sorted(predicates))
    quads = f"{{ GRAPH ?g {{ ?s ?p ?o }} }} UNION {{ ?s ?p ?o }} VALUES ?p {{ {values} }}"
    beyond = f"SELECT * WHERE {{ {quads} }} OFFSET {count - 1} LIMIT 1"
    return not store.query(f"ASK {{ {{ {beyond} }} }}")


def _holds_triples(store: ox.Store, graph: ox.NamedNode | ox.BlankNode | ox.DefaultGraph) -> bool:
    return next(iter(store.quads_for_pattern(None, None, None, graph)), None) is not None


def _concatenated(parts: list[Columns]) -> Columns:
    """Id columns one after another."""
    if len(parts) == 1:
        return parts[0]
    s, p, o = (np.concatenate(column) for column in zip(*parts, strict=True))
    return s, p, o


def _columns(triples: list[tuple[int, int, int]]) -> Columns:
    """Encoded triples as id columns."""
    spo = np.array(triples, dtype=np.int64).reshape(-1, 3)
    return spo[:, 0].copy(), spo[:, 1].copy(), spo[:, 2].copy()


def _name(graph: object) -> GraphName:
    """The engine's name of a graph: None for the default graph."""
    return None if isinstance(graph, ox.DefaultGraph) else graph  # type: ignore[return-value]
