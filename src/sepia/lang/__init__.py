"""The query language front end: text -> syntax tree (lark, with spans) -> one algebra.

``parse_query`` accepts every dialect of spec/language.md and returns a
``sepia.algebra.Query``; anything wrong is a ``QueryError`` with line, column, the offending
text, what was expected and a caret under the query line.
"""

from __future__ import annotations

from sepia.algebra.query import Query
from sepia.lang.context import Context
from sepia.lang.errors import QueryError
from sepia.lang.lowering import lower
from sepia.lang.parser import parse_tree


def parse_query(text: str, *, source: str = "<query>") -> Query:
    """Compile query text into the algebra, or raise QueryError before any data is read."""
    tree = parse_tree(text, source)
    return lower(tree, Context(text, source))


__all__ = ["QueryError", "parse_query"]
