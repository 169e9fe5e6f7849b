"""DESCRIBE: the concise bounded description of each resource (SPARQL 1.1 section 16.4
leaves the description to the implementation; docs/semantics.md says which Sepia gives).

The description of a resource r is every triple with r as subject, and recursively every
triple whose subject is a blank node object of a triple already taken: what pyoxigraph's
own DESCRIBE returns over a default graph (tests/semantics/test_describe.py compares
them), without reification. It is read over the dataset at the evaluation instant: the
query's default graph and every window's instantaneous graph. Written generically over
the term type, so that the reference (pyoxigraph terms) and the engine (dictionary ids) run
the same closure over their own graphs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")


def bounded_description(
    resources: Iterable[T],
    outgoing: Callable[[T], Iterable[tuple[T, T, T]]],
    blank: Callable[[T], bool],
) -> set[tuple[T, T, T]]:
    """The triples describing ``resources``: ``outgoing(node)`` gives the triples with
    ``node`` as subject; blank node objects are described in turn (each once)."""
    seen = set(resources)
    todo = list(seen)
    found: set[tuple[T, T, T]] = set()
    while todo:
        for triple in outgoing(todo.pop()):
            found.add(triple)
            node = triple[2]
            if blank(node) and node not in seen:
                seen.add(node)
                todo.append(node)
    return found
