"""From query text to the syntax tree: lark's LALR parser over ``sepia.lark``.

The syntax tree is lark's ``Tree`` with source spans (``meta.line``, ``meta.column``,
``meta.start_pos``, ``meta.end_pos``); it never evaluates anything. Parse failures become a
``QueryError`` that names the offending token and the tokens the grammar expected there.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import cache
from importlib.resources import files

from lark import Lark, Tree, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from sepia.lang.errors import QueryError, span_at

_READABLE = {
    "IRIREF": "an IRI",
    "PNAME_LN": "a prefixed name",
    "PNAME_NS": "a prefixed name",
    "VAR1": "a variable",
    "VAR2": "a variable",
    "NAME": "a name",
    "INTEGER": "an integer",
    "DECIMAL": "a number",
    "DOUBLE": "a number",
    "STRING_LITERAL1": "a string",
    "STRING_LITERAL2": "a string",
    "DURATION_SHORT": "a duration",
    "DURATION_ISO": "a duration",
    "TIME_UNIT": "a time unit",
    "NIL": "'()'",
    "ANON": "'[]'",
    "BLANK_NODE_LABEL": "a blank node",
    "SEQ_OPEN": "'SEQ('",
    "SEQ_ANY": "':'",
    "SEQ_STRICT": "','",
    "SEQ_NEXT": "';'",
    "COMPARATOR": "a comparison",
    "LANGTAG": "a language tag",
    "STRING_LITERAL_LONG1": "a string",
    "STRING_LITERAL_LONG2": "a string",
    **{
        f"{kind}_{sign}": "a number"
        for kind in ("INTEGER", "DECIMAL", "DOUBLE")
        for sign in ("POSITIVE", "NEGATIVE")
    },
}
_UNSUPPORTED = {
    "SERVICE": "SERVICE is not supported: a query never reaches the network",
    "LOAD": "LOAD is not supported: a query never reaches the network; pass graphs with --data",
}
_UPDATE_WORDS = ("INSERT", "DELETE", "CLEAR", "DROP", "CREATE", "COPY", "MOVE", "ADD", "WITH")


@cache
def grammar() -> Lark:
    """The LALR parser, built once per process (about 0.3 s)."""
    text = files("sepia.lang").joinpath("sepia.lark").read_text(encoding="utf-8")
    return Lark(
        text,
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=False,
        cache=True,
    )


def parse_tree(text: str, source: str = "<query>") -> Tree:
    """The syntax tree of ``text``, or a QueryError pointing at the first thing that is wrong."""
    try:
        return grammar().parse(text)
    except UnexpectedInput as error:
        raise _query_error(error, text, source) from None


def _query_error(error: UnexpectedInput, text: str, source: str) -> QueryError:
    end = len(text.rstrip())
    if isinstance(error, UnexpectedEOF) or (
        isinstance(error, UnexpectedToken) and error.token.type == "$END"
    ):
        expected = error.expected if isinstance(error, UnexpectedEOF) else error.accepts
        return QueryError(
            "unexpected end of query",
            text,
            span_at(text, end, end),
            source=source,
            expected=_expected(expected),
        )
    if isinstance(error, UnexpectedToken):
        token = error.token
        start = token.start_pos if token.start_pos is not None else len(text)
        span = span_at(text, start, start + len(token))
        word = str(token).upper()
        if word in _UNSUPPORTED or token.type == "SERVICE":
            return QueryError(
                _UNSUPPORTED.get(word, _UNSUPPORTED["SERVICE"]), text, span, source=source
            )
        if word in _UPDATE_WORDS:
            return QueryError(
                f"SPARQL Update ({word}) is not supported: Sepia runs queries",
                text,
                span,
                source=source,
            )
        return QueryError(
            f"unexpected '{token}'", text, span, source=source, expected=_expected(error.expected)
        )
    assert isinstance(error, UnexpectedCharacters)
    position: int = error.pos_in_stream  # type: ignore[assignment]  # always set on this error
    span = span_at(text, position, position + 1)
    return QueryError(
        f"unexpected character {text[position]!r}",
        text,
        span,
        source=source,
        expected=_expected(error.allowed),
    )


def _expected(names: Collection[str] | None) -> str | None:
    """The grammar's expected terminals as a person reads them, e.g. "'{', WHERE or FROM"."""
    if not names:
        return None
    parser = grammar()
    readable = set()
    for name in names:
        if name == "$END":
            readable.add("end of query")
        elif name in _READABLE:
            readable.add(_READABLE[name])
        else:
            pattern = parser.get_terminal(name).pattern
            readable.add(f"'{pattern.value}'" if pattern.type == "str" else name)
    ordered = sorted(readable, key=lambda r: (r.startswith("'"), r))
    if len(ordered) > 12:
        ordered = [*ordered[:12], "..."]
    return ", ".join(ordered[:-1]) + " or " + ordered[-1] if len(ordered) > 1 else ordered[0]
