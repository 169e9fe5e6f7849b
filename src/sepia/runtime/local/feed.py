"""Feeding a session from stream files, folders and standard input: replayed or live.

**Replay** (the default for files and folders): the elements are read lazily, merged in time
order and pushed at full speed; when every input ends, the session flushes (semantics.md).

A replay of stream files (not folders, ``COLUMN_BYTES`` or more in all) into a session whose
queries all run on the columnar core, with the default read options and no snapshot, reads
each file as columns
(``sepia.engine.columnar.frontend``: only the predicates the queries read, the row reader
from the first part of a file out of its shape) and pushes them a batch at a time: the
same results, without an object per term. Other sessions (event patterns and the rest of
the row engine) get each such file's elements from the same text kernels
(``file_elements``): the row reader's elements, point- or interval-stamped, without a
pyoxigraph parse of every term and time statement (W9's 100,000 interval-stamped
elements: 1.4 s of CPU against 4.1 s).

**Live** (``follow=True``, or a stream read from standard input): each input is read by a
thread into one queue and pushed in arrival order, results leave as soon as they are made.

- A folder: its files in name order (names starting with ``.`` or ``_`` are skipped), then
  every new file that appears in it, each read whole when first seen; write a file elsewhere
  and move it in (a rename is atomic), as for Spark's file source.
- Standard input (``-``, TriG): read as bytes arrive. io.md lets an element's time
  statement follow its triples, so an element is complete when the next one starts or the
  input ends: a live element waits for the next one.
- Elements carry their own times, as io.md says for every stream file: live input is not
  stamped on arrival (an element without a time is bad input, reported like in a file), so
  a followed input replayed later gives the same results.
- The inputs are merged in time order as they arrive: an element goes in once every other
  open input has shown a time at or after its own, so a live run gives the replay's results
  whatever the pace of its inputs (a quiet input holds the others back).
- Time moves with the elements: the results of an instant leave when a later element
  arrives. With ``wall_clock`` (xsd:dateTime streams only: their times are epoch
  milliseconds) time also moves with the clock: the watermark is now minus the allowed
  lateness, so window closes and periodic reports fire on time without waiting for an
  element or a quiet input, and an element stamped at or before the watermark is late (an
  error; with ``on_error="skip"`` reported and dropped).

**Stopping.** A run stops when every input ends, at ``until``, or on Ctrl-C (SIGINT; a second
Ctrl-C interrupts at once). Then the input has ended: the session flushes. With a snapshot
file the input is only paused instead: no flush, the state is saved (also every
``snapshot_every`` seconds), and a run restored from it goes on exactly where this one
stopped, skipping the elements of each input file it had already taken.
"""

from __future__ import annotations

import gc
import heapq
import os
import queue
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sepia.engine.hosts.session import Session
from sepia.io.errors import StreamError
from sepia.io.streams import read_stream
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import ReadOptions
from sepia.runtime.local.collector import sparse_collections

if TYPE_CHECKING:
    from sepia.engine.columnar import ColumnBatch

STDIN = "-"
COLUMN_BYTES = 4 << 20
"""Input size from which a replay reads columns: the columnar reader's libraries take
~0.3 s to load, about what it saves on 4 MiB of TriG."""
CHUNK = 1024
"""Elements a replay of rows hands the session at once (one batch on the columnar core)."""
Sourced = tuple[StreamElement, str]
"""An element and the input it came from (a resolved file path, or ``-``)."""


class LateElement(ValueError):
    """An element older than what the run has already released (or than the clock)."""


@dataclass(frozen=True, slots=True)
class Feed:
    """How a run reads its inputs and when it stops."""

    read: ReadOptions = field(default_factory=ReadOptions)
    follow: bool = False
    wall_clock: bool = False
    snapshot: Path | None = None
    snapshot_every: float | None = None
    until: int | None = None
    idle_timeout: float | None = None
    """Seconds after which a quiet input stops holding time back (see the module)."""
    poll: float = 0.2
    """Seconds between looks at a followed folder, and the live loop's tick."""


class Stdin:
    """A file descriptor's bytes as they come: ``read(n)`` returns what has arrived (at
    least one byte, waiting for it), where a buffered ``read(n)`` would wait for n bytes.
    Reads go to the descriptor itself, so a reader thread holds no lock at exit."""

    name = "<stdin>"

    def __init__(self, fd: int = 0) -> None:
        self.fd = fd
        self.head = b""

    def peek(self, size: int = 1) -> bytes:
        while len(self.head) < size and (chunk := os.read(self.fd, 1 << 16)):
            self.head += chunk
        return self.head

    def read(self, size: int = -1) -> bytes:
        if self.head:
            size = len(self.head) if size < 0 else size
            out, self.head = self.head[:size], self.head[size:]
            return out
        return os.read(self.fd, size if size > 0 else 1 << 16)


