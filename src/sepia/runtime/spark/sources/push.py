"""What every push source shares: an inbox of received documents and its offsets.

MQTT and a TCP socket push documents at Sepia and cannot replay them. The stream reader
lives in Spark's driver-side source process for the whole query: on its first call it starts
receiving (a background thread) into an `Inbox`, which numbers documents in arrival order.
That number is the offset: `latestOffset` is the number of documents received so far,
`partitions` ships the documents of a micro-batch to an executor (which parses them, see
`documents`), and `commit` forgets them.

Semantics: exactly what was received while the query ran, each document once, in arrival
order. A restarted query continues numbering from its checkpointed offset; documents that
were received but not committed before a crash cannot be asked for again and are lost (the
batch that held them is replayed empty), and what was sent while no query listened was
never received (an MQTT persistent session narrows this gap, see `mqtt`).

With `idleTimeout` (seconds) the reader also reads the times of the documents it numbers, so
that a quiet source's clock rows move time on from the latest of them (`idle`).
"""

from __future__ import annotations

import io
import threading
from abc import abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit

from sepia.io.sources import stream_format
from sepia.io.streams import read_stream
from sepia.runtime.spark.ingest import IngestOptions
from sepia.runtime.spark.sources.documents import Document, document_batches
from sepia.runtime.spark.sources.idle import CLOCK, IdleClock, clock_batch, clock_due

OFFSET = "received"


class Inbox:
    """Documents received and not yet committed, numbered from the first offset Spark gives."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._documents: list[bytes] = []
        self._first: int | None = None  # the number of _documents[0], once Spark said it

    def put(self, payload: bytes) -> None:
        with self._lock:
            self._documents.append(payload)

    def latest(self, start: int) -> int:
        """The offset after the last document; the first call fixes where numbering starts."""
        with self._lock:
            if self._first is None:
                self._first = start
            return max(start, self._first + len(self._documents))

    def between(self, start: int, end: int) -> list[Document]:
        """The numbered documents in [start, end) still held (none before numbering began)."""
        with self._lock:
            if self._first is None:
                return []
            low, high = max(start - self._first, 0), max(end - self._first, 0)
            held = self._documents[low:high]
            return [(self._first + low + i, payload) for i, payload in enumerate(held)]

    def commit(self, end: int) -> None:
        """Forget every document numbered below `end`: Spark will not ask for them again."""
        with self._lock:
            if self._first is None:
                return
            done = min(max(end - self._first, 0), len(self._documents))
            del self._documents[:done]
            self._first += done


class PushStreamReader(DataSourceStreamReader):
    """A stream reader over documents some connection pushes; subclasses say how to connect.

    Spark also builds readers only to plan `read` on executors and pickles them: nothing is
    connected until the first offset is asked for, and the connection never travels.
    """

    def __init__(self, options: Mapping[str, str]) -> None:
        self.stream = required_option(options, "stream")
        self.fmt = options.get("format", "trig")
        stream_format("", self.fmt)  # a bad format fails when the query starts, not later
        self.allowed_lateness = int(options.get("allowedLateness", "0"))
        self.timeout = float(options.get("connectTimeout", "10"))
        idle = options.get("idleTimeout")
        self.idle = IdleClock(float(idle), self.allowed_lateness) if idle else None
        self._kind = "abstract"  # of the latest element received (clock rows copy it)
        self._live: tuple[Inbox, Callable[[], None]] | None = None

    @property
    @abstractmethod
    def source(self) -> str:
        """The source's address, which names its documents."""

    @abstractmethod
    def receive(self, inbox: Inbox) -> Callable[[], None]:
        """Connect, start putting documents into `inbox`, and return how to disconnect."""

    def _inbox(self) -> Inbox:
        if self._live is None:
            inbox = Inbox()
            self._live = (inbox, self.receive(inbox))
        return self._live[0]

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_live": None}

    def initialOffset(self) -> dict:
        self._inbox()
        return {OFFSET: 0}

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        inbox = self._inbox()
        offset = {OFFSET: inbox.latest(start[OFFSET])}
        if self.idle is None:
            return offset
        if offset[OFFSET] == start[OFFSET]:
            return self.idle.tick(offset, start)
        self.idle.saw(self._latest_time(inbox.between(start[OFFSET], offset[OFFSET])))
        return offset

    def _latest_time(self, documents: list[Document]) -> int | None:
        """The latest element time in received documents (their bad elements skipped)."""
        latest = None
        for _, payload in documents:
            elements = read_stream(io.BytesIO(payload), self.stream, name=self.source,
                                   fmt=self.fmt, on_error="skip", errors=_ignored)  # fmt: skip
            for element in elements:
                latest = element.end if latest is None else max(latest, element.end)
                self._kind = element.kind.value
        return latest

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        documents = self._inbox().between(start[OFFSET], end[OFFSET])
        parts = [InputPartition(documents)] if documents else []
        moved = clock_due(start, end)
        return parts if moved is None else [*parts, InputPartition((CLOCK, moved, self._kind))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if isinstance(partition.value, tuple) and partition.value[0] == CLOCK:
            _, moved, kind = partition.value
            return iter([clock_batch(self.stream, self.source, moved, kind)])
        options = IngestOptions(allowed_lateness=self.allowed_lateness)
        return document_batches(self.stream, self.source, partition.value, self.fmt, options)

    def commit(self, end: dict) -> None:
        self._inbox().commit(end[OFFSET])

    def stop(self) -> None:
        if self._live is not None:
            self._live[1]()
            self._live = None


def _ignored(_error: object) -> None:
    """Errors of a document read only for its times: the executor's parse reports them."""


def required_option(options: Mapping[str, str], key: str) -> str:
    value = options.get(key)
    if not value:
        raise ValueError(f"the source needs the option {key!r}")
    return value
