"""The incremental engine (`sepia.engine`) behind the engine protocol: the job's default.

Per key, a `sepia.runtime.local.Session` running the unit's query. A PARTITION BY query is
one key, or one per bucket of its values (`job.routed_rows`): a bucket's engine (the row
engine's `PartitionedQuery` or the columnar core's `PartitionedSequence`) owns the values
of its bucket, and each result carries its place among all buckets'
results (`Step.order`): the instant whose step made it (the end of input last), then
`partition.result_order`, which is how one engine holding every partition orders them. Its
state leaves every step as rows (architecture principle 3): the query's snapshot tables
(windows, runs, previous answer, clock) as JSON documents, the dictionary (a map from
blocks of ids to their terms: a step rewrites the blocks holding terms it added or the
session forgot), the
elements received but not yet released (stamped after the horizon: a later batch may still
bring earlier ones; in blocks, `held`), and a version row (a random token, the horizon,
the time kind, the highest term id given).

The key's session forgets the terms no state holds any more, as a local one does
(`sepia.engine.forgetting`); the stored dictionary follows it (`StoredTerms`), so the state
store holds the live windows' and runs' terms, not every term the key ever saw. A session
restored from rows takes up the ids where the stored highest id left them (ids are never
given twice), so it allocates, and labels fresh blank nodes, as the uninterrupted one. The
terms a session holds before its first element (the background's, the query's constants)
are never stored: every session made for the unit gives them the same ids (encoded in the
same order, or copied from the worker's `PreparedBackground`), so a restored one holds them
already, and a key's first step with W6's background no longer writes its 100,068 terms
to the state store, an entry at a time.

Restoring a session from rows on every micro-batch would cost as much as the evaluation,
so the live session stays in this Python worker after a step, filed under the token it
wrote. The next step uses it only if the state it is given carries that token: a restarted
job, a replayed batch (Spark rolled the state back) or a key that moved to another worker
finds no live session for its token and restores one from the rows.

Time (engine_protocol): elements stamped at or before the horizon are pushed in time order;
then the session's watermark moves to the horizon, but not past the flush end of the
elements seen so far (the close of the last window holding the last element): the
reference's answer over a finite input stops there, and instants beyond it only exist once
a later element arrives. `final` flushes. `wake_at` is the next report instant the
schedule has before that flush end, or the time of the first element held back.

A key whose session runs on the columnar core (`Session.columnar`: `SEPIA_ENGINE_PATH`
decides, as for a local run; `sepia explain` says the path) gets the step's due elements as
one batch of columns (`columns.element_columns`, `Session.push_columns`), not an element at
a time: a unit on one key, a split unit's bucket, or a PARTITION BY query's bucket. A batch
does not tell which instant made a result; its time stands in for that instant in
`Step.order`, which only orders results of equal time, and all the results of one
evaluation come from one step. Queries that make blank nodes step by element
(`columns.labels_by_ids`: their labels follow the dictionary's ids).

Queries the engine refuses (`sepia.engine.Unsupported`, and query networks, which this
adapter does not host yet: one query per key) are found on the driver by `refusal`; the job
runs such a unit on the reference adapter (see `host.job_spec`).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import ClassVar, TypeAlias

import numpy as np
import pyoxigraph as ox

from sepia.algebra import dataset as ds
from sepia.algebra.query import Unsupported
from sepia.engine import ContinuousQuery
from sepia.engine.columnar.sequences import PartitionedSequence
from sepia.engine.forgetting import MIN_TERMS
from sepia.engine.hosts.engine_path import Engine
from sepia.engine.hosts.prepared import PreparedBackground
from sepia.engine.plan.partials import partial_query
from sepia.engine.plan.split import Split, split_of
from sepia.engine.query.partition import PartitionedQuery, RegisteredQuery, bucket_of
from sepia.rdf.dictionary import Dictionary
from sepia.rdf.results import Result
from sepia.rdf.terms import Term
from sepia.rdf.time import TimeKind
from sepia.runtime.local import Session
from sepia.runtime.spark.columns import element_columns, forget_after_batch, labels_by_ids
from sepia.runtime.spark.element_batches import ElementBatch
from sepia.runtime.spark.elements import ElementRow, to_element
from sepia.runtime.spark.engine_protocol import Step, StoredState
from sepia.runtime.spark.held import HeldBlocks, release, stored_blocks
from sepia.runtime.spark.result_lines import ordered_lines
from sepia.runtime.spark.units import Unit, parse_bucket_key

VERSION, TERMS, PARTS, HELD = "engine_version", "engine_term_blocks", "engine_parts", "held"
FLUSHED = 2**62
"""The instant of the end-of-input flush's results: after every real one."""
LIVE_SESSIONS = 4096
"""Live sessions kept per Python worker (least recently used dropped: restored if needed)."""

