"""`sepia run --engine local`: the in-process engine fed by the local runtime's driver.

Stream files and folders are replayed at full speed by default; `--follow` (or a stream read
from standard input, `--stream IRI=-`) runs live until the inputs end or Ctrl-C. Results are
written as they are made (the output is flushed after each batch). `--snapshot FILE` pauses
the input instead of ending it and saves the state there; `--restore FILE` resumes it
(sepia.runtime.local.feed says exactly how).
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from sepia.algebra.query import Entailment, Unsupported
from sepia.cli.app import err_console, fail
from sepia.cli.options import (
    EventPolicy,
    compile_queries,
    existing_paths,
    missing_file,
    split_binding,
    warn_unread,
)
from sepia.engine.background import loaded_for
from sepia.engine.query.snapshots import SnapshotError
from sepia.io.errors import InputError, StreamError
from sepia.io.writers import ResultWriter, writer_for
from sepia.rdf.results import Result
from sepia.rdf.time import TimeKind
from sepia.runtime.inputs import (
    InputBindingError,
    NamedQuery,
    background,
    bind_streams,
    projected_variables,
    query_prefixes,
)
from sepia.runtime.local import Session
from sepia.runtime.local.feed import (
    STDIN,
    Driver,
    Feed,
    LateElement,
    column_batches,
    input_files,
    sourced,
    stdin_elements,
)

_REFERENCE = "run it with --engine reference (the reference evaluator runs every query)"


@dataclass(frozen=True, slots=True)
class LocalRun:
    """The command line's choices for a local run."""

    queries: list[Path]
    stream: list[str]
    data: list[str]
    feed: Feed
    max_runs: int | None = None
    restore: Path | None = None
    event_policy: EventPolicy | None = None
    entailment: Entailment | None = None
    on_results: Callable[[list[Result]], None] | None = None
    """Also given every batch of results (`--timeline` draws them after the run)."""


def run_local(run: LocalRun, output: str, fmt: str | None) -> None:
    """Compile, bind, register (a query the engine cannot run fails here, code 3), restore,
    then drive the session and write its results as they come."""
    named = compile_queries(run.queries, run.event_policy, run.entailment)
    try:
        bindings = _bindings(named, run.stream)
        dataset = background(existing_paths(run.data), loaded_for(q.query for q in named))
    except (InputBindingError, InputError) as error:
        fail(str(error), getattr(error, "hint", None))
    session = Session(dataset, max_runs=run.max_runs)
    try:
        for query in named:
            session.register(query.query, query.name)
    except Unsupported as error:
        fail(f"the local engine cannot run this query yet: {error}", _REFERENCE, code=3)
    taken: dict[str, int] = {}
    if run.restore is not None:
        try:
            taken = session.load(run.restore)
        except (SnapshotError, ValueError, KeyError) as error:
            fail(f"cannot resume from {run.restore}: {error}")
    feed = run.feed
    if feed.read.on_error == "skip" and feed.read.errors is None:
        feed = _reporting(feed)
    with ExitStack() as stack:
        out: TextIO = (
            sys.stdout
            if output == "-"
            else stack.enter_context(Path(output).open("w", encoding="utf-8"))
        )
        sink = _Sink(
            out, fmt, projected_variables(named), query_prefixes(named), run.on_results
        )
        driver = Driver(session, sink.write, feed, taken)
        sink.driver = driver
        inputs = {
            iri: stdin_elements(iri, feed.read)
            if str(path) == STDIN
            else sourced(iri, input_files(path, feed.follow, driver.stopping, feed.poll),
                         feed.read, taken)
            for iri, path in bindings.items()
        }  # fmt: skip
        live = feed.follow or any(str(path) == STDIN for path in bindings.values())
        columns = None if live else column_batches(session, bindings, feed, taken)
        try:
            if columns is not None:
                driver.replay_columns(columns)
            else:
                driver.live(inputs) if live else driver.replay(inputs)
        except Unsupported as error:
            fail(f"the local engine cannot run this query yet: {error}", _REFERENCE, code=3)
        except (InputError, LateElement, ValueError) as error:
            sink.close()
            fail(str(error), getattr(error, "hint", None))
        finally:
            driver.stopping.set()
        sink.close()


def _bindings(named: list[NamedQuery], stream: list[str]) -> dict[str, Path]:
    """Stream IRI -> file, folder, or `-` (standard input)."""
    pairs = [split_binding(text) for text in stream]
    for _, path in pairs:
        if path != STDIN and not Path(path).exists():
            missing_file(path)
    bound = bind_streams(named, [(iri, Path(path)) for iri, path in pairs])
    warn_unread(named, bound)
    return bound


def _reporting(feed: Feed) -> Feed:
    """With --on-error skip, each skipped element is also reported on standard error."""

    def report(error: StreamError) -> None:
        err_console.print(f"skipped: {error}", markup=False, highlight=False)

    return replace(feed, read=replace(feed.read, errors=report))


class _Sink:
    """The result writer, made at the first result (when the inputs' kind of time is
    known); the output is flushed after each batch so a live run's results show at once."""

    def __init__(
        self,
        out: TextIO,
        fmt: str | None,
        variables: list[str] | None,
        prefixes: dict[str, str],
        tap: Callable[[list[Result]], None] | None = None,
    ) -> None:
        self.out = out
        self.prefixes = prefixes
        self.tap = tap
        self.fmt = fmt or ("table" if out.isatty() else "jsonl")
        self.variables = variables
        self.driver: Driver | None = None
        self.writer: ResultWriter | None = None
        try:
            writer_for(self.fmt, io.StringIO())  # a bad --format fails before any input
        except ValueError as error:
            fail(str(error), getattr(error, "hint", None))

    def write(self, results: list[Result]) -> None:
        if not results:
            return
        if self.tap is not None:
            self.tap(results)
        writer = self.writer or self._open()
        for result in results:
            writer.write(result)
        self.out.flush()

    def close(self) -> None:
        (self.writer or self._open()).close()

    def _open(self) -> ResultWriter:
        kind = (self.driver.kind if self.driver else None) or TimeKind.ABSTRACT
        try:
            self.writer = writer_for(self.fmt, self.out, time_kind=kind, variables=self.variables,
                                     prefixes=self.prefixes)
        except ValueError as error:
            fail(str(error), getattr(error, "hint", None))
        return self.writer
