"""Where result rows go: a journaled writer in the driver, Spark's file sink, memory for tests.

`ResultJournal` is a `foreachBatch` function. Each micro-batch's rows are sorted into the
reference evaluator's order and saved as `JOURNAL/<batch id>.jsonl` (written to a temporary
name, then renamed) before they reach the writer. A batch Spark replays after a crash finds
its journal file and is skipped, so every batch is written once: exactly-once per batch id,
which Spark's checkpoint keeps stable across restarts. An output file is rebuilt from the
journal when the run (re)starts, then extended batch by batch through one `sepia.io`
writer, so it ends identical to an uninterrupted run's in every format. Standard output
cannot be rewound: after a restart it continues with the batches not yet journaled.

`DeadLetterFile` does the same for `--dead-letter`: the workers leave each document's
rejected text in a file of its own (`ingest.dead_letter_part`); after each batch the driver
appends the new ones to the user's file and lists them in an index, from which a restarted
run rebuilds the file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from pyspark.sql import DataFrame
from pyspark.sql.streaming import DataStreamWriter

from sepia.io.writers import ResultWriter, writer_for
from sepia.rdf.results import result_from_json
from sepia.rdf.time import TimeKind
from sepia.runtime.spark.host import RESULT_ORDER
from sepia.runtime.spark.ingest import DEAD_LETTER_SUFFIX


def sorted_lines(frame: DataFrame) -> list[str]:
    """A batch's jsonl lines, ordered by t, then query, partition, and the engine's order."""
    rows = frame.select(*RESULT_ORDER, "line").collect()
    return [row.line for row in sorted(rows, key=lambda r: tuple(_order(v) for v in r[:4]))]


def _order(value: object) -> tuple[bool, object]:
    return (value is not None, value)  # null partitions (no PARTITION BY) first


class ResultJournal:
    """foreachBatch sink: journal each batch once, then hand its results to a writer."""

    def __init__(
        self,
        journal: Path,
        output: str = "-",
        fmt: str | None = None,
        variables: list[str] | None = None,
    ) -> None:
        self.journal = journal
        self.journal.mkdir(parents=True, exist_ok=True)
        self.output = output
        self.fmt = fmt
        self.variables = variables
        self.out: TextIO = (
            sys.stdout if output == "-" else Path(output).open("w", encoding="utf-8")  # noqa: SIM115  (closed by close())
        )
        self.writer: ResultWriter | None = None
        self.written: dict[int, int] = {}
        """Result rows written per batch id by this run (progress reports read them)."""
        if output != "-":
            for path in sorted(self.journal.glob("*.jsonl")):
                self._write(path.read_text(encoding="utf-8").splitlines())

    def __call__(self, frame: DataFrame, batch_id: int) -> None:
        target = self.journal / f"{batch_id:012d}.jsonl"
        if target.exists():
            # written before a restart: run the batch all the same (to a sink that drops
            # it), since Spark only commits the batch's state once every partition has run
            frame.write.format("noop").mode("append").save()
            return
        lines = sorted_lines(frame)
        self.written[batch_id] = len(lines)
        partial = target.with_suffix(".tmp")
        partial.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        partial.rename(target)
        self._write(lines)

    def _write(self, lines: list[str]) -> None:
        results = [result_from_json(json.loads(line)) for line in lines]
        if not results:
            return
        if self.writer is None:
            kind = TimeKind.DATETIME if isinstance(json.loads(lines[0])["t"], str) else None
            fmt = self.fmt or ("table" if self.out.isatty() else "jsonl")
            self.writer = writer_for(
                fmt, self.out, time_kind=kind or TimeKind.ABSTRACT, variables=self.variables
            )
        for result in results:
            self.writer.write(result)
        self.writer.close()  # writes out a buffered evaluation; the stream stays open

    def close(self) -> None:
        if self.out is not sys.stdout:
            self.out.close()


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


def memory_sink(results: DataFrame, name: str) -> DataStreamWriter:
    """An in-memory table `name` of the result rows (tests, notebooks); then `start()`."""
    return results.writeStream.format("memory").queryName(name).outputMode("append")
