"""`sepia compare --engine spark`: the queries run as Spark Structured Streaming jobs through
the runtime's Python API (``sepia.runtime.spark.api``), over the same elements the other
settings read.

Each stream's elements are written as the API's rows (one per triple: element, start, end,
s, p, o in N-Triples, kind, and file / seq to keep the order of equal times) into a folder
of JSON files a file source reads; each query is one ``continuous_query`` over them, run by
``run_to_end`` until its finite input has flushed, its results collected batch by batch.
The API takes a query's text: a setting that changes the compiled query (another axis)
cannot reach it, nor can ``--until``; those are refused with what to do.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyoxigraph as ox

from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import term_to_nt
from sepia.runtime.inputs import NamedQuery

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SCHEMA = (
    "element string, start bigint, end bigint, s string, p string, o string, kind string, "
    "file string, seq bigint"
)


def spark_results(
    queries: Sequence[NamedQuery],
    streams: Mapping[str, Sequence[StreamElement]],
    background: ox.Store | None,
    rdfs: bool = False,
) -> list[Result]:
    """Every result of the queries, each run as its own Spark job to the end of the input."""
    from pyspark.errors import StreamingQueryException
    from pyspark.sql import SparkSession

    from sepia.runtime.spark.session import SparkUnavailable, spark_session

    try:
        spark = SparkSession.getActiveSession() or spark_session()
        return _run(spark, queries, streams, background, rdfs)
    except (SparkUnavailable, StreamingQueryException) as error:
        raise SparkFailed(str(error).strip().splitlines()[0]) from error


class SparkFailed(RuntimeError):
    """Spark could not start, or a job failed (its first line says why)."""


def _run(
    spark: SparkSession,
    queries: Sequence[NamedQuery],
    streams: Mapping[str, Sequence[StreamElement]],
    background: ox.Store | None,
    rdfs: bool,
) -> list[Result]:
    from sepia.runtime.spark.api import continuous_query, each_batch, run_to_end

    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="sepia-compare-") as folder:
        home = Path(folder)
        rows = {iri: _rows_folder(home / f"stream-{n}", elements)
                for n, (iri, elements) in enumerate(streams.items())}  # fmt: skip
        for n, named in enumerate(queries):
            frames = {iri: spark.readStream.schema(SCHEMA).json(str(path))
                      for iri, path in rows.items()}  # fmt: skip
            end = home / f"end-{n}"
            found = continuous_query(
                spark, named.source.read_text(encoding="utf-8"), frames, background,
                name=named.name, rdfs=rdfs, end_of_input=end,
            )
            collect = each_batch(lambda batch, _: results.extend(batch))
            writer = found.writeStream.foreachBatch(collect)
            run_to_end(writer.option("checkpointLocation", str(home / f"checkpoint-{n}")), end)
    return results


def _rows_folder(folder: Path, elements: Sequence[StreamElement]) -> Path:
    """One JSON file of the API's rows for a stream's elements (an element without a triple
    has no row, so it cannot reach Spark)."""
    folder.mkdir(parents=True)
    lines = [
        json.dumps({
            "element": e.graph, "start": e.start, "end": e.end, "s": term_to_nt(t.subject),
            "p": term_to_nt(t.predicate), "o": term_to_nt(t.object), "kind": e.kind.value,
            "file": "elements", "seq": seq,
        })
        for seq, e in enumerate(elements)
        for t in e.triples
    ]
    (folder / "elements.json").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return folder
