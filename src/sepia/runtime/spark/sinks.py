"""Where result rows go: a ledgered writer in the driver, Spark's file sink, memory for tests.

`ResultJournal` is a `foreachBatch` function. Each micro-batch's rows are sorted into the
reference evaluator's order and written through one `sepia.io` writer; then a small ledger
(`JOURNAL/ledger.json`, written to a temporary name and renamed) records the batch id, the
output's length after it and the writer's progress (a CSV header written, TriG graphs
numbered). That is all exactly-once needs, so the journal stays the same size however long
the run: a batch Spark replays after a crash has an id the ledger already holds and is
skipped; a batch cut short by the crash left bytes past the recorded length, which a
restarted run cuts off before it writes on. Spark's checkpoint keeps batch ids and their
input stable across restarts, so an output file ends identical to an uninterrupted run's in
every format. Standard output cannot be rewound: after a restart it continues with the
batches not yet in the ledger (a batch printed when the driver died is printed again).
When the reader of standard output goes away (`sepia run ... | head`), the journal stops
writing and says so (`reader_gone`); the driver then stops the query (run.py).

`DeadLetterFile` does the same for `--dead-letter`: the workers leave each document's
rejected text in a file of its own (`ingest.dead_letter_part`); after each batch the driver
appends the new ones to the user's file and lists them in an index, from which a restarted
run rebuilds the file.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming import DataStreamWriter

from sepia.io.writers import JsonlWriter, ResultWriter, writer_for
from sepia.rdf.results import result_from_json
from sepia.rdf.time import TimeKind
from sepia.runtime.spark.host import RESULT_ORDER
from sepia.runtime.spark.ingest import DEAD_LETTER_SUFFIX


def sorted_lines(frame: DataFrame) -> list[str]:
    """A batch's jsonl lines, ordered by t, then query, partition (null first: a unit
    without PARTITION BY), the engine's order, and the line (`host.RESULT_ORDER`).
    Collected as Arrow and sorted there (a stable sort, as Python's): collected as pickled
    Rows and sorted by a Python key, W1's 87,115 results at 300,000 elements took 1.6 s of
    the driver's CPU."""
    table = frame.select(*RESULT_ORDER).toArrow()
    table = table.append_column("keyed", pc.is_valid(table.column("partition")))
    names = [*RESULT_ORDER[:2], "keyed", *RESULT_ORDER[2:]]
    order = pc.sort_indices(table, sort_keys=[(name, "ascending") for name in names])
    return table.column("line").take(order).to_pylist()


def dated(line: str) -> bool:
    """Whether a jsonl line's time `t` is a dateTime (a JSON string), not a number. Its
    first member is the query's name, a JSON string in which every quote is escaped, so the
    first `, "t": ` is the member's own."""
    return line[line.index(', "t": ') + 7] == '"'


@dataclass(frozen=True, slots=True)
class Ledger:
    """The last batch written, and where its output ended."""

    batch: int = -1
    length: int = 0
    """Bytes of the output file after the batch (0 for standard output)."""
    kind: str | None = None
    """The results' kind of time, once a result was written (`TimeKind` value)."""
    writer: dict[str, Any] = field(default_factory=dict)
    """The writer's `progress()` after the batch."""

    @classmethod
    def load(cls, path: Path) -> Ledger:
        return cls(**json.loads(path.read_text(encoding="utf-8"))) if path.exists() else cls()

    def save(self, path: Path) -> None:
        partial = path.with_suffix(".tmp")
        partial.write_text(json.dumps(asdict(self)), encoding="utf-8")
        partial.rename(path)


class ResultJournal:
    """foreachBatch sink: each batch's results written once, then noted in the ledger."""

    def __init__(
        self,
        journal: Path,
        output: str = "-",
        fmt: str | None = None,
        variables: list[str] | None = None,
        prefixes: Mapping[str, str] | None = None,
    ) -> None:
        """`prefixes`: the queries' own, for writers that shorten IRIs (a table), as a
        local run's writer gets them."""
        journal.mkdir(parents=True, exist_ok=True)
        self.path = journal / "ledger.json"
        self.ledger = Ledger.load(self.path)
        self.fmt = fmt
        self.variables = variables
        self.prefixes = prefixes
        self.out: TextIO = sys.stdout if output == "-" else _continued(Path(output), self.ledger)
        self.writer: ResultWriter | None = None
        if self.ledger.kind is not None:
            self._start(TimeKind(self.ledger.kind)).resume(self.ledger.writer)
        self.written: dict[int, int] = {}
        """Result rows written per batch id, until `results_of` reads them (progress)."""
        self.reader_gone = False
        """The output was a pipe whose reader closed it: nothing more is written."""

    def __call__(self, frame: DataFrame, batch_id: int) -> None:
        if self.reader_gone:
            return
        if batch_id <= self.ledger.batch:
            # written before a restart: run the batch all the same (to a sink that drops
            # it), since Spark only commits the batch's state once every partition has run
            frame.write.format("noop").mode("append").save()
            return
        lines = sorted_lines(frame)
        self.written[batch_id] = len(lines)
        try:
            self._write(lines)
            self.out.flush()
        except BrokenPipeError:  # raised here, it would leave Spark waiting on this call
            self.reader_gone = True
            return
        length = 0
        if self.out is not sys.stdout:
            os.fsync(self.out.fileno())
            length = os.fstat(self.out.fileno()).st_size
        kind = self.writer.kind.value if self.writer else None
        progress = self.writer.progress() if self.writer else {}
        self.ledger = Ledger(batch_id, length, kind, progress)
        self.ledger.save(self.path)

    def results_of(self, batch_id: int) -> int | None:
        """The result rows batch `batch_id` wrote in this run (None: a replay, or unknown)."""
        return self.written.pop(batch_id, None)

    def _start(self, kind: TimeKind) -> ResultWriter:
        fmt = self.fmt or ("table" if self.out.isatty() else "jsonl")
        self.writer = writer_for(fmt, self.out, time_kind=kind, variables=self.variables,
                                 prefixes=self.prefixes)  # fmt: skip
        return self.writer

    def _write(self, lines: list[str]) -> None:
        if not lines:
            return
        if self.writer is None:
            self._start(TimeKind.DATETIME if dated(lines[0]) else TimeKind.ABSTRACT)
        assert self.writer is not None
        if isinstance(self.writer, JsonlWriter):
            self._write_jsonl(lines, self.writer)
        else:
            for line in lines:
                self.writer.write(result_from_json(json.loads(line)))
        self.writer.close()  # writes out a buffered evaluation; the stream stays open

    def _write_jsonl(self, lines: list[str], writer: JsonlWriter) -> None:
        """jsonl lines as they are where their time is of the writer's kind: the host made
        them with the writer's own `jsonl_line`, so reading each back into a result and
        writing it again (W1: 3 s of 6 in the driver at 300,000 elements) gives the same
        text; a line of the other kind is written through the writer, as before."""
        kind = writer.kind is TimeKind.DATETIME
        for line in lines:
            if dated(line) is kind:
                writer.out.write(line + "\n")
            else:
                writer.write(result_from_json(json.loads(line)))

    def close(self) -> None:
        if self.out is not sys.stdout:
            self.out.close()


def _continued(path: Path, ledger: Ledger) -> TextIO:
    """The output file to write on: new, or cut back to where the ledger's batch ended."""
    if ledger.batch < 0:
        return path.open("w", encoding="utf-8")
    size = path.stat().st_size if path.exists() else -1
    if size < ledger.length:
        raise ValueError(
            f"{path}: the output of the checkpoint's run is shorter than the {ledger.length} "
            "bytes it wrote (moved or edited?); restore it, or start a new run without "
            "that --checkpoint"
        )
    os.truncate(path, ledger.length)
    return path.open("a", encoding="utf-8")


class DeadLetterFile:
    """The run's dead-letter file, gathered from the parts the workers wrote into `parts`."""

    def __init__(self, parts: Path, target: Path) -> None:
        parts.mkdir(parents=True, exist_ok=True)
        self.parts = parts
        self.index = parts / "gathered.txt"
        self.gathered = self.index.read_text().split() if self.index.exists() else []
        self.out = target.open("wb")
        for name in self.gathered:
            self.out.write((parts / name).read_bytes())
        self.out.flush()

    def gather(self) -> None:
        """Append the parts written since the last call (call it once a batch has run)."""
        done = set(self.gathered)
        new = [p for p in self.parts.glob(f"*{DEAD_LETTER_SUFFIX}") if p.name not in done]
        for part in sorted(new, key=lambda p: (p.stat().st_mtime_ns, p.name)):
            self.out.write(part.read_bytes())
            self.gathered.append(part.name)
        if new:
            self.out.flush()
            partial = self.index.with_suffix(".tmp")
            partial.write_text("".join(name + "\n" for name in self.gathered))
            partial.rename(self.index)

    def close(self) -> None:
        self.out.close()


def file_sink(results: DataFrame, path: Path, checkpoint: Path) -> DataStreamWriter:
    """Spark's own file sink: the jsonl lines as text files under `path`, exactly-once through
    its `_spark_metadata` log (read them back with `spark.read.text(path)`; files are not
    ordered by t). Set a trigger if needed, then `start()`."""
    return (
        results.select("line")
        .writeStream.format("text")
        .option("path", str(path))
        .option("checkpointLocation", str(checkpoint))
    )


def kafka_records(results: DataFrame) -> DataFrame:
    """The result rows as Kafka records: key = the query's name (a consumer can follow one
    query, and each query's results stay in one partition, in order), value = the jsonl
    line."""
    return results.select(
        F.col("query").alias("key"),
        F.col("line").alias("value"),
    )


def kafka_sink(results: DataFrame, servers: str, topic: str, checkpoint: Path) -> DataStreamWriter:
    """Spark's Kafka sink (the connector Sepia's Kafka source needs too, `--packages`): each
    result a record of `topic` on the brokers `servers` (`host:port,...`). At-least-once,
    as Kafka's sink is: after a crash the replayed batch's records are sent again (consumers
    keep the last line per (query, t, binding)). Set a trigger if needed, then `start()`."""
    return (
        kafka_records(results)
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("topic", topic)
        .option("checkpointLocation", str(checkpoint))
    )


def memory_sink(results: DataFrame, name: str) -> DataStreamWriter:
    """An in-memory table `name` of the result rows (tests, notebooks); then `start()`."""
    return results.writeStream.format("memory").queryName(name).outputMode("append")
