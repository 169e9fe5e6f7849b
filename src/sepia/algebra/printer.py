"""Print an algebra tree: as an S-expression (tests compare these strings), as an indented
tree for people (``sepia explain``) and as JSON for tools (``sepia explain --format json``).

All three walk the dataclass fields generically, so a new node type prints without code here.
Operators (patterns, events, streaming operators) become lines of the tree; their operands
that are not operators (terms, triples, expressions, paths, window specs) print inline.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Iterator
from typing import Any

from sepia.algebra import dataset, event, pattern, query, report
from sepia.algebra.terms import TERM_TYPES, term_text

_OPERATOR_MODULES = tuple(m.__name__ for m in (pattern, event, query, dataset, report))
_INLINE = (pattern.TriplePattern, pattern.AggregateBinding, pattern.OrderCondition)


def tag(node: object) -> str:
    """The S-expression head of a node: its class name in kebab case (SeqRightJoin ->
    seq-right-join)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "-", type(node).__name__).lower()


def to_sexpr(value: object, prefixes: dict[str, str] | None = None) -> str:
    """The S-expression of a node or a field value: ``(seq (event ...) (event ...) naive)``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = [tag(value)] + [to_sexpr(v, prefixes) for _, v in _fields(value)]
        return "(" + " ".join(parts) + ")"
    if isinstance(value, tuple):
        return "(" + " ".join(to_sexpr(v, prefixes) for v in value) + ")"
    return _atom(value, prefixes)


def _atom(value: object, prefixes: dict[str, str] | None) -> str:
    if isinstance(value, TERM_TYPES):
        return term_text(value, prefixes)
    if isinstance(value, enum.Enum):
        return str(value.value)
    if value is None:
        return "_"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if re.fullmatch(r"[\w:.-]+", value) else '"' + value.replace('"', r'\"') + '"'
    return str(value)


def _fields(node: object) -> Iterator[tuple[str, Any]]:
    """Fields in declaration order, leaving out defaults that carry no information
    (the prefixes table of a query)."""
    for f in dataclasses.fields(node):  # type: ignore[arg-type]
        if f.compare:
            yield f.name, getattr(node, f.name)


def _is_operator(value: object) -> bool:
    return (
        dataclasses.is_dataclass(value)
        and type(value).__module__ in _OPERATOR_MODULES
        and not isinstance(value, _INLINE)
    )


def to_tree(node: object, prefixes: dict[str, str] | None = None) -> str:
    """An indented tree: one operator per line, its plain fields after its name."""
    return "\n".join(_tree_lines(node, prefixes, "", ""))


def _tree_lines(node: object, prefixes: dict[str, str] | None, indent: str,
                label: str) -> Iterator[str]:
    inline, children = [], []
    for name, value in _fields(node):
        if _is_operator(value):
            children.append((name, value))
        elif isinstance(value, tuple) and value and all(_is_operator(v) for v in value):
            children.extend((f"{name}[{i}]", v) for i, v in enumerate(value))
        elif isinstance(value, tuple) and value and all(
                isinstance(v, pattern.TriplePattern) for v in value):
            inline.append(f"{name}={{ {_triples_text(value, prefixes)} }}")
        elif value is not None and value != ():
            inline.append(f"{name}={to_sexpr(value, prefixes)}")
    yield indent + label + " ".join([type(node).__name__, *inline])
    for child_label, child in children:
        yield from _tree_lines(child, prefixes, indent + "  ", child_label + ": ")


def _triples_text(triples: tuple[pattern.TriplePattern, ...],
                  prefixes: dict[str, str] | None) -> str:
    """Triple patterns as SPARQL text, ``?s :p ?o . ?o :q ?v``."""
    return " . ".join(
        " ".join(term_text(t, prefixes) for t in (tp.subject, tp.predicate, tp.object))
        for tp in triples
    )


def to_json(value: object, prefixes: dict[str, str] | None = None) -> Any:
    """A JSON-ready value: nodes as objects with a ``type`` key, terms as SPARQL text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"type": type(value).__name__,
                **{name: to_json(v, prefixes) for name, v in _fields(value)}}
    if isinstance(value, tuple):
        return [to_json(v, prefixes) for v in value]
    if isinstance(value, TERM_TYPES):
        return term_text(value, prefixes)
    if isinstance(value, enum.Enum):
        return value.value
    return value
