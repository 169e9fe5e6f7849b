"""Sepia: continuous SPARQL-family queries and complex event patterns over RDF streams.

The public Python API is this flat set; everything else is internal and may move.

    from sepia import Session, read_stream
    session = Session(on_result=print)          # or read what push / flush return
    session.register(open("query.rq").read(), "q1")
    session.push_graph("http://example.org/s", 3, triples)     # a graph stamped 3
    session.attach(read_stream("stream.trig", "http://example.org/s"))
    for result in session:                      # attached readers, merged in time order
        ...

docs/engine.md ("Using it") has a runnable example; ``Unsupported`` names what the engine
cannot run, ``QueryError`` a bad query, ``StreamError`` bad stream input.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sepia.algebra.query import Unsupported
    from sepia.io.background import load_background
    from sepia.io.errors import StreamError
    from sepia.io.streams import read_stream
    from sepia.lang import QueryError, parse_query
    from sepia.rdf.results import Result
    from sepia.rdf.stream import StreamElement
    from sepia.rdf.time import TimeKind
    from sepia.runtime.local import Session
    from sepia.runtime.local import run as run_local
    from sepia.semantics import evaluate as evaluate_reference

_PUBLIC = {
    "Unsupported": ("sepia.algebra.query", "Unsupported"),
    "load_background": ("sepia.io.background", "load_background"),
    "StreamError": ("sepia.io.errors", "StreamError"),
    "read_stream": ("sepia.io.streams", "read_stream"),
    "QueryError": ("sepia.lang", "QueryError"),
    "parse_query": ("sepia.lang", "parse_query"),
    "Result": ("sepia.rdf.results", "Result"),
    "StreamElement": ("sepia.rdf.stream", "StreamElement"),
    "TimeKind": ("sepia.rdf.time", "TimeKind"),
    "Session": ("sepia.runtime.local", "Session"),
    "run_local": ("sepia.runtime.local", "run"),
    "evaluate_reference": ("sepia.semantics", "evaluate"),
}
"""The flat API, each name imported on first use: ``import sepia.anything`` runs this
module, and importing the whole API here cost every ``sepia`` process (and every Spark
worker) the engine, the reference evaluator and the compiler, ~0.6 s of CPU."""


def __getattr__(name: str) -> object:
    """The API's names and ``__version__`` (read from the installed metadata: importing
    ``importlib.metadata`` costs ~0.1 s), each on first use."""
    if name == "__version__":
        from importlib.metadata import version

        return version("sepia")
    if name in _PUBLIC:
        from importlib import import_module

        module, attribute = _PUBLIC[name]
        value = getattr(import_module(module), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'sepia' has no attribute {name!r}")

__all__ = [
    "QueryError",
    "Result",
    "Session",
    "StreamElement",
    "StreamError",
    "TimeKind",
    "Unsupported",
    "__version__",
    "evaluate_reference",
    "load_background",
    "parse_query",
    "read_stream",
    "run_local",
]
