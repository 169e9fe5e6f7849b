"""C-SPARQL's registration: ``REGISTER QUERY name AS`` and ``REGISTER STREAM name AS``.

Its other constructs are shared: ``FROM STREAM <s> [spec]`` (a window merged into the
default graph, :mod:`sepia.lang.streams`) and ``timestamp(?s, ?p, ?o)`` (a builtin).
"""

from __future__ import annotations

import pyoxigraph as ox
from lark import Token, v_args

from sepia.algebra.query import Registration, RegistrationKind
from sepia.lang.context import Context


class CsparqlRules:
    """Transformer methods for C-SPARQL's REGISTER forms."""

    ctx: Context

    @v_args(inline=True)
    def register_query(
        self, _register: Token, _query: Token, name: str, _as: Token
    ) -> Registration:
        self.ctx.features.add("register-csparql")
        return Registration(RegistrationKind.QUERY, name)

    @v_args(inline=True)
    def register_stream(
        self, _register: Token, _stream: Token, name: str, _as: Token
    ) -> Registration:
        self.ctx.features.add("register-csparql")
        return Registration(RegistrationKind.STREAM, name)

    @v_args(inline=True)
    def reg_name(self, name: Token | ox.NamedNode) -> str:
        return name.value if isinstance(name, ox.NamedNode) else str(name)
