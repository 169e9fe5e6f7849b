"""A stream file beside unrelated subfolders runs on Spark.

Spark's file source lists the whole folder of a file it reads and infers partitions from
its subfolders: a stream file in a home folder or the system's temporary folder failed with
a traceback, `[CONFLICTING_DIRECTORY_STRUCTURES]` listing the neighbours' paths. The run
reads each stream file through a link in a folder of its own; errors still name the file.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sepia.runtime.inputs import load_query
from sepia.runtime.spark.run import SparkRunError, run_on_spark

from ..evaluations import evaluations

pytestmark = pytest.mark.spark

E1 = Path(__file__).parents[4] / "examples" / "e1-shops-coupons"
STREAMS = {
    "http://example.org/nearby": "stream-nearby.trig",
    "http://example.org/coupons": "stream-coupons.trig",
}


def crowded(folder: Path) -> None:
    """Neighbours that make Spark's partition inference conflict: files at several depths,
    partition-like folder names."""
    for relative in ("year=2024/month=1/a.csv", "year=2025/b.csv", "docs/notes/c.txt", "d.txt"):
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("not a stream\n")


def test_stream_files_among_nested_folders_run(spark, tmp_path: Path) -> None:
    crowded(tmp_path)
    bindings = {}
    for iri, name in STREAMS.items():
        shutil.copy(E1 / name, tmp_path / name)
        bindings[iri] = str(tmp_path / name)
    out = tmp_path / "out.jsonl"
    query = load_query(E1 / "query.rq")
    run_on_spark([query], bindings, [(None, E1 / "background.ttl")], output=str(out),
                 spark=spark)  # fmt: skip
    expected = (E1 / "expected.jsonl").read_text().splitlines()
    assert evaluations(out.read_text().splitlines()) == evaluations(expected)


def test_an_error_names_the_file_not_its_link(spark, tmp_path: Path) -> None:
    crowded(tmp_path)
    bad = tmp_path / "bad.trig"
    bad.write_text("<http://e/g1> { <http://e/a> <http://e/p> <http://e/b> . }\n")
    bindings = {"http://example.org/nearby": str(bad), "http://example.org/coupons": str(bad)}
    with pytest.raises(SparkRunError, match=rf"{bad}.*no time|no time.*{bad}"):
        run_on_spark([load_query(E1 / "query.rq")], bindings, [(None, E1 / "background.ttl")],
                     output=str(tmp_path / "out.jsonl"), spark=spark)  # fmt: skip
