"""Data in and results out (io.md): stream readers, background loader, result writers."""

from sepia.io.background import load_background
from sepia.io.errors import InputError, StreamError
from sepia.io.streams import StreamReader, read_stream, read_stream_rows
from sepia.io.writers import WRITERS, ResultWriter, writer_for
from sepia.rdf.results import Result, read_results_jsonl

__all__ = [
    "WRITERS",
    "InputError",
    "Result",
    "ResultWriter",
    "StreamError",
    "StreamReader",
    "load_background",
    "read_results_jsonl",
    "read_stream",
    "read_stream_rows",
    "writer_for",
]
