"""A key's element rows of a micro-batch held as columns (`ElementBatch`).

The stateful stage gets a key's elements as packed rows (`elements.pack`), whose fields
already are columns: each row's stream, file and kind as positions among their distinct
values, its graph, seq, start, end and number of terms as arrays, and its terms as
positions in a table of distinct term texts. Unpacked into a tuple an element, sorted by a
Python key and gathered into columns again, a key's 100,000 W7 elements spent more time
there (0.6 s) than in the engine's step over them (0.6 s). A batch keeps the columns: it
is ordered by `numpy.lexsort`, cut at the horizon by a search, and handed to the
columnar core as arrays (`columns.element_columns`). It is still a sequence of element rows,
made only where a row is asked for: the held rows the state store keeps, the reference
adapter, the row engine.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import numpy as np

from sepia.runtime.spark.elements import (
    END,
    END_GRAPH,
    GRAPH,
    MARK_GRAPH,
    PACKED,
    PACKED_TERMS,
    STAND_INS,
    TERM_SEPARATOR,
    ElementRow,
    TermRefs,
    TermTable,
    as_base64,
    distinct_terms,
    is_term_text,
    pack,
    packed_text,
    unpacked_text,
)


class ElementBatch(Sequence[ElementRow]):
    """Element rows as columns: `stream`, `file` and `kind` as positions in `streams`,
    `files` and `kinds`; `graphs`; `seq`, `start`, `end`; each row's terms as the slice
    [first, first + count) of the positions of `tables[table]` (-1: no terms). `loose`:
    the rows that came as rows (not from a packed row of term text), kept as they came.
    `term_text`: whether every row's triples are term text (else some are N-Triples,
    which only the row path reads)."""

    def __init__(self, parts: _Parts) -> None:
        parts.flush()
        self.streams, self.files, self.kinds = (
            list(parts.streams),
            list(parts.files),
            list(parts.kinds),
        )
        self.stream, self.file, self.kind = (
            _ints(a, np.int32) for a in (parts.stream, parts.file, parts.kind)
        )
        self.graphs: list[str] = parts.graphs
        self.seq, self.start, self.end = (
            _ints(a, np.int64) for a in (parts.seq, parts.start, parts.end)
        )
        self.tables: list[TermTable] = parts.tables
        self.table = _ints(parts.table, np.int32)
        self.first, self.count = _ints(parts.first, np.int64), _ints(parts.count, np.int64)
        self.loose: dict[int, ElementRow] = parts.loose
        self.term_text = parts.term_text

    @staticmethod
    def of(
        rows: Iterable[ElementRow] | ElementBatch, *more: Iterable[ElementRow] | ElementBatch
    ) -> ElementBatch:
        """The rows of `rows`, then of each of `more`, as one batch."""
        parts = _Parts()
        for found in (rows, *more):
            if isinstance(found, ElementBatch):
                parts.add_batch(found)
            else:
                for row in found:
                    parts.add_row(row)
        return ElementBatch(parts)

    def __len__(self) -> int:
        return len(self.graphs)

    @overload
    def __getitem__(self, index: int) -> ElementRow: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[ElementRow]: ...
    def __getitem__(self, index: int | slice) -> ElementRow | Sequence[ElementRow]:
        if isinstance(index, slice):
            return self.rows(np.arange(len(self))[index])
        at = range(len(self))[index]
        return self.rows(np.array([at]))[0]

    def __iter__(self) -> Iterator[ElementRow]:
        return iter(self.rows())

    def rows(self, indices: np.ndarray | None = None) -> list[ElementRow]:
        """The rows at `indices` (all, in order, if None) as element rows, each packed row's
        triples as `TermRefs` into its table."""
        at = np.arange(len(self)) if indices is None else indices
        streams, files, kinds, graphs, tables = (
            self.streams,
            self.files,
            self.kinds,
            self.graphs,
            self.tables,
        )
        made = []
        for n, stream, file, seq, start, end, kind, table, first, count in zip(
            at.tolist(),
            self.stream[at].tolist(),
            self.file[at].tolist(),
            self.seq[at].tolist(),
            self.start[at].tolist(),
            self.end[at].tolist(),
            self.kind[at].tolist(),
            self.table[at].tolist(),
            self.first[at].tolist(),
            self.count[at].tolist(),
            strict=True,
        ):
            loose = self.loose.get(n)
            if loose is not None:
                made.append(loose)
                continue
            terms = TermRefs(tables[table], first, first + count) if table >= 0 else ""
            made.append(
                (streams[stream], files[file], seq, graphs[n], start, end, kinds[kind], terms)
            )
        return made  # type: ignore[return-value]

    def packed(self) -> ElementRow:
        """The rows as one packed row of term text (`elements.pack`'s), made from the
        columns: every row's terms gathered from their tables at once, no row made. Rows
        that came loose (stand-ins, N-Triples) are packed as rows."""
        if self.loose or not len(self):
            return pack(self.rows())
        terms, inverse = distinct_terms(self.tables, self.table, self.first, self.count)
        shared = [[values, as_base64(codes.astype(np.int32))]
                  for values, codes in ((self.streams, self.stream), (self.files, self.file),
                                        (self.kinds, self.kind))]  # fmt: skip
        numbers = as_base64(np.array([self.seq, self.start, self.end, self.count], dtype=np.int64))
        text = packed_text(terms, as_base64(inverse.astype(np.int32)),
                           [shared, self.graphs, numbers])  # fmt: skip
        last = int(self.end.max())
        stream, file, kind = (self.streams[int(self.stream[0])], self.files[int(self.file[0])],
                              self.kinds[int(self.kind[0])])  # fmt: skip
        return (stream, file, int(self.seq[0]), PACKED_TERMS, last, last, kind, text)

    def between(self, first: int, stop: int) -> ElementBatch:
        """The rows [first, stop): the batch itself where that is all of it (a finite
        run's one step is due whole, 1,000,000 rows on W7: not copied)."""
        if first == 0 and stop >= len(self):
            return self
        return self.take(np.arange(first, min(stop, len(self))))

    def take(self, indices: np.ndarray) -> ElementBatch:
        """The rows at `indices`, in that order."""
        parts = _Parts()
        parts.add_batch(self, indices)
        return ElementBatch(parts)

    def in_arrival_order(self, streams: Sequence[str]) -> ElementBatch:
        """The rows by time, then the stream's position in `streams` (others after), then
        file and position in it: the local runtime's merge order. Stable, as `sorted` is.
        Rows already in that order (a file's elements, read in order) come back as they
        are: gathering a finite run's step again cost W3's stateful task 6%."""
        rank = {stream: n for n, stream in enumerate(streams)}
        ranks = np.array([rank.get(s, len(rank)) for s in self.streams] or [0], dtype=np.int64)
        order = {file: n for n, file in enumerate(sorted(self.files))}
        files = np.array([order[f] for f in self.files] or [0], dtype=np.int64)
        keys = (self.seq, files[self.file], ranks[self.stream], self.end)
        if _ascending(keys):
            return self
        return self.take(np.lexsort(keys))

    def latest(self) -> dict[str, int]:
        """Each stream's latest element end among the rows."""
        found = np.full(len(self.streams), np.iinfo(np.int64).min, dtype=np.int64)
        np.maximum.at(found, self.stream, self.end)
        seen = np.zeros(len(self.streams), dtype=bool)
        seen[self.stream] = True
        return {s: int(found[n]) for n, s in enumerate(self.streams) if seen[n]}

    def kind_at(self, index: int) -> str:
        return self.kinds[int(self.kind[index])]


def _ascending(keys: Sequence[np.ndarray]) -> bool:
    """Whether rows are in `np.lexsort(keys)` order already (the last key first), ties
    included: each row is at most the next one, key by key."""
    if len(keys[0]) < 2:
        return True
    tied = np.ones(len(keys[0]) - 1, dtype=bool)
    for key in reversed(keys):
        before, after = key[:-1], key[1:]
        if (tied & (before > after)).any():
            return False
        tied &= before == after
        if not tied.any():
            return True
    return True


def _ints(values: list, dtype: type) -> np.ndarray:
    arrays = [np.asarray(a, dtype=dtype) for a in values]
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=dtype)


class _Parts:
    """An `ElementBatch`'s columns as they are gathered: arrays and lists of arrays, the
    distinct streams, files, kinds and tables numbered as they are met."""

    def __init__(self) -> None:
        self.streams: dict[str, int] = {}
        self.files: dict[str, int] = {}
        self.kinds: dict[str, int] = {}
        self.stream: list = []
        self.file: list = []
        self.kind: list = []
        self.graphs: list[str] = []
        self.seq: list = []
        self.start: list = []
        self.end: list = []
        self.tables: list[TermTable] = []
        self.numbered: dict[int, int] = {}
        """Each table's position in `tables`, by its `id`."""
        self.table: list = []
        self.first: list = []
        self.count: list = []
        self.loose: dict[int, ElementRow] = {}
        self.term_text = True
        self.loose_terms: list[str] = []
        self.loose_table: TermTable | None = None
        self.pending: list[tuple[int, ...]] = []
        """The columns of rows added one at a time, not yet flushed."""

    def add_packed(self, text: str) -> None:
        """A packed row of term text (`elements.PACKED_TERMS`)."""
        self.flush()
        terms, positions, (shared, graphs, numbers) = unpacked_text(text)
        table = TermTable(terms, np.frombuffer(base64.b64decode(positions), dtype=np.int32))
        for values, index, at in zip(shared, (self.streams, self.files, self.kinds),
                                     (self.stream, self.file, self.kind), strict=True):  # fmt: skip
            codes = np.array([index.setdefault(value, len(index)) for value in values[0]])
            at.append(codes[np.frombuffer(base64.b64decode(values[1]), dtype=np.int32)])
        seq, start, end, count = np.frombuffer(base64.b64decode(numbers), dtype=np.int64).reshape(
            4, -1
        )
        self.graphs += graphs
        self.seq.append(seq)
        self.start.append(start)
        self.end.append(end)
        self.table.append(np.full(len(graphs), self._table(table), dtype=np.int32))
        self.first.append(np.cumsum(count) - count)
        self.count.append(count)

    def add_row(self, row: ElementRow) -> None:
        """A row that came as a row: its triples as `TermRefs`, term text or N-Triples."""
        stream, file, seq, graph, start, end, kind, text = row
        self.loose[len(self.graphs)] = row
        self.graphs.append(graph)
        self.pending.append((
            self.streams.setdefault(stream, len(self.streams)),
            self.files.setdefault(file, len(self.files)),
            self.kinds.setdefault(kind, len(self.kinds)),
            int(seq), int(start), int(end), *self._terms(text),
        ))  # fmt: skip

    def flush(self) -> None:
        """The rows added one at a time since the last flush, as one array a column."""
        if self.pending:
            columns = (self.stream, self.file, self.kind, self.seq, self.start, self.end,
                       self.table, self.first, self.count)  # fmt: skip
            for into, values in zip(columns, zip(*self.pending, strict=True), strict=True):
                into.append(values)
            self.pending = []
        if self.loose_table is not None:
            self.loose_table.positions = np.arange(len(self.loose_terms))

    def _terms(self, text: TermRefs | str) -> tuple[int, int, int]:
        """(table, first, count) of a row's triples; N-Triples text counts none here."""
        if isinstance(text, TermRefs):
            return self._table(text.table), text.start, text.stop - text.start
        if not text:
            return -1, 0, 0
        if not is_term_text(text):
            self.term_text = False
            return -1, 0, 0
        if self.loose_table is None:
            self.loose_table = TermTable(self.loose_terms, [])
        first = len(self.loose_terms)
        self.loose_terms += text.split(TERM_SEPARATOR)
        return self._table(self.loose_table), first, len(self.loose_terms) - first

    def _table(self, table: TermTable) -> int:
        found = self.numbered.get(id(table))
        if found is None:
            found = self.numbered[id(table)] = len(self.tables)
            self.tables.append(table)
        return found

    def add_batch(self, batch: ElementBatch, indices: np.ndarray | None = None) -> None:
        """The rows of `batch` at `indices` (all if None)."""
        self.flush()
        at = np.arange(len(batch)) if indices is None else indices
        offset = len(self.graphs)
        for values, index, codes, into in (
            (batch.streams, self.streams, batch.stream, self.stream),
            (batch.files, self.files, batch.file, self.file),
            (batch.kinds, self.kinds, batch.kind, self.kind),
        ):
            mapped = np.array(
                [index.setdefault(v, len(index)) for v in values] or [0], dtype=np.int32
            )
            into.append(mapped[codes[at]])
        graphs = batch.graphs
        self.graphs += [graphs[n] for n in at.tolist()]
        self.seq.append(batch.seq[at])
        self.start.append(batch.start[at])
        self.end.append(batch.end[at])
        tables = np.array([self._table(t) for t in batch.tables] + [-1], dtype=np.int32)
        self.table.append(tables[batch.table[at]])
        self.first.append(batch.first[at])
        self.count.append(batch.count[at])
        if batch.loose:
            for new in np.flatnonzero(np.isin(at, list(batch.loose))).tolist():
                self.loose[offset + new] = batch.loose[int(at[new])]
        self.term_text = self.term_text and batch.term_text


def unpack(rows: Iterable[ElementRow]) -> tuple[ElementBatch, set[str], dict[str, int]]:
    """A key's rows of a batch as an element batch (packed rows and stand-ins expanded),
    the streams whose end-of-input marker came with them, and each stream's latest end its
    mark rows tell."""
    parts = _Parts()
    ended: set[str] = set()
    marks: dict[str, int] = {}
    for row in rows:
        if row[GRAPH] == END_GRAPH:
            ended.add(row[0])
        elif row[GRAPH] == MARK_GRAPH:
            marks[row[0]] = max(marks.get(row[0], row[END]), row[END])
        elif row[GRAPH] == PACKED_TERMS:
            parts.add_packed(row[7])
        elif row[GRAPH] == PACKED:
            for found in json.loads(row[7]):
                parts.add_row(tuple(found))  # type: ignore[arg-type]
        elif row[GRAPH] == STAND_INS:
            for t, file, seq, graph in json.loads(row[7]):
                parts.add_row((row[0], file, seq, graph, t, t, row[6], ""))
        else:
            parts.add_row(row)
    return ElementBatch(parts), ended, marks