def input_files(binding: Path, follow: bool, stop: threading.Event, poll: float) -> Iterator[Path]:
    """A stream's files: the file itself, or a folder's files in name order (and, followed,
    the new ones as they appear, until ``stop``)."""
    if not binding.is_dir():
        yield binding
        return
    seen: set[str] = set()
    while True:
        new = sorted(
            p for p in binding.iterdir()
            if p.is_file() and p.name not in seen and not p.name.startswith((".", "_"))
        )  # fmt: skip
        for path in new:
            seen.add(path.name)
            yield path
        if not follow or stop.wait(poll):
            return


def sourced(
    iri: str, files: Iterable[Path], read: ReadOptions, skip: Mapping[str, int]
) -> Iterator[Sourced]:
    """The elements of a stream's files, each with its file; the first ``skip[file]`` of a
    file are left out (taken before a snapshot)."""
    for path in files:
        key = str(path.resolve())
        for element in islice(file_elements(path, iri, read), skip.get(key, 0), None):
            yield element, key


def columnar_options(read: ReadOptions) -> bool:
    """Whether the columnar reader may read a file with these options: only the defaults
    (``errors`` any), for the row reader takes over a file where the columnar one stops
    (out of shape), with the same options."""
    return ReadOptions(errors=read.errors) == read


def file_elements(path: Path, iri: str, read: ReadOptions) -> Iterator[StreamElement]:
    """One stream file's elements: a TriG file of ``COLUMN_BYTES`` or more read with the
    default options (``errors`` any) goes through the columnar reader's text kernels
    (``frontend.stream_elements``: the row reader's elements, without a parse of each
    term and each time statement), any other through the row reader."""
    if columnar_options(read) and path.suffix == ".trig" and path.stat().st_size >= COLUMN_BYTES:
        from sepia.engine.columnar.frontend import stream_elements

        return stream_elements(path, iri, errors=read.errors)
    return read_stream(
        path, iri, on_error=read.on_error, errors=read.errors, dead_letter=read.dead_letter,
        allowed_lateness=read.allowed_lateness, max_element_size=read.max_element_size,
    )


def column_batches(
    session: Session, bindings: Mapping[str, Path], feed: Feed, taken: Mapping[str, int]
) -> Iterator[ColumnBatch] | None:
    """The inputs as batches of columns merged in time order, when a replay may read them
    so (see the module); else None. The read options must be the defaults (with ``errors``
    any)."""
    files = all(str(path) != STDIN and Path(path).is_file() for path in bindings.values())
    if not (session.columnar and columnar_options(feed.read) and files
            and feed.snapshot is None and not taken and not feed.follow):
        return None
    if sum(Path(path).stat().st_size for path in bindings.values()) < COLUMN_BYTES:
        return None
    from sepia.engine.columnar.batch import interleaved
    from sepia.engine.columnar.frontend import stream_columns

    predicates = session.predicates()
    return interleaved([
        stream_columns(path, iri, session.dictionary, predicates, errors=feed.read.errors)
        for iri, path in bindings.items()
    ])


def stdin_elements(iri: str, read: ReadOptions) -> Iterator[Sourced]:
    """Standard input read live as one TriG stream."""
    elements = read_stream(
        Stdin(), iri, fmt="trig", on_error=read.on_error, errors=read.errors,
        dead_letter=read.dead_letter, allowed_lateness=read.allowed_lateness,
        max_element_size=read.max_element_size,
    )  # fmt: skip
    return ((element, STDIN) for element in elements)


