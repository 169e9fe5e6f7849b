"""Lowering of terms: IRIs (prefixes, BASE), literals, numbers, blank nodes, variables.

SPARQL 1.1 sections 4.1 and 19.8 (rules 4-6 and 129-173). A prefix that no PREFIX line
declares is an error here, with a caret under the prefixed name.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

import pyoxigraph as ox
from lark import Token, v_args

from sepia.algebra.query import Entailment
from sepia.lang.context import Context
from sepia.rdf.vocabulary import RDF, XSD

DEFAULT_BASE = "file:///query.rq"
_STRING_ESCAPES = {
    "t": "\t",
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "f": "\f",
    '"': '"',
    "'": "'",
    "\\": "\\",
}
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)")
_LOCAL_ESCAPE = re.compile(r"\\([_~.\-!$&'()*+,;=/?#@%])")
_NUMBER_TYPES = {"integer": XSD + "integer", "decimal": XSD + "decimal", "double": XSD + "double"}


def _unescape(match: re.Match[str]) -> str:
    """One string escape (ECHAR) or codepoint escape (SPARQL 1.1, 19.2 and 19.7)."""
    code = match.group(1)
    return chr(int(code[1:], 16)) if len(code) > 1 else _STRING_ESCAPES[code]


class TermRules:
    """Transformer methods for the term rules of the grammar."""

    ctx: Context

    @v_args(inline=True)
    def base_decl(self, _keyword: Token, iri: Token) -> None:
        self.ctx.base = self._resolve(iri, iri[1:-1])

    @v_args(inline=True)
    def prefix_decl(self, _keyword: Token, name: Token, iri: Token) -> None:
        self.ctx.prefixes[str(name)[:-1]] = self._resolve(iri, iri[1:-1])

    @v_args(inline=True)
    def entailment_decl(self, _keyword: Token, choice: Token) -> None:
        self.ctx.entailment = Entailment(str(choice).lower())

    @v_args(inline=True)
    def iri(self, token: Token) -> ox.NamedNode:
        node = self._iri(token)
        self.ctx.iri_spans.setdefault(node.value, []).append(self.ctx.span(token))
        return node

    def _iri(self, token: Token) -> ox.NamedNode:
        if token.type == "IRIREF":
            return ox.NamedNode(self._resolve(token, _ESCAPE.sub(_unescape, token[1:-1])))
        prefix, _, local = str(token).partition(":")
        if prefix not in self.ctx.prefixes:
            self.ctx.fail(
                token,
                f"undeclared prefix '{prefix}:'",
                expected=f"a declaration 'PREFIX {prefix}: <...>' before it is used",
            )
        return self._named(token, self.ctx.prefixes[prefix] + _LOCAL_ESCAPE.sub(r"\1", local))

    def _resolve(self, token: Token, reference: str) -> str:
        try:
            absolute = urljoin(self.ctx.base or DEFAULT_BASE, reference)
        except ValueError as error:
            self.ctx.fail(token, f"invalid IRI <{reference}>: {error}")
        return self._named(token, absolute).value

    def _named(self, token: Token, value: str) -> ox.NamedNode:
        try:
            return ox.NamedNode(value)
        except ValueError as error:
            self.ctx.fail(token, f"invalid IRI <{value}>: {error}")

    @v_args(inline=True)
    def var(self, token: Token) -> ox.Variable:
        return ox.Variable(token[1:])

    @v_args(inline=True)
    def string(self, token: Token) -> str:
        quote = 3 if token.type.startswith("STRING_LITERAL_LONG") else 1
        value = _ESCAPE.sub(_unescape, token[quote:-quote])
        if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            self.ctx.fail(
                token,
                "a codepoint escape names a surrogate, which is not a character",
                expected="a Unicode scalar value",
            )
        return value

    def rdf_literal(self, children: list) -> ox.Literal:
        value = children[0]
        if len(children) == 1:
            return ox.Literal(value)
        annotation = children[1]
        if isinstance(annotation, Token) and annotation.type == "LANGTAG":
            return ox.Literal(value, language=annotation[1:].lower())
        return ox.Literal(value, datatype=annotation)

    @v_args(inline=True)
    def integer(self, token: Token) -> ox.Literal:
        return ox.Literal(str(token), datatype=ox.NamedNode(_NUMBER_TYPES["integer"]))

    @v_args(inline=True)
    def decimal(self, token: Token) -> ox.Literal:
        return ox.Literal(str(token), datatype=ox.NamedNode(_NUMBER_TYPES["decimal"]))

    @v_args(inline=True)
    def double(self, token: Token) -> ox.Literal:
        return ox.Literal(str(token), datatype=ox.NamedNode(_NUMBER_TYPES["double"]))

    @v_args(inline=True)
    def boolean_literal(self, token: Token) -> ox.Literal:
        return ox.Literal(str(token).lower(), datatype=ox.NamedNode(XSD + "boolean"))

    @v_args(inline=True)
    def blank_node(self, token: Token) -> ox.BlankNode:
        if token.type == "ANON":
            return self.fresh_blank_node()
        return ox.BlankNode(token[2:])

    def fresh_blank_node(self) -> ox.BlankNode:
        """A blank node for ``[]``, ``[ ... ]`` and collections, distinct from written labels."""
        self.ctx.fresh_counter += 1
        return ox.BlankNode(f"sepia.{self.ctx.fresh_counter}")

    @v_args(inline=True)
    def graph_term(self, term: object) -> object:
        if isinstance(term, Token) and term.type == "NIL":
            return ox.NamedNode(RDF + "nil")
        return term

    @v_args(inline=True)
    def var_or_term(self, term: object) -> object:
        return term

    @v_args(inline=True)
    def var_or_iri(self, term: object) -> object:
        return term

    @v_args(inline=True)
    def data_value(self, value: object) -> object:
        return None if isinstance(value, Token) and value.type == "UNDEF" else value