Live: TypeAlias = "tuple[Session, dict[str, str], StoredTerms, HeldBlocks]"
_LIVE: OrderedDict[str, Live] = OrderedDict()
"""Sessions left by the steps of this worker, by the token their state rows carry, each
with the snapshot parts and the terms its state holds (to write only what a step changes)
and the elements it holds back."""


def refusal(unit: Unit, background: ox.Store | PreparedBackground | None, rdfs: bool) -> str | None:
    """Why the incremental engine cannot run `unit` (None: it can)."""
    if len(unit.queries) > 1:
        names = ", ".join(q.name for q in unit.queries)
        return f"a query network ({names}): the incremental engine does not run networks yet"
    try:
        Session(background, rdfs=rdfs).register(unit.queries[0].query, unit.queries[0].name)
    except Unsupported as error:
        return str(error)
    return None


TERM_BLOCK = 1024
"""Term ids a `TERMS` entry holds: the ids from block * TERM_BLOCK on."""


class StoredTerms:
    """The dictionary a key's state store holds, kept in step with its session's
    dictionary: told of the ids the session forgets (an `IdCache`), a step rewrites the
    blocks of `TERM_BLOCK` ids holding terms added since the highest id stored or terms
    forgotten, and removes the blocks left empty.

    Why blocks: a map entry a term, each one request to Spark's state server, cost a
    live W1 at 20,000 elements/s about 1.1 s of its 1.6 s stateful step (about 30,000
    terms set and 30,000 removed a batch: its shoppers come and go); a block is one
    request for up to 1,024 terms. Ids up to `base`, the terms every session of the unit
    holds before its first element, are never stored (module docstring)."""

    def __init__(self, dictionary: Dictionary, base: int, last_id: int) -> None:
        self.base = base
        self.last_id = last_id
        self.forgotten: set[int] = set()
        dictionary.watch(self)

    def forget_ids(self, dropped: set[int]) -> None:
        self.forgotten |= {i for i in dropped if self.base < i <= self.last_id}

    def changes(self, dictionary: Dictionary) -> dict[str, tuple | None]:
        """The `TERMS` blocks to set and remove; from now on they are stored."""
        touched = {i // TERM_BLOCK for i in self.forgotten}
        if dictionary.last_id > self.last_id:
            first = max(self.last_id, self.base) + 1
            touched |= set(range(first // TERM_BLOCK, dictionary.last_id // TERM_BLOCK + 1))
        found = {str(block): self._block(dictionary, block) for block in sorted(touched)}
        self.last_id, self.forgotten = dictionary.last_id, set()
        return found

    def _block(self, dictionary: Dictionary, block: int) -> tuple[str] | None:
        """A block's entry: its ids and their terms as JSON (None: it holds none)."""
        first = max(block * TERM_BLOCK, self.base + 1)
        rows = dictionary.rows_between(first, (block + 1) * TERM_BLOCK)
        if not rows:
            return None
        ids, texts = zip(*rows, strict=True)
        return (json.dumps([ids, texts]),)


def term_rows(entries: Iterable[tuple]) -> list[tuple[int, str]]:
    """The (id, term) rows of a key's stored `TERMS` blocks (key, JSON) rows."""
    return [row for _, text in entries for row in zip(*json.loads(text), strict=True)]


PUSH_ELEMENTS = 100_000
"""A step hands the columnar core its due elements in slices of this many, collecting the
terms nothing holds between them: a finite file's one step gives a one-key unit every
element of its input (W7: 1,000,000), whose terms, all encoded at once, made the key's
dictionary, and its memory, as large as the input."""


class IncrementalEngine:
    """Runs a unit's query on `sepia.engine`, one live session per key and worker."""

    tables: ClassVar[Mapping[str, str]] = {
        VERSION: "token string, horizon bigint, kind string, last_id bigint",
    }
    maps: ClassVar[Mapping[str, str]] = {
        PARTS: "rows string", TERMS: "terms string", HELD: "rows string"
    }
    """The query's snapshot in parts (`parts`): a step writes the parts it changed; the
    dictionary in blocks of ids (`StoredTerms`); the elements held back in blocks
    (`held`)."""

    def __init__(
        self,
        unit: Unit,
        background: ox.Store | PreparedBackground | None,
        rdfs: bool,
        forget_terms: int | None = MIN_TERMS,
        checked: bool = False,
    ) -> None:
        """`background`: a store, or one encoded once per worker that each key's session
        copies (`JobSpec.prepared_background`: W6's 133,000 triples took 0.5 s to encode in
        every bucket). `checked`: the driver found that the engine runs the unit
        (`host.job_spec`); else `refusal` is asked here (a background encoded and the query
        planned: 0.15 s for W6's 40,000 background triples, on each worker that makes the
        engine)."""
        reason = None if checked else refusal(unit, background, rdfs)
        if reason is not None:
            raise Unsupported(reason)
        self.unit = unit
        self.query = unit.queries[0]
        self.background = background
        self.rdfs = rdfs
        store = background.store if isinstance(background, PreparedBackground) else background
        data = store is not None and len(store) > 0
        found = split_of(self.query.query, background=data, rdfs=rdfs, merge=True)
        split = found if isinstance(found, Split) else None
        self.split = split.variable.value if split and not split.merged else None
        """A unit split by this variable without PARTITION BY (`sepia.engine.plan.split`):
        a bucket's key keeps the results of its own values only (it may see other groups
        partly, through triples that bind two values)."""
        self.partial = partial_query(self.query.query) if split and split.merged else None
        """A unit split with merged partial states: the query a bucket's key runs, its
        SUM and AVG reported as their partial sums (`sepia.engine.plan.partials`); a run
        that does not merge keeps the unit on one key, which runs the query as written."""
        self.forget_terms = forget_terms
        """A key's session first forgets terms once its dictionary holds this many
        (`Session(forget_terms=)`; None: never)."""
        self.columns = not labels_by_ids(self.query.query)
        """A key steps its due elements as one batch of columns where its session runs
        on the columnar core (see the module)."""

    def step(
        self,
        key: str | None,
        state: StoredState,
        elements: Sequence[ElementRow],
        horizon: int,
        final: bool,
    ) -> Step:
        version = (state.get(VERSION) or [None])[0]
        if version is None and not elements:  # a second timer after the final flush
            return Step({}, [], None, self._kind(None))
        session, written, terms, blocks = self._session(key, version, state)
        seen = None if version is None else version[1]
        kind = TimeKind(version[2]) if version is not None else None
        batch = elements if isinstance(elements, ElementBatch) else ElementBatch.of(elements)
        on_time = batch if seen is None else batch.take(np.flatnonzero(batch.end > seen))
        token = uuid.uuid4().hex
        upto = FLUSHED if final else horizon
        due, kept, held_writes = release(blocks, on_time, upto, self.unit.streams, token)
        if kind is None and len(due):
            kind = TimeKind(due.kind_at(0))
        elif kind is None and kept:
            kind = TimeKind(next(iter(kept.values())).kind_at(0))
        made = self._advance(session, due, horizon, final, columns=self.columns)
        if key is not None and self.split is not None:
            made = [(i, r) for i, r in made if _owned(key, _value(r, self.split))]
        results = [r for _, r in made]
        order, lines = None, None
        if key is not None and self.partial is None:  # a partial row is ordered once merged
            order, lines = _orders(made, self._kind(kind))
        if final:
            empty = {name: [] for name in [*self.tables, *self.maps]}
            return Step(empty, results, None, self._kind(kind), order=order, lines=lines)
        query = session.queries[0]
        now, changed = parts(query, written)
        stored_terms = terms.changes(session.dictionary)
        _remember(token, (session, now, terms, kept))
        return Step(
            state={
                VERSION: [(token, horizon, kind and kind.value, session.dictionary.last_id)],
            },
            changed={PARTS: changed, TERMS: stored_terms, HELD: held_writes},
            results=results,
            wake_at=_wake_at(query, horizon, kept),
            time_kind=self._kind(kind),
            order=order,
            lines=lines,
        )

    def _kind(self, seen: TimeKind | None) -> TimeKind:
        """The results' time kind: the key's elements', else the query's declared one."""
        return seen or self.query.query.time_kind or TimeKind.ABSTRACT

    def _session(self, key: str | None, version: tuple | None, state: StoredState) -> Live:
        """The live session the state's token names, else one restored from the rows (a
        bucket's owning the values of its bucket only), the snapshot parts and the terms
        stored, and the elements held back."""
        live = None if version is None else _LIVE.pop(version[0], None)
        if live is not None:
            return live
        session = Session(self.background, rdfs=self.rdfs, forget_terms=self.forget_terms,
                          forget_when_quiet=False,  # a key's stored terms stay bounded
                          forget_after_batches=self.columns)
        owns = None
        if key is not None and self.unit.partition_by is not None:
            bucket, buckets = parse_bucket_key(key)
            owns = lambda value: bucket_of(value, buckets) == bucket  # noqa: E731
        query = self.query.query if key is None or self.partial is None else self.partial
        session.register(query, self.query.name, owns=owns)
        stored = {name: text for name, text in state.get(PARTS, [])} if version else {}
        base = session.dictionary.last_id
        last_id = base if version is None else version[3]
        if version is not None:
            session.restore(
                {
                    "dictionary": term_rows(state.get(TERMS, [])),
                    "last_id": [(last_id,)],
                    "pending": [],
                    "watermark": [],
                    f"query {self.query.name}": restored_snapshot(stored),
                }
            )
        terms = StoredTerms(session.dictionary, base, last_id)
        blocks = stored_blocks(state.get(HELD, [])) if version else {}
        return session, _known(session.queries[0], stored), terms, blocks

    @staticmethod
    def _advance(
        session: Session, due: ElementBatch, horizon: int, final: bool, columns: bool
    ) -> list[tuple[int, Result]]:
        """Push the due elements, then move the watermark (or flush, at the end); each
        result with the instant whose step made it (`FLUSHED`: the end of input's).
        `columns`: as one batch, when the session runs on the columnar core (each
        result's instant is then its time: see the module)."""
        made: list[tuple[int, Result]] = []
        stepped: Sequence[ElementRow] = due
        if columns and session.columnar:
            for first in range(0, len(due), PUSH_ELEMENTS):
                if first:  # the slice before is gone: collect what nothing holds
                    forget_after_batch(session)
                part = due.between(first, first + PUSH_ELEMENTS)
                # no name holds the batch: a live batch's ids are never forgotten
                pushed = session.push_columns(element_columns(part, session.dictionary))
                made += [(r.t, r) for r in pushed]
            stepped = []
        for row in stepped:
            instant = session.pending[0].time if session.pending else 0
            made += [(instant, r) for r in session.push(to_element(row))]
        if len(due):
            last = int(due.end[-1])
            made += [(last, r) for r in session.watermark(last)]
        if len(due) and not stepped and not final:  # at the end, the session is dropped next
            forget_after_batch(session)
        if final:
            return made + [(FLUSHED, r) for r in session.flush()]
        end = session.queries[0].flush_end()
        if end is not None:
            made += [(min(end, horizon), r) for r in session.watermark(min(end, horizon))]
        return made


def _owned(key: str, value: Term | None) -> bool:
    """Whether a split unit's bucket `key` owns a result with this value of the split
    variable (an unbound one is never a group's: the analysis projects the variable)."""
    bucket, buckets = parse_bucket_key(key)
    return value is not None and bucket_of(value, buckets) == bucket


def _value(result: Result, name: str) -> Term | None:
    binding = result.binding
    if binding is None:
        return None
    pairs = binding.items() if isinstance(binding, Mapping) else binding
    return dict(pairs).get(name)


def _orders(made: Sequence[tuple[int, Result]], kind: TimeKind) -> tuple[list[str], list[str]]:
    """Each result's `Step.order`: its instant (shifted to a positive number, written to
    sort as text), then the head of `result_order` (its jsonl line with abstract times, up
    to its match or binding: `result_lines.ordered_lines`, whose tails the output lines
    order); and its jsonl line in `kind`, the host's output, rendered in the same pass."""
    heads, lines = ordered_lines([result for _, result in made], kind)
    instants = [instant for instant, _ in made]
    orders = [f"{at + FLUSHED:020d} {head}" for at, head in zip(instants, heads, strict=True)]
    return orders, lines


PART = "\x1f"
"""Joins a snapshot table's name and a partition value id, or a window's name and a time
chunk, in a part's key."""
WHOLE = ("partitions", "held")
"""A PARTITION BY query's snapshot tables whose rows are not one partition's."""
WINDOWS = "windows"
CHUNKS = 32
"""A sliding window's content is stored in time chunks of 1/CHUNKS of its width."""


def parts(
    query: Engine, written: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, tuple[str] | None]]:
    """The query's snapshot as parts, against the parts stored (`written`: key ->
    fingerprint): every part's fingerprint now, and the entries to write (JSON text) or
    remove (None). One part per table; for a PARTITION BY query one per table and
    partition (`_value_column`), so a step that touches a few partitions changes a few
    parts; a window query's windows one per time chunk (`_window_parts`), so a step writes
    the chunks its elements fell in and removes the evicted ones, and only those chunks'
    JSON is made."""
    now: dict[str, str] = {}
    changed: dict[str, tuple[str] | None] = {}
    for key, mark, text in _parts(query):
        now[key] = mark
        if written.get(key) != mark:
            changed[key] = (text(),)
    changed |= {key: None for key in written.keys() - now.keys()}
    return now, changed


Part = tuple[str, str, Callable[[], str]]
"""A part's key, its fingerprint (equal content, equal fingerprint) and its JSON text."""


def _parts(query: Engine) -> Iterator[Part]:
    if isinstance(query, ContinuousQuery):  # its "windows" part stays empty
        tables = query.snapshot(windows=False)
        yield from _window_parts(query)
    else:
        tables = query.snapshot()
    found: dict[str, list] = {}
    for name, rows in tables.items():
        found[name] = []
        column = _value_column(query, name)
        if column is None:
            found[name] = list(rows)
            continue
        for row in rows:
            found.setdefault(f"{name}{PART}{row[column]}", []).append(row)
    for name, rows in found.items():
        text = json.dumps(rows)
        yield name, text, partial(str, text)


def _window_parts(query: ContinuousQuery) -> Iterator[Part]:
    """A window's content in time chunks (`chunk_width`), each as its columns' JSON
    (`WindowColumns`, the element offsets from the chunk's first element), fingerprinted by
    a digest of those columns: a chunk's JSON is made only when the step writes it."""
    specs = {str(n): op.spec for n, (_, op) in query.physical.windows.items()}
    for name, (times, element, s, p, o) in query.window_columns().items():
        if not len(times):
            continue
        chunks = times // chunk_width(specs[name])
        bounds = [0, *(np.flatnonzero(np.diff(chunks)) + 1).tolist(), len(times)]
        cuts = np.searchsorted(element, bounds).tolist()
        for i in range(len(bounds) - 1):
            (a, b), (c, d) = bounds[i : i + 2], cuts[i : i + 2]
            columns = (times[a:b], element[c:d] - a, s[c:d], p[c:d], o[c:d])
            digest = hashlib.blake2b(str(b - a).encode(), digest_size=16)
            for column in columns:
                digest.update(np.ascontiguousarray(column).tobytes())
            key = f"{WINDOWS}{PART}{name}{PART}{int(chunks[a]) + FLUSHED:020d}"
            yield key, digest.hexdigest(), partial(_columns_text, columns)


def _known(query: Engine, stored: Mapping[str, str]) -> dict[str, str]:
    """The fingerprints of the parts stored, for a session restored from them: a table
    part's is its stored text; a window chunk's the digest of the restored window's chunk
    (rebuilt from the very columns stored, it digests as it did when written)."""
    known = dict(stored)
    if isinstance(query, ContinuousQuery):
        known |= {key: mark for key, mark, _ in _window_parts(query) if key in stored}
    return known


def chunk_width(spec: ds.WindowSpec) -> int:
    """The time span of a window's chunks: 1/CHUNKS of a sliding window's width (a step's
    elements fall in the last few, an eviction empties the first few); one chunk for other
    windows (count, landmark, interval, NOW), whose content has no fixed span."""
    if isinstance(spec, ds.Sliding):
        return max(1, -(-spec.width // CHUNKS))
    return FLUSHED


def _columns_text(columns: Sequence[np.ndarray]) -> str:
    return json.dumps([column.tolist() for column in columns])


def restored_snapshot(stored: Mapping[str, str]) -> dict[str, list[tuple]]:
    """The query's snapshot tables from its stored parts (`parts`): a window's chunks in
    time order, back to rows numbered from its oldest element."""
    snapshot: dict[str, list[tuple]] = {}
    numbered: dict[str, int] = {}
    for key, text in sorted(stored.items()):
        table, *rest = key.split(PART)
        if table == WINDOWS and len(rest) == 2:
            name, columns = rest[0], json.loads(text)
            rows = _chunk_rows(name, numbered.get(name, 0), columns)
            numbered[name] = numbered.get(name, 0) + len(columns[0])
        else:
            rows = _rows(text)
        snapshot.setdefault(table, []).extend(rows)
    return snapshot


def _chunk_rows(name: str, first: int, columns: list[list[int]]) -> list[tuple]:
    """A chunk's window rows (name, element number, time, s, p, o), numbered from
    `first`; an element without triples is one row of Nones."""
    times, element, s, p, o = columns
    rows: list[tuple] = []
    at = 0
    for number, time in enumerate(times):
        start = at
        while at < len(element) and element[at] == number:
            rows.append((name, first + number, time, s[at], p[at], o[at]))
            at += 1
        if at == start:
            rows.append((name, first + number, time, None, None, None))
    return rows


def _value_column(query: Engine, table: str) -> int | None:
    """Where a snapshot table's rows hold their partition's value id: first in the row
    engine's partition tables, after (state, start, last) in the columnar core's runs
    (their mapping's key slot); None for a table not by partition (every table of a
    sequence without PARTITION BY)."""
    if isinstance(query, PartitionedQuery):
        return None if table in WHOLE else 0
    if isinstance(query, PartitionedSequence) and table == "runs" and query.slot is not None:
        return 3 + query.slot
    return None


def _remember(token: str, live: Live) -> None:
    _LIVE[token] = live
    while len(_LIVE) > LIVE_SESSIONS:
        _LIVE.popitem(last=False)


def _rows(text: str) -> list[tuple]:
    return [tuple(row) for row in json.loads(text)]


def _wake_at(query: RegisteredQuery, horizon: int, kept: HeldBlocks) -> int | None:
    """The first instant after the horizon with results possibly due without new input for
    the key: a report instant before the flush end, or the first element held back."""
    end = query.flush_end()
    schedule = query.physical.schedule if isinstance(query, ContinuousQuery) else None
    report = None
    if end is not None and end > horizon and schedule is not None:
        report = next(iter(schedule.between(horizon, end + 1)), None)
    held = min((int(block.end.min()) for block in kept.values()), default=None)
    return min((t for t in (report, held) if t is not None), default=None)