class Driver:
    """Pushes elements into a session, writes the results, takes snapshots, stops."""

    def __init__(
        self,
        session: Session,
        write: Callable[[list[Result]], None],
        feed: Feed,
        taken: dict[str, int] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.session = session
        self.clock = clock
        """Seconds for idle timeouts and snapshot periods (a test gives a virtual one)."""
        self.write = write
        self.feed = feed
        self.taken: dict[str, int] = dict(taken or {})
        """Elements pushed per input file (resolved path): a resumed run skips them."""
        self.kind: TimeKind | None = None
        """The inputs' kind of time, once an element has been read."""
        self.stopping = threading.Event()
        self._waiting: dict[str, deque[Sourced]] = {}
        self._seen: dict[str, int] = {}
        self._open: set[str] = set()
        self._saved_at = self.clock()
        self._arrived: dict[str, float] = {}
        """When each live input last brought an element (or the run began)."""
        self._latest: int | None = None
        """The latest element time seen on any input."""

    # --- the two loops ------------------------------------------------------------------
    def replay(self, inputs: Mapping[str, Iterable[Sourced]]) -> None:
        """Every input to its end at full speed, merged in time order."""
        merged = heapq.merge(*inputs.values(), key=lambda item: (item[0].end, item[0].start))
        with _Interrupts(self.stopping), sparse_collections():
            chunk: list[Sourced] = []
            for item in merged:
                if self.stopping.is_set() or self._past_until(item[0]):
                    break
                chunk.append(item)
                if len(chunk) == CHUNK:
                    self._push(chunk)
                    chunk = []
                    self._maybe_save()
            self._push(chunk)
        self._finish()

    def replay_columns(self, batches: Iterable[ColumnBatch]) -> None:
        """``replay`` for inputs read as columns (``column_batches``), a batch at a time."""
        with _Interrupts(self.stopping), sparse_collections():
            for batch in batches:
                if self.stopping.is_set():
                    break
                self.kind = self.kind or batch.kind
                until = self.feed.until
                cut = len(batch) if until is None else int(
                    np.searchsorted(batch.times, until, side="right"))
                self.write(self.session.push_columns(batch.slice(0, cut)))
                if cut < len(batch):
                    break
        self._finish()

    def live(self, inputs: Mapping[str, Iterable[Sourced]]) -> None:
        """Each input read by its own thread, merged in time order as elements arrive,
        until every input ends or the run is stopped."""
        arrivals: queue.Queue[tuple[str, str, Any]] = queue.Queue(maxsize=10_000)
        gc.collect()
        gc.freeze()  # start-up's objects (libraries, compiled queries, the background)
        # are left out of the oldest generation's collections: their pauses follow the state
        for iri, items in inputs.items():
            threading.Thread(target=_pump, args=(iri, items, arrivals), daemon=True).start()
        self._open = set(inputs)
        self._waiting = {iri: deque() for iri in inputs}
        self._arrived = dict.fromkeys(inputs, self.clock())
        with _Interrupts(self.stopping):
            while (self._open or any(self._waiting.values())) and not self.stopping.is_set():
                try:
                    self._take(_arrived(arrivals, self.feed.poll))
                except Exception:
                    self._release()  # what arrived before the error is not lost
                    raise
                if not self._release():
                    break  # past --until
                self._maybe_save()
        self._finish()

    def _take(self, arrivals: list[tuple[str, str, Any]]) -> None:
        for kind, iri, value in arrivals:
            if kind == "element":
                self._arrive(iri, value)
            elif kind == "end":
                self._open.discard(iri)
            elif kind == "error":
                raise value

    # --- live elements ----------------------------------------------------------------------
    def _arrive(self, iri: str, item: Sourced) -> None:
        element = item[0]
        self.kind = self.kind or element.kind
        if self.feed.wall_clock and element.kind is not TimeKind.DATETIME:
            raise ValueError("--wall-clock needs xsd:dateTime stream times (epoch milliseconds)")
        horizon = self.session.horizon
        if horizon is not None and element.time <= horizon:
            self._late(element, horizon)
            return
        self._waiting[iri].append(item)
        self._seen[iri] = element.time
        self._arrived[iri] = self.clock()
        self._latest = max(element.time, self._latest if self._latest is not None else element.time)

    def _release(self) -> bool:
        """Push, in time order, every waiting element that no open input can still precede:
        each open input with nothing waiting has shown a time at or after it (or, with the
        wall clock, the clock has passed it; an idle input holds nothing back). False once an
        element lies past ``until``."""
        now = self.clock()
        idle = self._idle(now)
        marks = [m for m in (self._clock(), self._idle_mark(now, idle)) if m is not None]
        mark = max(marks) if marks else None
        released: list[Sourced] = []
        while True:
            heads = [(q[0][0].end, q[0][0].start, iri) for iri, q in self._waiting.items() if q]
            if not heads:
                break
            t, _, iri = min(heads)
            quiet = [i for i in self._open if not self._waiting[i] and i not in idle]
            if any(self._seen.get(i, t - 1) < t for i in quiet) and (mark is None or t > mark):
                break
            item = self._waiting[iri].popleft()
            if self._past_until(item[0]):
                self._push(released)
                return False
            released.append(item)
        self._push(released)
        if mark is not None:
            self.write(self.session.watermark(mark))
        return True

    def _idle(self, now: float) -> set[str]:
        """The open inputs that brought nothing for ``idle_timeout`` seconds."""
        timeout = self.feed.idle_timeout
        if timeout is None:
            return set()
        return {i for i in self._open if now - self._arrived.get(i, now) >= timeout}

    def _idle_mark(self, now: float, idle: set[str]) -> int | None:
        """Once every open input is idle: the latest element's time, moved on by the clock
        since the timeout ran out (milliseconds)."""
        if self.feed.idle_timeout is None or self._latest is None or idle != self._open:
            return None
        if any(self._waiting.values()):
            return None
        quiet_since = max(self._arrived.values()) + self.feed.idle_timeout
        return self._latest + int((now - quiet_since) * 1000)

    def _clock(self) -> int | None:
        """With the wall clock (and dateTime times): now minus the allowed lateness, past
        which no element may come any more."""
        if not self.feed.wall_clock or self.kind is not TimeKind.DATETIME:
            return None
        return int(time.time() * 1000) - self.feed.read.allowed_lateness - 1

    def _late(self, element: StreamElement, horizon: int) -> None:
        why = "--idle-timeout" if self.feed.idle_timeout is not None else "--wall-clock"
        reason = f"late: stamped {element.time}, the clock is past {horizon} ({why}, "
        reason += f"allowed lateness {self.feed.read.allowed_lateness})"
        if self.feed.read.on_error == "stop":
            raise LateElement(f"element {element.graph} of <{element.stream}>: {reason}")
        if self.feed.read.errors is not None:
            self.feed.read.errors(StreamError(element.stream, 0, element.graph, reason))

    # --- every element ----------------------------------------------------------------------
    def _push(self, items: list[Sourced]) -> None:
        """Elements read (in time order) into the session at once (``Session.push_many``:
        one batch of columns on the columnar core, so a backlog costs one step)."""
        if not items:
            return
        if self.kind is None:
            self.kind = items[0][0].kind
        self.write(self.session.push_many([element for element, _ in items]))
        for _, key in items:
            if key != STDIN:
                self.taken[key] = self.taken.get(key, 0) + 1

    def _past_until(self, element: StreamElement) -> bool:
        return self.feed.until is not None and element.time > self.feed.until

    # --- stopping -------------------------------------------------------------------------
    def _finish(self) -> None:
        """The input ended (flush) or is paused (with a snapshot file: save, no flush)."""
        if self.feed.snapshot is not None:
            self._save()
            return
        self._open = set()  # the input ends: what waits goes in, in time order
        self._release()
        self.write(self.session.flush(self.feed.until))

    def _maybe_save(self) -> None:
        every = self.feed.snapshot_every
        if every is not None and self.clock() - self._saved_at >= every:
            self._save()

    def _save(self) -> None:
        """The session's state and the count of elements it took from each file. Elements
        read but still waiting for the other inputs are in neither: a resumed run reads
        them again (from a file; standard input cannot be read again)."""
        if self.feed.snapshot is not None:
            self.session.save(self.feed.snapshot, self.taken)
            self._saved_at = self.clock()


class _Interrupts:
    """Ctrl-C asks the loop to stop after the element in hand (state stays whole); a second
    one interrupts at once. Only the main thread can take signals."""

    def __init__(self, stopping: threading.Event) -> None:
        self.stopping = stopping
        self.previous: Any = None

    def __enter__(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._stop)

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)

    def _stop(self, signum: int, frame: object) -> None:
        if self.stopping.is_set():
            raise KeyboardInterrupt
        self.stopping.set()


def _arrived(arrivals: queue.Queue, poll: float) -> list[tuple[str, str, Any]]:
    """The next arrival (a tick after ``poll`` seconds of silence) and all that came with
    it, up to ``CHUNK``: a backlog is released as one push, so an engine that falls behind
    catches up in larger batches instead of falling further behind."""
    try:
        taken = [arrivals.get(timeout=poll)]
    except queue.Empty:
        return [("tick", "", None)]
    while len(taken) < CHUNK:
        try:
            taken.append(arrivals.get_nowait())
        except queue.Empty:
            break
    return taken


def _pump(iri: str, items: Iterable[Sourced], arrivals: queue.Queue) -> None:
    """A reader thread: every element of one input into the queue, then its end (or the
    error that stopped it)."""
    try:
        for item in items:
            arrivals.put(("element", iri, item))
    except Exception as error:  # handed to the main thread, which raises it
        arrivals.put(("error", iri, error))
    arrivals.put(("end", iri, None))
