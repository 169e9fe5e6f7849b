"""Sepia: continuous SPARQL-family queries and complex event patterns over RDF streams.

The public Python API is this flat set; everything else is internal and may move.

    from sepia import Session, parse_query, read_stream
    session = Session()
    session.register(open("query.rq").read(), "q1")
    for element in read_stream("stream.trig", "http://example.org/s"):
        for result in session.push(element):
            print(result)
    print(session.flush())
"""

from importlib.metadata import version

from sepia.io.background import load_background
from sepia.io.results import Result
from sepia.io.streams import read_stream
from sepia.lang import QueryError, parse_query
from sepia.rdf.stream import StreamElement
from sepia.runtime.local import Session
from sepia.runtime.local import run as run_local
from sepia.semantics import evaluate as evaluate_reference

__version__ = version("sepia")

__all__ = [
    "QueryError",
    "Result",
    "Session",
    "StreamElement",
    "__version__",
    "evaluate_reference",
    "load_background",
    "parse_query",
    "read_stream",
    "run_local",
]
